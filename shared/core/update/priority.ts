// Update priority (§4.12; OpenKruise updateStrategy.priorityStrategy, pkg/util/updatesort/
// priority_sort.go): the order in which the rollout takes the pods the partition allows. Higher
// priority first; ties keep §4.4's order, highest ordinal first. The partition is untouched: it still
// selects by ordinal, priority only orders within what it selects.
import type { PriorityStrategy } from '../../api/neoset.ts';
import type { ObservedPod } from '../observed.ts';
import { selects } from '../selector.ts';

type Labels = Record<string, string> | undefined;

/** Kruise's getIntFromStringSuffix: the decimal digits that end the value ("db-10" → 10), 0 without any. */
export function orderSuffix(value: string): number {
  const digits = /(\d+)$/.exec(value)?.[1];
  if (digits === undefined) return 0;
  const n = Number(digits);
  // Kruise parses int64 and falls back to 0 when it overflows; beyond 2^53 order is approximate anyway.
  return Number.isSafeInteger(n) ? n : 0;
}

/**
 * The pod's priority as a tuple compared left to right, larger first. weightPriority: the sum of the
 * weights whose selector selects the pod. orderPriority: the first term whose key the pod carries
 * (earlier terms first), then the value's suffix. A pod with none of the keys goes last — Kruise puts
 * it first (its "no key" level -1 sorts below level 0); NeoSet departs: a pod nobody ranked has the
 * lowest priority, as a weight sum of 0 does.
 */
export function priorityOf(strategy: PriorityStrategy | undefined, labels: Labels): [number, number] {
  const weights = strategy?.weightPriority ?? [];
  if (weights.length > 0) return [weights.reduce((sum, t) => sum + (selects(t.matchSelector, labels) ? t.weight : 0), 0), 0];
  const order = strategy?.orderPriority ?? [];
  for (let i = 0; i < order.length; i++) {
    const value = labels?.[order[i].orderedKey];
    if (value !== undefined) return [order.length - i, orderSuffix(value)];
  }
  return [0, 0];
}

/** A comparator for Array.sort: the update order of §4.4 and §4.12 (priority, then highest ordinal). */
export function updateOrder(strategy: PriorityStrategy | undefined): (a: ObservedPod, b: ObservedPod) => number {
  const memo = new Map<ObservedPod, [number, number]>();
  const rank = (v: ObservedPod) => {
    let r = memo.get(v);
    if (!r) memo.set(v, (r = priorityOf(strategy, v.pod.metadata.labels)));
    return r;
  };
  return (a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    return rb[0] - ra[0] || rb[1] - ra[1] || b.ordinal - a.ordinal;
  };
}
