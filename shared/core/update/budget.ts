// The update budget (§3, §4.4): maxUnavailable resolved against replicas, what is spent of it, and
// which of the pods waiting to start it lets start.
import type { NeoSetSpec } from '../../api/neoset.ts';
import { inUpdate, type ObservedPod } from '../observed.ts';
import { isAvailable } from '../pods/availability.ts';
import { inHooks } from '../pods/lifecycle-state.ts';
import type { Rollout } from '../target.ts';
import { parsePercent } from '../percent.ts';

/**
 * maxUnavailable: an integer, or a percentage of replicas rounded up; at least 1 — also for a text
 * admission refuses (a maxUnavailable stored while admission was down): an unreadable budget is the
 * smallest one.
 */
export function resolveMaxUnavailable(spec: NeoSetSpec): number {
  return resolveAtLeastOne(spec.updateStrategy.maxUnavailable, spec.replicas, Math.ceil);
}

/**
 * An int-or-percent budget (a maxUnavailable): the integer, or the percentage of `replicas` rounded
 * by `round`; at least 1, and 1 for any text that is neither.
 */
export function resolveAtLeastOne(value: number | string, replicas: number, round: (x: number) => number): number {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (value.trim().endsWith('%')) n = round(((parsePercent(value) ?? NaN) * replicas) / 100);
  else n = Number.parseInt(value, 10);
  return Number.isFinite(n) && n >= 1 ? Math.floor(n) : 1;
}

/** §4.12: the pods whose claims are being resized (claim-growth.ts), in their update; absent: none. */
export interface ClaimsResizing {
  claimsResizing?: ReadonlySet<string>;
}

/**
 * Pod `i` of the ordinals in range counts against maxUnavailable: missing, terminating, not available,
 * in its update (inUpdate: an in-place state until done and available), in its update hooks (§4.10:
 * PreparingUpdate to Updated, until its owner says "re-joined"), claimed, or its claims resizing
 * (§4.4, §2.0, §4.12).
 */
export function countsUnavailable(o: Rollout & ClaimsResizing, i: number): boolean {
  const v = o.byOrdinal.get(i);
  return (
    !v ||
    v.terminating ||
    v.claimed ||
    o.claimsResizing?.has(v.name) === true ||
    !isAvailable(v.pod, o.minReadySeconds, o.nowMs) ||
    inUpdate(v, o.target.name) ||
    inHooks(v.pod)
  );
}

/** Pods in range (Observed.ordinals, §4.12) that count against maxUnavailable (countsUnavailable). */
export function unavailableInRange(o: Rollout & ClaimsResizing): number {
  let n = 0;
  for (const i of o.ordinals) if (countsUnavailable(o, i)) n++;
  return n;
}

/**
 * The pods of `waiting` (in update order, rescues left out) that start within the budget: at most
 * maxUnavailable of pods 0..replicas-1 unavailable once they start. A pod already unavailable, or
 * claimed (counted as unavailable already), adds nothing when it starts; nothing starts while the
 * budget is overspent.
 */
export function withinBudget(o: Rollout & ClaimsResizing, waiting: ObservedPod[]): ObservedPod[] {
  let slots = resolveMaxUnavailable(o.neoset.spec) - unavailableInRange(o);
  if (slots < 0) return [];
  return waiting.filter((v) => {
    const adds = !v.claimed && !o.claimsResizing?.has(v.name) && isAvailable(v.pod, o.minReadySeconds, o.nowMs);
    if (adds && slots === 0) return false;
    if (adds) slots--;
    return true;
  });
}
