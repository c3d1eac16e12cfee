// Update hooks (SPEC §4.10): the OpenKruise lifecycle-hook handshake, all of it on the pod — the label
// neoset.neo.io/lifecycle-state and the annotation neoset.neo.io/lifecycle-since.
//
//   Normal --[update starts, claimed, budget slot]--> PreparingUpdate
//   PreparingUpdate --[preUpdate handler labels gone: the owner's "go"]--> Updating --> §4.4 (markDraining ...)
//   Updating, update done and the pod available --> Updated (postUpdate set) | Normal
//   Updated --[postUpdate handler labels back: "re-joined"]--> Normal
//   PreparingUpdate, the rollout no longer wants the pod --> Normal (labels still on) | Updated (the owner let go)
//   a wait past its hook's timeoutSeconds (from lifecycle-since): the rollout Failed, HookTimeout
//
// A pod counts against maxUnavailable from PreparingUpdate until Normal (availability.ts). A pod that
// is recreated (not in place) comes back Normal: there is no updated pod to re-join.
import type { Rollout } from '../target.ts';
import { ANNOTATION_LIFECYCLE_SINCE } from '../../api/names.ts';
import { lifecycleState } from '../pods/lifecycle-state.ts';
import type { ObservedPod } from '../observed.ts';
import type { Pod } from '../objects.ts';
import type { Action, LifecycleState, PodStep } from '../plan.ts';
import { isAvailable } from '../pods/availability.ts';
import { rfc3339, toMs, type Wakeups } from '../time.ts';
import { canMove, drain, wantsUpdate } from '../update/starts.ts';
import { hasHooks } from '../pods/lifecycle-state.ts';

function labelsOn(pod: Pod, handler: Record<string, string> | undefined): boolean {
  return handler !== undefined && Object.entries(handler).every(([k, v]) => pod.metadata.labels?.[k] === v);
}

function labelsOff(pod: Pod, handler: Record<string, string> | undefined): boolean {
  return handler === undefined || Object.entries(handler).every(([k, v]) => pod.metadata.labels?.[k] !== v);
}

export function setLifecycle(o: Rollout, v: ObservedPod, state: LifecycleState): Action {
  return { kind: 'setLifecycle', pod: v.ref, state, since: rfc3339(o.nowMs) };
}

/**
 * How a §4.4 update that starts begins: with update hooks, by asking the owner (PreparingUpdate) —
 * the drain follows (chained, decide.ts carry) once the handler labels are off; without, its drain.
 */
export function startUpdate(o: Rollout, v: ObservedPod, rescue: boolean): Action {
  return hasHooks(o.neoset) ? setLifecycle(o, v, 'PreparingUpdate') : drain(o, v, rescue);
}

/**
 * The next lifecycle write of a pod in hooks with no in-place state annotation (an update in flight
 * is §4.4's), or the HookTimeout of its wait. A pod the owner let go starts its §4.4 update (its drain).
 */
export function lifecycleStep(o: Rollout, v: ObservedPod, wake: Wakeups): PodStep {
  const hooks = o.neoset.spec.lifecycle;
  const state = lifecycleState(v.pod);
  const wanted = wantsUpdate(o, v) && canMove(o, v);
  if (state === 'PreparingUpdate') {
    if (!wanted) {
      // Nothing has changed on the pod: given back — re-joined already if the owner never let go.
      const back = labelsOn(v.pod, hooks?.preUpdate?.labelsHandler) || hooks?.postUpdate === undefined ? 'Normal' : 'Updated';
      return { action: setLifecycle(o, v, back) };
    }
    if (labelsOff(v.pod, hooks?.preUpdate?.labelsHandler)) return { action: setLifecycle(o, v, 'Updating') };
    return waiting(o, v, 'preUpdate', hooks!.preUpdate!.timeoutSeconds, wake);
  }
  if (state === 'Updating') {
    // The owner's "go" was given: the update starts (again, after a crash between the two writes) ...
    if (wanted) return { action: drain(o, v) };
    // ... or is done (§4.4 removed its state): Updated once the pod is available.
    if (!isAvailable(v.pod, o.minReadySeconds, o.nowMs)) return { action: null };
    return { action: setLifecycle(o, v, hooks?.postUpdate ? 'Updated' : 'Normal') };
  }
  if (state === 'Updated') {
    if (hooks?.postUpdate === undefined || labelsOn(v.pod, hooks.postUpdate.labelsHandler)) return { action: setLifecycle(o, v, 'Normal') };
    return waiting(o, v, 'postUpdate', hooks.postUpdate.timeoutSeconds, wake);
  }
  return { action: null };
}

function waiting(o: Rollout, v: ObservedPod, hook: 'preUpdate' | 'postUpdate', timeoutSeconds: number, wake: Wakeups): PodStep {
  const since = v.pod.metadata.annotations?.[ANNOTATION_LIFECYCLE_SINCE];
  const deadline = (since ? toMs(since) : o.nowMs) + timeoutSeconds * 1000;
  if (o.nowMs < deadline) {
    wake.at(deadline);
    return { action: null };
  }
  const labels = Object.entries(o.neoset.spec.lifecycle![hook]!.labelsHandler).map(([k, val]) => `${k}=${val}`).join(',');
  const what = hook === 'preUpdate' ? `still carries ${labels}` : `does not carry ${labels} again`;
  const message = `pod ${v.name}: ${hook} hook not answered within ${timeoutSeconds}s (the pod ${what})`;
  return { action: null, failure: { reason: 'HookTimeout', message, key: `HookTimeout/${v.name}/${since}` } };
}
