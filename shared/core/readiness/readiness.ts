// The readiness function's duties (§2.2, §4.5): is a pod's in-place update really done (step 3), and
// may its readiness gate open (step 4, or a new pod once it runs, §4.1)? Decided from the pod alone —
// the readiness mode the update started under is recorded in its state annotation — so the readiness
// function needs no read of the NeoSet. It asks this of the Pod in its event only to skip; what it
// writes is asked again of the pod as read, each write conditional on that read's resourceVersion
// (SPEC §2.0, shared/k8s/pod-readiness.ts). decide() takes its in-place ends from here too: one rule,
// one home.
import { inTerminalPhase, inPlaceGate, inPlaceUpdateDone, isRunningAndStarted, isTerminating } from '../pods/conditions.ts';
import { objectRef, podRevision } from '../pods/identity.ts';
import type { Pod } from '../objects.ts';
import type { InPlaceState } from '../../api/inplace-state.ts';
import type { Action, Gate } from '../plan.ts';
import { toMs } from '../time.ts';
import { gateTransitionTime } from './gate-time.ts';
import { podInPlaceState } from '../pods/in-place-state.ts';

export const REASON_DRAINING = 'InPlaceUpdateDraining';

/** The readiness duties for one pod now: finish a done update (its gate opening in the same write), or open a gate. */
export function podReadiness(pod: Pod, nowMs: number, fallbackMode: 'Probe' | 'Ready' = 'Probe'): Action[] {
  if (isTerminating(pod) || inTerminalPhase(pod)) return [];
  const state = podInPlaceState(pod);
  if (state === null) {
    const gate = openGate(pod, nowMs);
    return gate ? [gate] : [];
  }
  if (!inPlaceUpdateDone(pod, state, state.readiness ?? fallbackMode)) return [];
  return [finishInPlaceUpdate(pod, state, nowMs, false)];
}

/** A pod with no update in flight whose gate is not open: a new pod once running (§4.1), or step 4b. */
export function openGate(pod: Pod, nowMs: number): Extract<Action, { kind: 'setInPlaceReady' }> | null {
  if (isTerminating(pod) || inTerminalPhase(pod) || podInPlaceState(pod) !== null) return null;
  const gate = inPlaceGate(pod);
  if (gate?.status === 'True' || !isRunningAndStarted(pod)) return null;
  const afterUpdate = gate?.reason === REASON_DRAINING;
  return {
    kind: 'setInPlaceReady',
    pod: objectRef(pod.metadata),
    status: 'True',
    reason: afterUpdate ? 'InPlaceUpdateDone' : 'PodStarted',
    message: afterUpdate ? `update to ${podRevision(pod)} done` : 'pod running with all containers started',
    lastTransitionTime: gateTransitionTime('True', 0, nowMs),
  };
}

/**
 * Step 4 (or the end of an abandoned drain): the state annotation goes, and the gate opens in the same
 * write when the pod runs with its containers started (else openGate opens it later). durationSeconds
 * runs from drainStartedAt: the time the pod was out of service for the update, drain included — what
 * a user of the duration histogram wants to know. A done update records no Event: the gate's message
 * says it on the pod (one Event per pod would be most of a rollout's writes, SPEC §2.0).
 */
export function finishInPlaceUpdate(pod: Pod, state: InPlaceState, nowMs: number, aborted: boolean): Action {
  const name = pod.metadata.name;
  const durationSeconds = Math.max(0, (nowMs - toMs(state.drainStartedAt)) / 1000);
  const opens = isRunningAndStarted(pod) && inPlaceGate(pod)?.status !== 'True';
  const gate: Gate = aborted
    ? { status: 'True', reason: 'InPlaceUpdateAborted', message: `update to ${state.revision} abandoned before any change`, lastTransitionTime: gateTransitionTime('True', 0, nowMs) }
    : { status: 'True', reason: 'InPlaceUpdateDone', message: `update to ${state.revision} done in ${Math.round(durationSeconds)}s`, lastTransitionTime: gateTransitionTime('True', 0, nowMs) };
  return {
    kind: 'finishInPlaceUpdate',
    pod: objectRef(pod.metadata),
    revision: aborted ? (podRevision(pod) ?? '') : state.revision,
    durationSeconds,
    ...(opens ? { gate } : {}),
    ...(aborted ? { aborted: true, event: { type: 'Normal', reason: 'UpdateAborted', message: `pod ${name}: update to ${state.revision} abandoned before any change` } } : {}),
  };
}
