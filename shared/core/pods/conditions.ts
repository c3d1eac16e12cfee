// What the kubelet and our readiness gate say about a pod (§4.1, §4.5), and when an in-place update
// is really done (§4.4 step 3).
import { CONDITION_INPLACE_READY } from '../../api/names.ts';
import { runsImage } from './images.ts';
import { resizeDone } from '../resize/resize.ts';
import type { ContainerStatus, Pod, PodCondition } from '../objects.ts';
import type { InPlaceState } from '../../api/inplace-state.ts';

export function podCondition(pod: Pod, type: string): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

export function isReady(pod: Pod): boolean {
  return podCondition(pod, 'Ready')?.status === 'True';
}

export function isTerminating(pod: Pod): boolean {
  return Boolean(pod.metadata.deletionTimestamp);
}

/** Phase Failed or Succeeded: the kubelet will not run it again; it is deleted and recreated (§4.3). */
export function inTerminalPhase(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
}

/** Our readiness gate's condition status; undefined before it is first written. */
export function inPlaceGate(pod: Pod): PodCondition | undefined {
  return podCondition(pod, CONDITION_INPLACE_READY);
}

function containerStatus(pod: Pod, name: string): ContainerStatus | undefined {
  return pod.status?.containerStatuses?.find((c) => c.name === name);
}

/**
 * Running with every container started: the moment a pod's gate can be opened. Not "Ready": the pod
 * Ready condition includes our own gate, so it cannot be True before we open it (§4.1).
 */
export function isRunningAndStarted(pod: Pod): boolean {
  if (pod.status?.phase !== 'Running') return false;
  return pod.spec.containers.every((c) => {
    const cs = containerStatus(pod, c.name);
    return cs !== undefined && (cs.started === true || cs.state?.running !== undefined);
  });
}

/** Running and Ready and not terminating: what OrderedReady waits for before the next ordinal (§4.3). */
export function isRunningAndReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && isReady(pod) && !isTerminating(pod);
}

export type ReadinessMode = 'Probe' | 'Ready';

/**
 * §4.4 step 3 without its readiness check (§4.9 included): every changed container runs the target
 * image — its normalized image equals the target and the kubelet restarted it (imageID, or
 * containerID, differs from the one recorded before the patch) — and the resize is carried out.
 * The moment the drain's traffic hold may end: from here the pod's Ready waits for the kubelet's
 * own readiness of each container, since Pod Ready = every container ready AND every gate True.
 */
export function inPlaceRestarted(pod: Pod, state: InPlaceState): boolean {
  if (state.phase !== 'Updating' || pod.status?.phase !== 'Running') return false;
  for (const [name, target] of Object.entries(state.targetImages ?? {})) {
    const cs = containerStatus(pod, name);
    if (!cs || !cs.imageID || !runsImage(cs, target)) return false;
    const previousContainer = state.previousContainerIDs?.[name];
    const restarted =
      cs.imageID !== (state.previousImageIDs?.[name] ?? '') ||
      (Boolean(previousContainer) && Boolean(cs.containerID) && cs.containerID !== previousContainer);
    if (!restarted) return false;
  }
  return resizeDone(pod, state.targetResources);
}

/**
 * §4.4 step 3 / §4.5: restarted on the new images (above) and the readiness check passes: Probe,
 * each changed (and each resized: RestartContainer restarts it) container `ready`; Ready, the pod's
 * ContainersReady condition ([fix] not Ready: the pod's Ready also waits for gates, ours included).
 */
export function inPlaceUpdateDone(pod: Pod, state: InPlaceState, mode: ReadinessMode): boolean {
  if (!inPlaceRestarted(pod, state)) return false;
  if (mode === 'Ready') return podCondition(pod, 'ContainersReady')?.status === 'True';
  const changed = [...Object.keys(state.targetImages ?? {}), ...Object.keys(state.targetResources ?? {})];
  return changed.every((name) => containerStatus(pod, name)?.ready === true);
}

/** The kubelet's view of each container before a patch: what step 3 compares against. */
export function containerIds(pod: Pod, names: string[]): { imageIDs: Record<string, string>; containerIDs: Record<string, string> } {
  const imageIDs: Record<string, string> = {};
  const containerIDs: Record<string, string> = {};
  for (const name of names) {
    const cs = containerStatus(pod, name);
    imageIDs[name] = cs?.imageID ?? '';
    containerIDs[name] = cs?.containerID ?? '';
  }
  return { imageIDs, containerIDs };
}
