// Availability (§4.5): Ready for at least minReadySeconds, measured from the Ready condition's
// lastTransitionTime so that it survives any restart of the function. And the stricter notion the
// update budget uses (§4.4): an in-place update in flight makes a pod unavailable even while Ready.
import { podInPlaceState } from './in-place-state.ts';
import { inHooks } from './lifecycle-state.ts';
import type { Pod } from '../objects.ts';
import { isReady, isTerminating, podCondition } from './conditions.ts';
import { toMs } from '../time.ts';

/**
 * When the pod becomes (or became) available, in ms; null while it is not Ready or is terminating.
 * With minReadySeconds > 0 a Ready condition without lastTransitionTime never counts (as in
 * Kubernetes' podutil.IsPodAvailable).
 */
export function availableSince(pod: Pod, minReadySeconds: number): number | null {
  if (isTerminating(pod) || !isReady(pod)) return null;
  if (minReadySeconds <= 0) return -Infinity;
  const since = podCondition(pod, 'Ready')?.lastTransitionTime;
  if (!since) return null;
  return toMs(since) + minReadySeconds * 1000;
}

export function isAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  const at = availableSince(pod, minReadySeconds);
  return at !== null && at <= nowMs;
}

/**
 * Unavailable as the maxUnavailable budget counts it: not available, an update in flight (§4.4), or
 * in its update hooks, PreparingUpdate to Updated (§4.10: until its owner says "re-joined").
 */
export function isUnavailableForBudget(pod: Pod | undefined, minReadySeconds: number, nowMs: number): boolean {
  return !pod || !isAvailable(pod, minReadySeconds, nowMs) || podInPlaceState(pod) !== null || inHooks(pod);
}
