// Which events the reconcile function may leave alone (SPEC §2.0 "read what the decision needs"). A reconcile costs three reads and, worse, holds the NeoSet's coalescing slot: the event that
// frees a budget slot (a pod Ready on the new revision) waits behind a run that an event with nothing
// in it for reconcile started a moment before. Judged from the Pod in the event alone; the event is
// still answered (200), and nothing it could have shown is lost — every later decision reads afresh,
// and the resync tick covers the rest.
//
// An event can wait when the pod's next change is someone else's and will come as its own event:
//   * an update in flight (state annotation): its next step is the grace period's (the decision that
//     drained it set a re-check), the kubelet's (restart), or the readiness function's (done → finish);
//     a NeoSet change that re-targets or abandons it comes as a NeoSet event, a deadline as a re-check.
//     Not once the event's pod shows it done and Ready on the new images with its gate open: that pod
//     counts as available before the finish write (availability.ts doneAndAvailable), so this is the
//     event that frees a budget slot;
//   * the gate just opened (True) on ready containers while the pod's Ready is not True yet: the
//     kubelet's Ready follows, and that event is the one that frees a slot;
//   * the finish write's own event (§4.4 step 4), when that finish found the pod Ready (it stamps the
//     gate's lastProbeTime, readiness.ts): the event before it — done, Ready, never left alone — was
//     decided on, with the pod counted available already; the finish changes nothing a decision reads
//     but the state annotation. Told from a later Ready (a recovery, which frees a slot) by the Ready
//     condition's lastTransitionTime, no newer than the stamp, and bounded to SKIP_AFTER_FINISH_MS
//     (never with update hooks, §4.10: the finish, and then Normal, move the pod's lifecycle on)
//     after it so that an edit of the pod later on is reconciled as ever. In whole seconds both: a
//     probe that fails and passes again within the second of the finish is left to the next event or
//     the resync tick (counted unavailable meanwhile: late, never unsafe).
// Never for a pod whose resize cannot be done (§4.9: refused, or Infeasible — the rollout fails at
// once), a pod being deleted or finished (§4.3 recreates it), one not controlled by a NeoSet (§4.1
// adopts it), one whose containers restarted since a canary's image patch (§4.11 maxRestarts), or one
// with no update in flight otherwise.
//
// A NeoSet update event can wait when its spec has been decided on (status.observedGeneration ==
// metadata.generation): it is the echo of a decision's own status write (a claim), or another
// decision's, and the pods' changes that follow come as their own events. A decision whose writes
// stopped short (a 409) looks again by itself (shared/events/reconcile-dispatch.ts); a crash is the resync
// tick's. An add event, a new generation, or a NeoSet never decided on is reconciled — and so is a
// `kubectl neoset rollout promote|abort|retry` (§4.11): it writes status.canary, not the spec, so the
// generation stays; it marks its write with status.canary.request, which the next decision drops.
import { ANNOTATION_RESTART_BASE, KIND } from '../api/names.ts';
import { restartsSinceUpdate } from './canary/restarts.ts';
import type { NeoSet } from '../api/neoset.ts';
import type { Pod } from './objects.ts';
import { inTerminalPhase, inPlaceGate, inPlaceUpdateDone, isReady, isTerminating, podCondition } from './pods/conditions.ts';
import { podInPlaceState } from './pods/in-place-state.ts';
import { lifecycleState } from './pods/lifecycle-state.ts';
import { toMs } from './time.ts';

/** How long after a finish its event may be left alone: the event comes within moments. */
export const SKIP_AFTER_FINISH_MS = 30_000;

/** Why reconcile may leave this NeoSet update event alone, or null when it must reconcile. */
export function neosetEventCanSkip(neoset: Pick<NeoSet, 'metadata' | 'status'>): string | null {
  const generation = neoset.metadata.generation;
  if (neoset.status?.canary?.request !== undefined) return null;
  return generation !== undefined && neoset.status?.observedGeneration === generation ? 'generation already decided' : null;
}

/** Why reconcile may leave this Pod event alone, or null when it must reconcile. */
export function podEventCanSkip(pod: Pod, nowMs: number): string | null {
  if (isTerminating(pod) || inTerminalPhase(pod)) return null;
  if (!pod.metadata.ownerReferences?.some((r) => r.controller && r.kind === KIND)) return null;
  const state = podInPlaceState(pod);
  // §4.9: a resize that cannot be done fails the rollout — reconcile's to say, from this very event.
  if (state?.resizeRefused !== undefined || podCondition(pod, 'PodResizePending')?.reason === 'Infeasible') return null;
  // §4.11: a canary pod's own restarts (past the base its image patch recorded) are news for the
  // maxRestarts analysis, which aborts at once rather than at the next resync tick.
  if (pod.metadata.annotations?.[ANNOTATION_RESTART_BASE] !== undefined && restartsSinceUpdate(pod) > 0) return null;
  // Done by either readiness mode (the NeoSet's fallback for a state without one is not read here):
  // not skipping costs one reconcile, skipping would leave the freed slot to the resync tick.
  // minReadySeconds is not known here either: a pod Ready for less is served by that decision's re-check.
  const done = state !== null && inPlaceGate(pod)?.status === 'True' && isReady(pod) && (inPlaceUpdateDone(pod, state, 'Probe') || inPlaceUpdateDone(pod, state, 'Ready'));
  if (state !== null && !done) return 'in-place update in flight';
  if (inPlaceGate(pod)?.status === 'True' && podCondition(pod, 'ContainersReady')?.status === 'True' && !isReady(pod)) return 'gate open, Ready pending';
  // §4.10: not for a NeoSet with update hooks (its pods carry a lifecycle state): there the finish moves
  // the lifecycle on to Updated, and the reconcile's own write of Normal, within the same 30 s, is the
  // event that frees the budget slot.
  if (state === null && lifecycleState(pod) === null && finishedReady(pod, nowMs)) return 'update finished on a Ready pod, decided on';
  return null;
}

/** The finish write's own event: its stamp on the gate, Ready since no later than it, and recent. */
function finishedReady(pod: Pod, nowMs: number): boolean {
  const gate = inPlaceGate(pod);
  const ready = podCondition(pod, 'Ready');
  if (gate?.status !== 'True' || gate.reason !== 'InPlaceUpdateDone' || !gate.lastProbeTime || ready?.status !== 'True' || !ready.lastTransitionTime) return false;
  const finishedAt = toMs(gate.lastProbeTime);
  const age = nowMs - finishedAt;
  return toMs(ready.lastTransitionTime) <= finishedAt && age >= -SKIP_AFTER_FINISH_MS && age <= SKIP_AFTER_FINISH_MS;
}
