// One pod's in-place update between two observed states (§4.4 steps 1–4, §4.5).
//
//   Drain        an image patch (the state becomes Updating, or changes target) comes only after
//                the pod's InPlaceUpdateReady condition became False for gracePeriodSeconds: the gate
//                is False and startedAt >= the gate's lastTransitionTime + gracePeriodSeconds (both
//                metav1.Time, whole seconds: no other slack). While Updating, the gate opens again
//                only once every changed container runs its new image, restarted by the kubelet (the
//                §4.4 step 3 checks but readiness, seen in either state); the pod still counts as
//                unavailable until the state is gone and it is Ready for minReadySeconds (view.ts).
//   InPlaceDone  a state is removed only when the update is done (§4.5) in either state; a state
//                removed while Draining changed no image — unless patch and finish both fell between
//                the two observations (§2.0 chains them), and then the new images are done.
//   Terminating  a terminating pod is never written again (labels, annotations, images, gate).
import { CONDITION_INPLACE_READY } from '../../shared/api/names.ts';
import type { Pod } from '../../shared/core/objects.ts';
import type { InPlaceState } from './inplace-state.ts';
import type { Report } from './types.ts';
import type { PodFacts, View } from './view.ts';
import { condition, isTrue, normalizeImage, sameJson, seconds } from './wire.ts';

export function inPlaceInvariants(prev: View, now: View, report: Report): void {
  for (const p of now.pods) drain(prev, now, p, report);
  for (const before of prev.pods) {
    const after = now.byUid.get(before.uid);
    if (!after) continue;
    if (before.state && !after.state && !after.terminating) finished(prev, now, before, after, report);
    if (before.terminating && written(before, after)) {
      report('Terminating', 'a terminating pod was written (labels, annotations, images or InPlaceUpdateReady)', after.name);
    }
  }
}

function drain(prev: View, now: View, p: PodFacts, report: Report): void {
  if (p.state?.phase !== 'Updating' || p.terminating) return;
  const before = prev.byUid.get(p.uid);
  // An image patch: the state becomes Updating, or moves to another target, or the pod's images change.
  // Not a new startedAt alone: a retry (§4.4 step 5, the deadline restarted on a new generation) rewrites
  // it without patching, also while the gate is open on the restarted containers.
  const patched =
    before !== undefined &&
    (before.state?.phase !== 'Updating' ||
      before.state.revision !== p.state.revision ||
      !sameJson(before.state.targetImages, p.state.targetImages) ||
      !sameJson(imagesOf(before.pod), imagesOf(p.pod)));
  let gate = condition(p.pod, CONDITION_INPLACE_READY);
  if (gate?.status === 'True') {
    const change = stateChange(p.state);
    const opened = patched || before === undefined || condition(before.pod, CONDITION_INPLACE_READY)?.status !== 'True';
    if (opened && !(before && restarted(before.pod, change)) && !restarted(p.pod, change)) {
      report('Drain', `${CONDITION_INPLACE_READY} True while the in-place update is in flight, before every changed container runs its new image`, p.name);
      return;
    }
    if (!patched) return;
    // Patched and reopened between the two states: the drain is judged from the gate as it was before.
    gate = condition(before!.pod, CONDITION_INPLACE_READY);
  }
  if (!patched) return;
  if (gate !== undefined && gate.status !== 'False') {
    report('Drain', `images patched while ${CONDITION_INPLACE_READY} is ${gate.status}, not False`, p.name);
    return;
  }
  // A readiness gate whose condition was never written counts as False (Kubernetes' readiness-gate
  // rule): the pod has been out of the endpoints since it was created.
  const falseSince = gate ? gate.lastTransitionTime : p.pod.metadata.creationTimestamp;
  const grace = Math.min(prev.gracePeriodSeconds, now.gracePeriodSeconds);
  const gateFalse = seconds(falseSince);
  const startedAt = seconds(p.state.startedAt);
  if (gateFalse === null || startedAt === null) {
    if (grace > 0) report('Drain', `patched without a readable startedAt / ${CONDITION_INPLACE_READY} lastTransitionTime: gracePeriodSeconds ${grace} unprovable`, p.name);
    return;
  }
  if (startedAt < gateFalse + grace) {
    report('Drain', `patched at ${p.state.startedAt}, ${startedAt - gateFalse}s after ${CONDITION_INPLACE_READY} became False (${falseSince}) < gracePeriodSeconds ${grace}`, p.name);
  }
}

export interface Change {
  /** container -> image it must now run. */
  targets: Record<string, string>;
  previousImageIDs: Record<string, string>;
  previousContainerIDs: Record<string, string>;
}

function finished(prev: View, now: View, before: PodFacts, after: PodFacts, report: Report): void {
  const state = before.state!;
  let change: Change;
  if (state.phase === 'Draining') {
    change = imagesChanged(before.pod, after.pod);
    if (Object.keys(change.targets).length === 0) return; // abandoned before any change: allowed
  } else {
    change = stateChange(state);
  }
  if (done(prev, before.pod, change) || done(now, after.pod, change)) return;
  report(
    'InPlaceDone',
    state.phase === 'Draining'
      ? 'the state was removed while Draining after images changed, and the new images are not done (§4.5)'
      : `in-place update to ${state.revision} ended before it was done (§4.5)`,
    after.name,
  );
}

/** The containers whose image changed between the two states, with what the kubelet reported before. */
function imagesChanged(before: Pod, after: Pod): Change {
  const change: Change = { targets: {}, previousImageIDs: {}, previousContainerIDs: {} };
  for (const c of after.spec.containers) {
    if (before.spec.containers.find((b) => b.name === c.name)?.image === c.image) continue;
    const cs = before.status?.containerStatuses?.find((s) => s.name === c.name);
    change.targets[c.name] = c.image;
    change.previousImageIDs[c.name] = cs?.imageID ?? '';
    if (cs?.containerID) change.previousContainerIDs[c.name] = cs.containerID;
  }
  return change;
}

const imagesOf = (pod: Pod) => pod.spec.containers.map((c) => c.image);

export const stateChange = (state: InPlaceState): Change => ({ targets: state.targetImages, previousImageIDs: state.previousImageIDs, previousContainerIDs: state.previousContainerIDs });

/**
 * §4.4 step 3 but readiness: every changed container runs its target (normalized image; a digest-pinned
 * target is not compared, the runtime may report it otherwise) and was restarted by the kubelet (a new
 * imageID, or a new containerID when one was recorded). Once so, so it stays until the next patch.
 */
export function restarted(pod: Pod, change: Change): boolean {
  if (pod.status?.phase !== 'Running') return false;
  const statuses = pod.status.containerStatuses ?? [];
  return Object.entries(change.targets).every(([name, image]) => {
    const cs = statuses.find((s) => s.name === name);
    if (!cs || (!image.includes('@') && normalizeImage(cs.image) !== normalizeImage(image))) return false;
    const previousContainer = change.previousContainerIDs[name];
    return cs.imageID !== change.previousImageIDs[name] || (previousContainer !== undefined && cs.containerID !== previousContainer);
  });
}

/** §4.4 step 3 / §4.5: restarted on the new images, and the readiness mode's check passes. */
function done(v: View, pod: Pod, change: Change): boolean {
  if (!restarted(pod, change)) return false;
  const mode = v.neoset.spec.updateStrategy.inPlaceUpdateStrategy.readiness;
  if (mode === 'Ready') return isTrue(pod, 'ContainersReady');
  const statuses = pod.status?.containerStatuses ?? [];
  return Object.keys(change.targets).every((name) => statuses.find((s) => s.name === name)?.ready === true);
}

function written(before: PodFacts, after: PodFacts): boolean {
  const what = (p: PodFacts) => [
    p.pod.metadata.labels ?? {},
    p.pod.metadata.annotations ?? {},
    p.pod.spec.containers.map((c) => c.image),
    condition(p.pod, CONDITION_INPLACE_READY)?.status,
  ];
  return !sameJson(what(before), what(after));
}
