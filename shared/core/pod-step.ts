// One pod's writes in a decision (§2.0, §4.4, §4.5, §4.10): the one dispatch that says which rule
// decides a pod's next step, and carrying the pod on through the steps that need no waiting.
import { isReadinessDuty } from './actions.ts';
import { lifecycleStep } from './hooks/lifecycle.ts';
import type { ObservedPod } from './observed.ts';
import type { Action, ObjectRef, PodStep } from './plan.ts';
import { podRevision } from './pods/identity.ts';
import { podInPlaceState } from './pods/in-place-state.ts';
import { inHooks } from './pods/lifecycle-state.ts';
import { openGate } from './readiness/readiness.ts';
import type { Rollout } from './target.ts';
import type { Wakeups } from './time.ts';
import { inFlightStep } from './update/in-place-steps.ts';
import { afterWrite } from './update/pod-writes.ts';

/**
 * Whose duties a decision carries out (§2.2): 'all' (a NeoSet event, a resync tick), or 'reconcile'
 * — a Pod event, which the readiness function also receives: the readiness duties are then its
 * alone, so that the two functions never race for the same write.
 */
export type Duties = 'all' | 'reconcile';

/**
 * The next write of a pod that has none yet this round, and any failure found on the way: a pod in
 * range with an update in flight takes its next in-place step (§4.4); one in its update hooks its
 * next lifecycle step (§4.10), else its gate; any other its gate (§4.5). A step that is the
 * readiness function's duty is not this decision's on a Pod event.
 */
export function podStep(o: Rollout, v: ObservedPod, wake: Wakeups, duties: Duties): PodStep {
  let step: PodStep;
  if (v.state !== null) step = v.inRange ? inFlightStep(o, v, wake) : { action: null };
  else if (v.inRange && inHooks(v.pod)) {
    step = lifecycleStep(o, v, wake);
    step = step.action ? step : { ...step, action: openGate(v.pod, o.nowMs) };
  } else step = { action: openGate(v.pod, o.nowMs) };
  return step.action && duties === 'reconcile' && isReadinessDuty(step.action) ? { ...step, action: null } : step;
}

/**
 * §2.0 "carry a pod as far as it can go": after a pod's first write, its next steps follow in the
 * same plan while nothing needs waiting for (a grace period, the kubelet, the budget) — each decided
 * on the pod as the previous write leaves it (pod-writes.ts), each written conditional on the
 * resourceVersion the previous write returned. A drain with no grace period is one invocation:
 * state annotation with gate False (one write), then the image patch, then (§4.9) the resize.
 */
export function carry(o: Rollout, v: ObservedPod, first: Action, wake: Wakeups, duties: Duties): Action[] {
  const chain = [first];
  let pod = v.pod;
  for (let last = first; chain.length < 6; ) {
    // The kubelet acts next — but an image patch that recorded a resize is followed by it (§4.9).
    if (last.kind === 'deletePod' || last.kind === 'resizePod' || (last.kind === 'patchImages' && !last.state.targetResources)) break;
    pod = afterWrite(pod, last, o.nowMs);
    const next = podStep(o, { ...v, pod, state: podInPlaceState(pod), revision: podRevision(pod) }, wake, duties).action;
    if (!next || !('pod' in next) || 'metadata' in next.pod) break;
    // One Event per pod update start: a patch chained on the drain that started it adds none.
    const quiet = next.kind === 'patchImages' && chain.some((a) => a.kind === 'markDraining') ? { event: undefined } : {};
    chain.push({ ...next, ...quiet, pod: { ...next.pod, chained: true } as ObjectRef } as Action);
    last = next;
  }
  return chain;
}
