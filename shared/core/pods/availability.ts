// Availability (§4.5): Ready for at least minReadySeconds, measured from the Ready condition's
// lastTransitionTime so that it survives any restart of the function. And the stricter notion the
// update budget uses (§4.4): an in-place update in flight makes a pod unavailable even while Ready —
// until it is done and available, which readiness's finish write (the annotation's removal) follows.
import type { InPlaceState } from '../../api/inplace-state.ts';
import type { Pod } from '../objects.ts';
import { inPlaceGate, inPlaceUpdateDone, isReady, isTerminating, podCondition, type ReadinessMode } from './conditions.ts';
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
 * An in-place update whose pod no longer counts as in its update (§4.4 steps 3–4, issue 24): done by
 * step 3's checks (inPlaceUpdateDone, the readiness function's own rule), its gate open, and
 * available. What is left is the readiness function's finish write — the annotation's removal and the
 * duration histogram — which changes nothing the budget, the status or a canary count, so the next
 * pod need not wait for it. Judged from the pod as read, never from an event: the containerStatuses,
 * the gate and Ready together. Ready must also be newer than the gate's opening: the kubelet computes
 * Ready from the gate, so a Ready that turned True before the gate opened is one from before the drain
 * that a kubelet has not recomputed yet (8b92b7c), not the new containers' — and its lastTransitionTime
 * would start minReadySeconds too early. A kubelet clock behind ours only delays this to the finish
 * write, as before. Both times are whole seconds: Ready in the gate's second counts.
 */
export function doneAndAvailable(pod: Pod, state: InPlaceState, mode: ReadinessMode, minReadySeconds: number, nowMs: number): boolean {
  const gate = inPlaceGate(pod);
  const ready = podCondition(pod, 'Ready');
  if (gate?.status !== 'True' || !gate.lastTransitionTime || !ready?.lastTransitionTime) return false;
  if (toMs(ready.lastTransitionTime) < toMs(gate.lastTransitionTime) || !inPlaceUpdateDone(pod, state, mode)) return false;
  return isAvailable(pod, minReadySeconds, nowMs);
}
