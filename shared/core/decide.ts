// decide(snapshot, now) -> plan: the whole NeoSet decision as a pure function (SPEC §2, §4), and
// only the order of its parts: observe the snapshot (observed.ts), set the rollout target
// (target.ts), then one rule per SPEC section, then the status (status/).
//
// The plan's status is written first when the plan claims (§2.0: claim before act; see Plan.claim),
// else last. Order of the actions, so that applying any prefix of the plan (a 409 or a crash stops
// the applier) leaves a state from which the next decide() finishes the job — memory before effects:
//   0. adoption of orphans (§4.1), before anything else is done to them;
//   1. revisions (createRevision / renumberRevision) before any pod labelled with them;
//   2. volume claims' owners, then each missing volume claim before its pod, the condemned pod's
//      volume claims before the pod (§4.3);
//   3. one write per pod: scaling deletes, else its next step (pod-step.ts: an update in flight,
//      its hooks, its gate), else the start of an update (the state annotation before the condition),
//      after the claims that grow (§4.12: each PVC's request, on the same budget);
//   4. releasing the update claims it does not start (written by the applier BEFORE the status:
//      actions.ts writeOrder); 5. Events not tied to a write; 6. pruning history.
import { needsClaim } from './actions.ts';
import { adoptions } from './adoption.ts';
import type { Failure } from './failure.ts';
import { startUpdate } from './hooks/lifecycle.ts';
import { sameJson } from './json.ts';
import type { NeoSetStatus } from '../api/neoset.ts';
import type { PersistentVolumeClaim } from './objects.ts';
import { observe } from './observed.ts';
import type { Action, Plan, PodStep } from './plan.ts';
import { carry, podStep, type Duties } from './pod-step.ts';
import { availableSince } from './pods/availability.ts';
import { pruneRevisions } from './revisions/revisions.ts';
import { volumeClaimOwnerActions, scalingActions } from './scaling/scaling.ts';
import type { Snapshot } from './snapshot.ts';
import { rolloutUnfinished } from './status/phase.ts';
import { computeStatus } from './status/status.ts';
import { liveRevisions, rolloutTarget, type Rollout } from './target.ts';
import { Wakeups } from './time.ts';
import type { ClaimsResizing } from './update/budget.ts';
import { claimGrowth } from './update/claim-growth.ts';
import { inPlaceOnlyBlocked, releases, startUpdates } from './update/starts.ts';

export type { Duties } from './pod-step.ts';

export function decide(snapshot: Snapshot, now: Date, duties: Duties = 'all'): Plan {
  // A NeoSet being deleted: the garbage collector removes what it owns; nothing to decide.
  if (snapshot.neoset.metadata.deletionTimestamp) return { actions: [], claim: false, status: null, requeueAfter: null };
  const observed = observe(snapshot, now.getTime());
  const o: Rollout & ClaimsResizing = { ...observed, ...rolloutTarget(observed, snapshot.analysis) };
  const wake = new Wakeups(o.nowMs);
  const pvcs = new Map<string, PersistentVolumeClaim>(snapshot.pvcs.map((p) => [p.metadata.name, p]));
  const touched = new Set<string>();
  const actions: Action[] = [...adoptions(o, touched), ...o.revisions.actions, ...volumeClaimOwnerActions(o, pvcs), ...scalingActions(o, pvcs, touched)];
  const events: Action[] = [];
  let failure: Failure | null = null;
  const fail = (f: NonNullable<PodStep['failure']>) => {
    failure ??= { reason: f.reason, message: f.message };
    events.push({ kind: 'recordEvent', key: f.key, event: { type: 'Warning', reason: f.reason, message: f.message } });
  };

  for (const v of o.pods) {
    if (touched.has(v.name) || v.terminating || v.terminalPhase || v.orphan) continue;
    const step = podStep(o, v, wake, duties);
    if (step.failure) fail(step.failure);
    if (step.action) {
      actions.push(...carry(o, v, step.action, wake, duties));
      touched.add(v.name);
    }
  }
  const blocked = inPlaceOnlyBlocked(o);
  if (blocked) fail(blocked);
  // §4.12: claims that grow, on the starts' budget: decided first, so that the pods whose claims
  // resize (this decision's patches too) count as in their update when the starts are chosen.
  const growth = claimGrowth(o, pvcs, failure !== null || o.canary.failure !== null);
  if (growth.failure) fail(growth.failure);
  o.claimsResizing = growth.resizing;
  if (growth.wakeAt !== null) wake.at(growth.wakeAt);
  actions.push(...growth.patches);
  events.push(...growth.events);
  const starts = startUpdates(o, failure !== null, (v) => !touched.has(v.name));
  // §4.11: an aborted canary is Failed too, but its pods must move (back to currentRevision).
  failure = o.canary.failure ?? failure;
  events.push(...o.canary.events);
  if (o.canary.wakeAt !== null) wake.at(o.canary.wakeAt);
  for (const { view, rescue } of starts.started) {
    actions.push(...carry(o, view, startUpdate(o, view, rescue), wake, duties));
    touched.add(view.name);
  }
  actions.push(...releases(o, touched));

  if (o.advanced && o.neoset.status?.currentRevision) {
    events.push({
      kind: 'recordEvent',
      key: `rollout-completed/${o.target.name}/${o.target.number}`,
      event: { type: 'Normal', reason: 'RolloutCompleted', message: `all ${o.replicas} pods run revision ${o.target.name}: it is the current revision` },
    });
  }
  actions.push(...events, ...pruneRevisions(o.revisions, liveRevisions(o), o.neoset.spec.revisionHistoryLimit));

  // §4.5: a pod Ready for less than minReadySeconds becomes available later; look again then.
  for (const v of o.pods) {
    const at = availableSince(v.pod, o.minReadySeconds);
    if (at !== null) wake.at(at);
  }
  const status = computeStatus(o, rolloutUnfinished(o) || growth.unfinished, failure, starts.claims, growth);
  const claim = actions.some(needsClaim);
  return {
    actions,
    claim,
    status: claim || !sameJson(withoutBookkeeping(status), withoutBookkeeping(snapshot.neoset.status ?? {})) ? status : null,
    requeueAfter: wake.requeueAfter(),
    ...(o.canary.analysisDue ? { analysis: o.canary.analysisDue } : {}),
  };
}

/**
 * A status that differs from the stored one only in update claims that died (their pods were
 * written since) is not worth a write of its own: a dead claim counts for nothing (observed.ts), and
 * the next status write drops it. Without this, every claim would cost a second status write to
 * clear it. Nor are the list versions the applier records with each status write
 * (observedResourceVersions): they move with every read.
 */
function withoutBookkeeping(status: NeoSetStatus): NeoSetStatus {
  const { updateClaims: _, observedResourceVersions: __, ...rest } = status;
  return rest;
}
