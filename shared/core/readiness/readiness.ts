// The readiness function's duties (§2.2, §4.5): may a pod's readiness gate open (its in-place update's
// containers restarted on the new images, step 3a; or a new pod once it runs, §4.1), and is its
// in-place update really done (step 3b, then step 4: the state goes)? Decided from the pod alone —
// the readiness mode the update started under is recorded in its state annotation — so the readiness
// function needs no read of the NeoSet. It asks this of the Pod in its event only to skip; what it
// writes is asked again of the pod as read, each write conditional on that read's resourceVersion
// (SPEC §2.0, shared/k8s/pod-readiness.ts). decide() takes its in-place ends from here too: one rule,
// one home.
import { inTerminalPhase, inPlaceGate, inPlaceRestarted, inPlaceUpdateDone, isReady, isRunningAndStarted, isTerminating } from '../pods/conditions.ts';
import { objectRef, podRevision } from '../pods/identity.ts';
import type { Pod } from '../objects.ts';
import type { InPlaceState } from '../../api/inplace-state.ts';
import type { Action, Gate } from '../plan.ts';
import { rfc3339, toMs } from '../time.ts';
import { gateTransitionTime } from './gate-time.ts';
import { podInPlaceState } from '../pods/in-place-state.ts';

export const REASON_DRAINING = 'InPlaceUpdateDraining';
/** The gate's reason from the restart on the new images until the update is done (then InPlaceUpdateDone). */
export const REASON_RESTARTED = 'InPlaceUpdateRestarted';

/**
 * The readiness duties for one pod now: finish a done update (its gate opening in the same write when
 * still closed), open the gate of an update whose containers restarted on the new images, or open a
 * new pod's gate.
 */
export function podReadiness(pod: Pod, nowMs: number, fallbackMode: 'Probe' | 'Ready' = 'Probe'): Action[] {
  if (isTerminating(pod) || inTerminalPhase(pod)) return [];
  const state = podInPlaceState(pod);
  const gate = state === null ? openGate(pod, nowMs) : null;
  if (gate) return [gate];
  if (state === null) return [];
  if (inPlaceUpdateDone(pod, state, state.readiness ?? fallbackMode)) return [finishInPlaceUpdate(pod, state, nowMs, false)];
  const restarted = openGateOnRestart(pod, state, nowMs);
  return restarted ? [restarted] : [];
}

/**
 * Step 3a: the changed containers run the new images (restarted, every container started), so the
 * drain's traffic hold ends — the gate opens before their readiness probes pass. Safe because the pod's
 * Ready is the kubelet's AND of every container's readiness and every gate: the pod rejoins the
 * endpoints only once its probes pass, as it would after any container restart, and the kubelet's
 * Ready no longer waits for one more write of ours after them. The state annotation stays (phase
 * Updating): the pod counts as in an update — unavailable for the budget, not updated, not counted by
 * a canary's analysis — until the update is done (step 3b) and the pod available (reconcile asks
 * doneAndAvailable, pods/availability.ts, without waiting for the finish write that follows), and the
 * deadline (step 5) still runs.
 */
function openGateOnRestart(pod: Pod, state: InPlaceState, nowMs: number): Extract<Action, { kind: 'setInPlaceReady' }> | null {
  if (inPlaceGate(pod)?.status === 'True' || !isRunningAndStarted(pod) || !inPlaceRestarted(pod, state)) return null;
  return {
    kind: 'setInPlaceReady',
    pod: objectRef(pod.metadata),
    status: 'True',
    reason: REASON_RESTARTED,
    message: `update to ${state.revision}: restarted on the new images, Ready waits for their readiness`,
    lastTransitionTime: gateTransitionTime('True', 0, nowMs),
  };
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
 * write when the pod runs with its containers started (else openGate opens it later); a gate that
 * opened on the restart (step 3a) is told done in the same write, its lastTransitionTime kept (its
 * status does not change). durationSeconds
 * runs from drainStartedAt: the time the pod was out of service for the update, drain included — what
 * a user of the duration histogram wants to know. A done update records no Event: the gate's message
 * says it on the pod (one Event per pod would be most of a rollout's writes, SPEC §2.0).
 * A finish that finds the pod Ready stamps the gate's lastProbeTime with its time: the decision of the
 * Ready event before it counted the pod available already (availability.ts doneAndAvailable), and the
 * reconcile function leaves this write's own event alone (event-relevance.ts).
 */
export function finishInPlaceUpdate(pod: Pod, state: InPlaceState, nowMs: number, aborted: boolean): Action {
  const name = pod.metadata.name;
  const durationSeconds = Math.max(0, (nowMs - toMs(state.drainStartedAt)) / 1000);
  const current = inPlaceGate(pod);
  const openedOnRestart = !aborted && current?.status === 'True' && current.reason === REASON_RESTARTED;
  const opens = openedOnRestart || (isRunningAndStarted(pod) && current?.status !== 'True');
  const since = (openedOnRestart && current.lastTransitionTime) || gateTransitionTime('True', 0, nowMs);
  const gate: Gate = aborted
    ? { status: 'True', reason: 'InPlaceUpdateAborted', message: `update to ${state.revision} abandoned before any change`, lastTransitionTime: since }
    : {
        status: 'True',
        reason: 'InPlaceUpdateDone',
        message: `update to ${state.revision} done in ${Math.round(durationSeconds)}s`,
        lastTransitionTime: since,
        ...(openedOnRestart && isReady(pod) ? { lastProbeTime: rfc3339(nowMs) } : {}),
      };
  return {
    kind: 'finishInPlaceUpdate',
    pod: objectRef(pod.metadata),
    revision: aborted ? (podRevision(pod) ?? '') : state.revision,
    durationSeconds,
    ...(opens ? { gate } : {}),
    ...(aborted ? { aborted: true, event: { type: 'Normal', reason: 'UpdateAborted', message: `pod ${name}: update to ${state.revision} abandoned before any change` } } : {}),
  };
}
