// Update priority between two observed states (§4.12, OpenKruise priorityStrategy), written from the
// SPEC's words and Kruise's pkg/util/updatesort/priority_sort.go, not from shared/core:
//
//   Priority  among the pods the partition allows, higher priority first, ties highest ordinal first.
//             So an update that starts on an available pod P while an available pod Q that the
//             rollout wants — above both states' partitions, not on the update revision, with no
//             update in flight, hooks or claim — ranks before P in both states' order and does not
//             start, is out of order: P took the budget slot that was Q's. (A pod that is already
//             unavailable costs no slot when it starts, §4.4, so it may go past an available one.)
//             Ties — §4.4's highest ordinal first — are not judged here: the oracle never judged
//             that order, and its hand-built cases start pods out of it to isolate other rules.
//
// Rank: weightPriority — the sum of the weights whose matchSelector selects the pod's labels;
// orderPriority — the index of the first term whose key the pod carries (earlier first), then the
// integer that ends its value (larger first); a pod with none of the keys after all that have one.
import { KIND } from '../../shared/api/names.ts';
import type { LabelSelector, NeoSet } from '../../shared/api/neoset.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { belowPartition, inRange } from './ordinals.ts';
import { claimed } from './update-claims.ts';
import type { Report } from './types.ts';
import { inHooks, type PodFacts, type View } from './view.ts';

type Strategy = NeoSet['spec']['updateStrategy']['priorityStrategy'];

function matches(selector: LabelSelector, labels: Record<string, string>): boolean {
  const pairs = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => k in labels && labels[k] === v);
  return pairs && (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (operator === 'Exists') return key in labels;
    if (operator === 'DoesNotExist') return !(key in labels);
    const inValues = key in labels && values.includes(labels[key]);
    return operator === 'In' ? inValues : !inValues;
  });
}

function trailingInt(value: string): number {
  let i = value.length;
  while (i > 0 && value[i - 1] >= '0' && value[i - 1] <= '9') i--;
  const n = i === value.length ? 0 : Number(value.slice(i));
  return Number.isSafeInteger(n) ? n : 0;
}

/** A list of numbers compared left to right, larger first. */
function rank(strategy: Strategy, pod: Pod): number[] {
  const labels = pod.metadata.labels ?? {};
  if (strategy?.weightPriority?.length) {
    let sum = 0;
    for (const term of strategy.weightPriority) if (matches(term.matchSelector, labels)) sum += term.weight;
    return [sum];
  }
  const terms = strategy?.orderPriority ?? [];
  const level = terms.findIndex((t) => t.orderedKey in labels);
  return level < 0 ? [-terms.length - 1, 0] : [-level, trailingInt(labels[terms[level].orderedKey])];
}

function ranksBefore(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}

/** `started`: the pods whose update starts between the states (starts.ts), unclaimed and not rescue-eligible. */
export function priorityInvariants(prev: View, now: View, started: PodFacts[], report: Report): void {
  const moves = (v: View) => v.strategy === 'InPlaceIfPossible' || v.strategy === 'ReCreate';
  if (!moves(prev) || !moves(now) || prev.canary?.aborted || now.canary?.aborted) return;
  const update = now.revisions.update;
  if (update === undefined || prev.revisions.update !== update) return;
  const inFlight = claimed(prev);
  const startedUids = new Set(started.map((p) => p.uid));

  const waiting = prev.pods.filter((q) => {
    const after = now.byUid.get(q.uid);
    const owned = (q.pod.metadata.ownerReferences ?? []).some((r) => r.controller && r.kind === KIND && r.name === prev.name);
    return after !== undefined && !after.terminating && owned && !q.unavailable && !startedUids.has(q.uid) && !inFlight.has(q.name) &&
      inRange(prev, q.ordinal) && inRange(now, q.ordinal) && !belowPartition(prev, q.ordinal) && !belowPartition(now, q.ordinal) && q.revision !== update && q.state === null && !inHooks(q.pod);
  });
  for (const p of started) {
    const before = prev.byUid.get(p.uid);
    if (!before || before.unavailable) continue;
    const skipped = waiting.filter((q) =>
      ranksBefore(rank(prev.neoset.spec.updateStrategy.priorityStrategy, q.pod), rank(prev.neoset.spec.updateStrategy.priorityStrategy, before.pod)) &&
      ranksBefore(rank(now.neoset.spec.updateStrategy.priorityStrategy, now.byUid.get(q.uid)!.pod), rank(now.neoset.spec.updateStrategy.priorityStrategy, p.pod)));
    if (skipped.length > 0) report('Priority', `update started on ${p.name} while ${skipped.map((q) => q.name).join(', ')}, which rank before it and were available and waiting, did not start`, p.name);
  }
}
