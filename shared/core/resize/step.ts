// The resize step of an in-place update (§4.9), decided from the pod and its state annotation alone:
// chained on the image patch that recorded the target (update/in-place-steps.ts step 2b), and the
// rollout Failed (ResizeInfeasible) when it cannot be done — refused by the API server, or Infeasible
// for the kubelet — until a new template re-targets the pod.
import type { InPlaceState } from '../../api/inplace-state.ts';
import type { Pod } from '../objects.ts';
import type { ObjectRef, PodStep } from '../plan.ts';
import { podCondition } from '../pods/conditions.ts';
import { unresized } from './resize.ts';

/** The resize write still to make, or why the resize fails; null when there is nothing of §4.9's to do now. */
export function resizeStep(pod: Pod, ref: ObjectRef, state: InPlaceState): PodStep | null {
  // A resize the API server refused fails the rollout at once, until a new template re-targets.
  if (state.resizeRefused !== undefined) return resizeFailure(pod, state, state.resizeRefused);
  // The image patch recorded the resize; it follows (again, after a crash between the two).
  const resize = unresized(pod, state.targetResources);
  if (resize) return { action: { kind: 'resizePod', pod: ref, containers: resize, refused: { ...state, resizeRefused: '' } } };
  // The kubelet's verdict on this resize: Infeasible fails at once; Deferred waits (the in-place deadline).
  const infeasible = resizeInfeasible(pod);
  return infeasible === undefined ? null : resizeFailure(pod, state, infeasible);
}

/**
 * The kubelet's PodResizePending condition with reason Infeasible, about the pod's current spec (its
 * observedGeneration, when the kubelet reports one, is the pod's generation): its message.
 */
function resizeInfeasible(pod: Pod): string | undefined {
  const pending = podCondition(pod, 'PodResizePending');
  if (pending?.status !== 'True' || pending.reason !== 'Infeasible') return undefined;
  if (pending.observedGeneration !== undefined && pending.observedGeneration !== pod.metadata.generation) return undefined;
  return pending.message ?? 'Infeasible';
}

function resizeFailure(pod: Pod, state: InPlaceState, why: string): PodStep {
  const name = pod.metadata.name;
  const message = `pod ${name}: resize for revision ${state.revision} is infeasible: ${why}`;
  return { action: null, failure: { reason: 'ResizeInfeasible', message, key: `ResizeInfeasible/${name}/${state.startedAt}` } };
}
