// The scale budget (§4.12; OpenKruise scaleStrategy.maxUnavailable, pkg/controller/statefulset/
// stateful_set_control.go getScaleMaxUnavailable): under Parallel, pods are created only while fewer
// than maxUnavailable of the pods in range (Observed.ordinals) are not Running and Ready, so a burst of new database
// replicas does not all start cloning at the same moment.
import type { NeoSetSpec } from '../../api/neoset.ts';
import type { Observed } from '../observed.ts';
import { isRunningAndReady } from '../pods/conditions.ts';
import { resolveAtLeastOne } from '../update/budget.ts';

/**
 * scaleStrategy.maxUnavailable resolved against replicas, or null when there is no budget (absent, or
 * OrderedReady, which creates one pod at a time anyway). A percentage rounds down, as Kruise's
 * (GetValueFromIntOrPercent(..., false)) — unlike updateStrategy.maxUnavailable, which rounds up;
 * at least 1 — also for a text admission refuses: an unreadable budget is the smallest one.
 */
export function resolveScaleMaxUnavailable(spec: NeoSetSpec): number | null {
  const value = spec.scaleStrategy?.maxUnavailable;
  if (value === undefined || spec.podManagementPolicy !== 'Parallel') return null;
  return resolveAtLeastOne(value, spec.replicas, Math.floor);
}

/**
 * How many pods this decision may create: the budget less the pods in range that exist and are
 * not Running and Ready (Pending, starting, failed, terminating, or drained for an update — Kruise
 * counts them all); Infinity without a budget. A created pod is not Ready, so each costs one.
 */
export function creationSlots(o: Observed): number {
  const budget = resolveScaleMaxUnavailable(o.neoset.spec);
  if (budget === null) return Infinity;
  let notReady = 0;
  for (const i of o.ordinals) {
    const v = o.byOrdinal.get(i);
    if (v && (v.terminating || !isRunningAndReady(v.pod))) notReady++;
  }
  return budget - notReady;
}
