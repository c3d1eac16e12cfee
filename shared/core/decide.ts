// decide(snapshot, now) -> plan: the whole NeoSet decision as a pure function (SPEC §2, §4).
//
// The plan's status is written first when the plan claims (§2.0: claim before act; see Plan.claim),
// else last. Order of the actions, so that applying any prefix of the plan (a 409 or a crash stops
// the applier) leaves a state from which the next decide() finishes the job — memory before effects:
//   0. adoption of orphans (§4.1), before anything else is done to them;
//   1. revisions (createRevision / renumberRevision) before any pod labelled with them;
//   2. claims' owners, then each missing claim before its pod, the condemned pod's claims before the pod;
//   3. one write per pod: scaling deletes, else the next step of an update in flight, else opening
//      the gate, else the start of an update (the state annotation before the condition);
//   4. releasing the claims it does not start (written by the applier BEFORE the status: see
//      releases()); 5. Events not tied to a write; 6. pruning history.
import { availableSince } from './pods/availability.ts';
import { inFlightStep } from './update/in-place-steps.ts';
import { afterWrite } from './update/pod-writes.ts';
import { openGate } from './update/readiness.ts';
import { podInPlaceState } from './update/state-annotation.ts';
import { sameJson } from './json.ts';
import type { NeoSetStatus } from '../api/neoset.ts';
import type { PersistentVolumeClaim } from './objects.ts';
import { observe, type Observed, type PodView } from './observed.ts';
import { rolloutPending, type FailureReason } from './status/phase.ts';
import type { Action, ObjectRef, Plan } from './plan.ts';
import { pruneRevisions } from './revisions/revisions.ts';
import { claimOwnerActions, scalingActions } from './scaling/scaling.ts';
import type { Snapshot } from './snapshot.ts';
import { computeStatus } from './status/status.ts';
import { Wakeups } from './time.ts';
import { blockedPods, drain, startUpdates } from './update/starts.ts';
import { inHooks, lifecycleStep } from './update/lifecycle.ts';
import { ANNOTATION_LIFECYCLE_SINCE } from '../api/names.ts';
import { neosetOwnerRef, objectRef, podRevision } from './pods/identity.ts';

/**
 * Whose duties a decision carries out (§2.2): 'all' (a NeoSet event, a resync tick), or 'reconcile'
 * — a Pod event, which the readiness function also receives: the readiness duties are then its
 * alone, so that the two functions never race for the same write.
 */
export type Duties = 'all' | 'reconcile';

/** The readiness function's duties (§2.2, §4.5): an update is done (finish) and the gate opens. */
export function isReadinessDuty(a: Action): a is Extract<Action, { kind: 'setInPlaceReady' | 'finishInPlaceUpdate' }> {
  return (a.kind === 'setInPlaceReady' && a.status === 'True') || (a.kind === 'finishInPlaceUpdate' && !a.aborted);
}

export function decide(snapshot: Snapshot, now: Date, duties: Duties = 'all'): Plan {
  // A NeoSet being deleted: the garbage collector removes what it owns; nothing to decide.
  if (snapshot.neoset.metadata.deletionTimestamp) return { actions: [], claim: false, status: null, requeueAfter: null };
  const o = observe(snapshot, now.getTime());
  const wake = new Wakeups(o.nowMs);
  const pvcs = new Map<string, PersistentVolumeClaim>(snapshot.pvcs.map((p) => [p.metadata.name, p]));
  const touched = new Set<string>();
  const actions: Action[] = [...adoptions(o, touched), ...o.revisions.actions, ...claimOwnerActions(o, pvcs), ...scalingActions(o, pvcs, touched)];
  const events: Action[] = [];

  let failure: { reason: FailureReason; message: string } | null = null;
  for (const v of o.pods) {
    if (touched.has(v.name) || v.terminating || v.finished || v.orphan) continue;
    let action: Action | null = null;
    if (v.state !== null && v.inRange) {
      const step = inFlightStep(o, v, wake);
      action = step.action;
      if (step.failure) {
        failure ??= step.failure;
        events.push({ kind: 'recordEvent', key: `${step.failure.reason}/${v.name}/${v.state.startedAt}`, event: { type: 'Warning', ...step.failure } });
      }
      if (step.deadlineExceeded) {
        const timeout = o.neoset.spec.updateStrategy.inPlaceUpdateStrategy.timeoutSeconds;
        const message = `pod ${v.name}: in-place update to ${v.state.revision} not done within ${timeout}s`;
        failure ??= { reason: 'ProgressDeadlineExceeded', message };
        events.push({
          kind: 'recordEvent',
          key: `deadline-exceeded/${v.name}/${v.state.startedAt}`,
          event: { type: 'Warning', reason: 'ProgressDeadlineExceeded', message },
        });
      }
    } else if (v.state === null && v.inRange && inHooks(v.pod)) {
      const step = lifecycleStep(o, v, wake, (p) => drain(o, p));
      action = step.action;
      if (step.failure) {
        failure ??= step.failure;
        events.push({ kind: 'recordEvent', key: `${step.failure.reason}/${v.name}/${v.pod.metadata.annotations?.[ANNOTATION_LIFECYCLE_SINCE]}`, event: { type: 'Warning', ...step.failure } });
      }
      action ??= openGate(v.pod, o.nowMs);
    } else if (v.state === null) {
      action = openGate(v.pod, o.nowMs);
    }
    if (action && duties === 'reconcile' && isReadinessDuty(action)) action = null;
    if (action) {
      actions.push(...carry(o, v, action, wake, duties));
      touched.add(v.name);
    }
  }
  const blocked = blockedPods(o);
  if (blocked.length > 0) {
    const [{ view, differences }] = blocked;
    const others = blocked.length > 1 ? ` (and ${blocked.length - 1} more pods)` : '';
    const message = `pod ${view.name}${others}: InPlaceOnly cannot reach ${o.update.name} in place, differs in ${differences.join(', ')}`;
    failure ??= { reason: 'InPlaceOnlyBlocked', message };
    events.push({ kind: 'recordEvent', key: `inplaceonly-blocked/${o.update.name}`, event: { type: 'Warning', reason: 'InPlaceOnlyBlocked', message } });
  }
  const starts = startUpdates(o, failure !== null, (v) => !touched.has(v.name));
  // §4.11: an aborted canary is Failed too, but its pods must move (back to currentRevision).
  failure = o.canary.failure ?? failure;
  events.push(...o.canary.events);
  if (o.canary.wakeAt !== null) wake.at(o.canary.wakeAt);
  const byName = new Map(o.pods.map((v) => [v.name, v]));
  for (const a of starts.actions) {
    if (a.kind !== 'markDraining' && a.kind !== 'setLifecycle') continue;
    actions.push(...carry(o, byName.get(a.pod.name)!, a, wake, duties));
    touched.add(a.pod.name);
  }
  actions.push(...releases(o, touched));

  if (o.advanced && o.neoset.status?.currentRevision) {
    events.push({
      kind: 'recordEvent',
      key: `rollout-completed/${o.update.name}/${o.update.number}`,
      event: { type: 'Normal', reason: 'RolloutCompleted', message: `all ${o.replicas} pods run revision ${o.update.name}: it is the current revision` },
    });
  }
  actions.push(...events, ...pruneRevisions(o.revisions, liveRevisions(o), o.neoset.spec.revisionHistoryLimit));

  // §4.5: a pod Ready for less than minReadySeconds becomes available later; look again then.
  for (const v of o.pods) {
    const at = availableSince(v.pod, o.minReadySeconds);
    if (at !== null) wake.at(at);
  }
  const status = computeStatus(o, rolloutPending(o), failure, starts.claims);
  const claim = actions.some((a) => !UNCLAIMED.has(a.kind));
  return {
    actions,
    claim,
    status: claim || !sameJson(withoutBookkeeping(status), withoutBookkeeping(snapshot.neoset.status ?? {})) ? status : null,
    requeueAfter: wake.requeueAfter(),
    ...(o.canary.analysisDue ? { analysis: o.canary.analysisDue } : {}),
  };
}

/**
 * A status that differs from the stored one only in claims that died (their pods were written since)
 * is not worth a write of its own: a dead claim counts for nothing (observed.ts), and the next status
 * write drops it. Without this, every claim would cost a second status write to clear it. Nor are
 * the list versions the applier records with each status write (observedResourceVersions): they move
 * with every read.
 */
function withoutBookkeeping(status: NeoSetStatus): NeoSetStatus {
  const { updateClaims: _, observedResourceVersions: __, ...rest } = status;
  return rest;
}

/**
 * §2.0 "carry a pod as far as it can go": after a pod's first write, its next steps follow in the
 * same plan while nothing needs waiting for (a grace period, the kubelet, the budget) — each decided
 * on the pod as the previous write leaves it (pod-writes.ts), each written conditional on the
 * resourceVersion the previous write returned. A drain with no grace period is one invocation:
 * state annotation with gate False (one write), then the image patch, then (§4.9) the resize.
 */
function carry(o: Observed, v: PodView, first: Action, wake: Wakeups, duties: Duties): Action[] {
  const chain = [first];
  let pod = v.pod;
  for (let last = first; chain.length < 6; ) {
    // The kubelet acts next — but an image patch that recorded a resize is followed by it (§4.9).
    if (last.kind === 'deletePod' || last.kind === 'resizePod' || (last.kind === 'patchImages' && !last.state.targetResources)) break;
    pod = afterWrite(pod, last, o.nowMs);
    const next = nextStep(o, { ...v, pod, state: podInPlaceState(pod), revision: podRevision(pod) }, wake);
    if (!next || (duties === 'reconcile' && isReadinessDuty(next))) break;
    // One Event per pod update start: a patch chained on the drain that started it adds none.
    const quiet = next.kind === 'patchImages' && chain.some((a) => a.kind === 'markDraining') ? { event: undefined } : {};
    chain.push({ ...next, ...quiet, pod: { ...next.pod, chained: true } } as Action);
    last = next;
  }
  return chain;
}

/** The next write for a pod (one with no decision yet this round): its update's step, or its gate. */
function nextStep(o: Observed, v: PodView, wake: Wakeups): (Action & { pod: ObjectRef }) | null {
  const action =
    v.state !== null ? inFlightStep(o, v, wake).action : inHooks(v.pod) ? (lifecycleStep(o, v, wake, (p) => drain(o, p)).action ?? openGate(v.pod, o.nowMs)) : openGate(v.pod, o.nowMs);
  return action && 'pod' in action && !('metadata' in action.pod) ? (action as Action & { pod: ObjectRef }) : null;
}

/**
 * Writes that do not depend on the spec, so need no claim (§2.0): the readiness gate (pod facts),
 * the end of an in-place update (pod facts; an abandoned drain only gives back what it took), Events.
 */
const UNCLAIMED = new Set<Action['kind']>(['setInPlaceReady', 'finishInPlaceUpdate', 'recordEvent']);

/** §4.1: orphans the NeoSet selects become its own before anything else is done to them. */
function adoptions(o: Observed, touched: Set<string>): Action[] {
  const owner = [neosetOwnerRef(o.neoset, true)];
  const actions: Action[] = [];
  for (const v of o.pods.filter((p) => p.orphan)) {
    touched.add(v.name);
    actions.push({
      kind: 'adoptPod',
      object: v.ref,
      ownerReferences: [...(v.pod.metadata.ownerReferences ?? []), ...owner],
      event: { type: 'Normal', reason: 'SuccessfulAdopt', message: `adopted orphan Pod ${v.name}` },
    });
  }
  for (const r of o.orphanRevisions) {
    actions.push({
      kind: 'adoptRevision',
      object: objectRef(r.metadata),
      ownerReferences: [...(r.metadata.ownerReferences ?? []), ...owner],
      event: { type: 'Normal', reason: 'SuccessfulAdopt', message: `adopted orphan ControllerRevision ${r.metadata.name}` },
    });
  }
  return actions;
}

/**
 * §2.0: a live claim this decision does not start — paused, Failed, the partition raised, the template
 * back, or the budget overspent — is released: a pod write that moves its resourceVersion past the
 * claimed one, so that the claimer's write can no longer land. The applier makes these writes before
 * the status: once a status acknowledging a pause or a raised partition is written, no earlier claim
 * can still start a pod.
 */
function releases(o: Observed, touched: Set<string>): Action[] {
  return o.pods
    .filter((v) => v.claimed && !touched.has(v.name))
    .map((v) => {
      touched.add(v.name);
      return { kind: 'releaseClaim', pod: v.ref } as const;
    });
}

/**
 * Revisions that must not be pruned: on a pod (label or in-place target), current, update (§4.2) —
 * and those the status written so far still names: the status is written after the prune, so a crash
 * in between must not leave it naming a deleted revision. They go in the next decision.
 */
function liveRevisions(o: Observed): Set<string> {
  const written = [o.neoset.status?.currentRevision, o.neoset.status?.updateRevision].filter((r) => r !== undefined);
  const live = new Set([o.current.name, o.update.name, o.revisions.update.name, ...written]);
  for (const v of o.pods) {
    if (v.revision) live.add(v.revision);
    if (v.state) live.add(v.state.revision);
  }
  return live;
}
