// Which pods the rollout moves to updateRevision, how, and which start now (§4.4), under the
// claim-before-act rule (§2.0): the starts of a decision are claimed in status.updateClaims, written
// before any of them, conditional on the NeoSet's resourceVersion.
import type { Rollout } from '../target.ts';
import type { ObservedPod, UpdateClaim } from '../observed.ts';
import { withinBudget } from './budget.ts';
import type { Failure } from '../failure.ts';
import type { InPlaceState } from '../../api/inplace-state.ts';
import type { Action } from '../plan.ts';
import { inPlaceGate, isReady } from '../pods/conditions.ts';
import { gateTransitionTime } from '../readiness/gate-time.ts';
import { REASON_DRAINING } from '../readiness/readiness.ts';
import { rfc3339 } from '../time.ts';
import { inHooks } from '../pods/lifecycle-state.ts';
import { updateOrder } from './priority.ts';

/**
 * How a pod on revision `from` reaches updateRevision under the strategy: in place (only images and
 * template labels/annotations differ), by recreation (ReCreate, or InPlaceIfPossible with any other
 * difference), Blocked (InPlaceOnly with any other difference), or Never (OnDelete: the user deletes).
 * A pod whose revision is not stored cannot be compared, so it is never updated in place.
 */
export type UpdateMethod = 'InPlace' | 'ReCreate' | 'Blocked' | 'Never';

export function updateMethod(o: Rollout, from: string | undefined): UpdateMethod {
  const type = o.neoset.spec.updateStrategy.type;
  if (type === 'OnDelete') return 'Never';
  if (type === 'ReCreate') return 'ReCreate';
  if (o.change(from, o.target.name)?.inPlace) return 'InPlace';
  return type === 'InPlaceOnly' ? 'Blocked' : 'ReCreate';
}

/**
 * §4.4: the rollout moves a pod in range, at position >= partition, that is not on updateRevision.
 * §4.12: the partition compares the pod's position among the ordinals in range, as the StatefulSet
 * controller compares ordinal - start (stateful_set_control.go: replicas[ordinal-start], updated from
 * the top down to index partition) and OpenKruise counts the unreserved pods below it
 * (isCurrentRevisionNeeded): without start and reserveOrdinals it is the ordinal.
 */
export function wantsUpdate(o: Rollout, v: ObservedPod): boolean {
  return v.inRange && v.position >= o.partition && v.revision !== o.target.name;
}

/** The rollout can move this pod now or later (its strategy allows it). */
export function canMove(o: Rollout, v: ObservedPod): boolean {
  const method = updateMethod(o, v.revision);
  return wantsUpdate(o, v) && (method === 'InPlace' || method === 'ReCreate');
}

/**
 * Pods waiting for an update that InPlaceOnly forbids: the rollout is Failed with what differs on the
 * first of them in update order (§4.4), its Warning Event recorded once per target.
 */
export function inPlaceOnlyBlocked(o: Rollout): (Failure & { key: string }) | null {
  if (o.neoset.spec.updateStrategy.type !== 'InPlaceOnly') return null;
  const blocked = o.pods
    .filter((v) => !v.terminating && v.state === null && wantsUpdate(o, v) && updateMethod(o, v.revision) === 'Blocked')
    .sort(updateOrder(o.neoset.spec.updateStrategy.priorityStrategy));
  if (blocked.length === 0) return null;
  const [view] = blocked;
  const differences = o.change(view.revision, o.target.name)?.differences ?? ['(unknown revision)'];
  const others = blocked.length > 1 ? ` (and ${blocked.length - 1} more pods)` : '';
  const message = `pod ${view.name}${others}: InPlaceOnly cannot reach ${o.target.name} in place, differs in ${differences.join(', ')}`;
  return { reason: 'InPlaceOnlyBlocked', message, key: `inplaceonly-blocked/${o.target.name}` };
}

/**
 * §4.4 Rescue [revised]: a pod that is not Ready and on neither currentRevision nor updateRevision —
 * stuck on an abandoned revision, typically the broken one a rollback or a fix-forward left behind.
 * Nothing else bypasses the budget: not a Pending pod just created on currentRevision, not a Ready pod
 * inside minReadySeconds (it serves traffic).
 */
export function isRescue(o: Rollout, v: ObservedPod): boolean {
  // An aborted canary's pods (§4.11) go back within the budget: their revision is spec.template's, still wanted.
  return !isReady(v.pod) && v.revision !== o.current.name && v.revision !== o.target.name && v.revision !== o.revisions.update.name;
}

export interface Starts {
  /** The pods whose update starts, in update order (priority, then highest ordinal: priority.ts); how each start begins is §4.10's (hooks/lifecycle.ts startUpdate). */
  started: { view: ObservedPod; rescue: boolean }[];
  /** Every pod this decision starts, claimed in the status written before them (§2.0). */
  claims: UpdateClaim[];
}

/**
 * The updates that start in this decision, in update order: higher priority first (§4.12,
 * priorityStrategy), ties highest ordinal first (§4.4). Nothing starts while paused or under OnDelete — rescues included. Rescues go first
 * and outside the budget; then the pods a decision already claimed (they are counted as unavailable,
 * so they cost nothing more); then as many as the budget allows: at most maxUnavailable of pods
 * 0..replicas-1 unavailable (missing, not available, mid-update, or claimed) once they start. A pod
 * that is already unavailable adds nothing when it starts, but nothing starts while the budget is
 * overspent. While the rollout is Failed only rescues start.
 * `free` says which pods have no other write in this decision (one write per pod per decision).
 */
export function startUpdates(o: Rollout, failed: boolean, free: (v: ObservedPod) => boolean): Starts {
  const strategy = o.neoset.spec.updateStrategy;
  if (strategy.pause || strategy.type === 'OnDelete') return { started: [], claims: [] };
  // A pod another decision claimed toward another revision (the template changed since) is not taken
  // over: that decision's write may still land, toward its revision. It is released (releases()
  // below) and claimed afresh by a later decision.
  const claimedElsewhere = new Set(o.claims.filter((c) => c.revision !== undefined && c.revision !== o.target.name).map((c) => c.pod));
  const candidates = o.pods
    .filter((v) => !v.orphan && !v.terminating && !v.terminalPhase && v.state === null && !inHooks(v.pod) && free(v) && canMove(o, v) && !claimedElsewhere.has(v.name))
    .sort(updateOrder(strategy.priorityStrategy));
  const started: { view: ObservedPod; rescue: boolean }[] = candidates.filter((v) => isRescue(o, v)).map((view) => ({ view, rescue: true }));
  if (!failed) started.push(...withinBudget(o, candidates.filter((v) => !isRescue(o, v))).map((view) => ({ view, rescue: false })));
  return {
    started,
    claims: started.map(({ view }) => ({ pod: view.name, uid: view.ref.uid, resourceVersion: view.ref.resourceVersion, revision: o.target.name })),
  };
}

/**
 * §2.0: a live update claim this decision does not start — paused, Failed, the partition raised, the
 * template back, or the budget overspent — is released: a pod write that moves its resourceVersion
 * past the claimed one, so that the claimer's write can no longer land. The applier makes these
 * writes before the status (actions.ts writeOrder): once a status acknowledging a pause or a raised
 * partition is written, no earlier claim can still start a pod.
 */
export function releases(o: Rollout, touched: Set<string>): Action[] {
  return o.pods
    .filter((v) => v.claimed && !touched.has(v.name))
    .map((v) => {
      touched.add(v.name);
      return { kind: 'releaseClaim', pod: v.ref } as const;
    });
}

/** In-place step 1 of a pod's update (§4.4): its drain toward updateRevision. */
export function drain(o: Rollout, v: ObservedPod, rescue = isRescue(o, v)): Action {
  const grace = o.neoset.spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds;
  const how = updateMethod(o, v.revision) === 'InPlace' ? 'in place' : 'by recreation';
  return markDraining(o, v, drainingState(o, rfc3339(o.nowMs)), {
    type: 'Normal',
    reason: 'UpdateStarted',
    message:
      `pod ${v.name}: update ${v.revision ?? '(none)'} -> ${o.target.name} ${how}` +
      `${rescue ? ' (rescue: not Ready on an abandoned revision, outside the maxUnavailable budget)' : ''}; draining for ${grace}s`,
  });
}

/** The state of a pod entering Draining toward updateRevision (a start, or a re-target keeping drainStartedAt). */
export function drainingState(o: Rollout, drainStartedAt: string): InPlaceState {
  return { revision: o.target.name, phase: 'Draining', drainStartedAt, readiness: o.neoset.spec.updateStrategy.inPlaceUpdateStrategy.readiness };
}

/**
 * The one builder of markDraining: in-place step 1, the state annotation and the gate False in one
 * write. A gate already False keeps its lastTransitionTime: the pod has been out of the endpoints
 * since then, and the grace period counts from it (a re-target does not restart it).
 */
export function markDraining(o: Rollout, v: ObservedPod, state: InPlaceState, event: Extract<Action, { kind: 'markDraining' }>['event']): Action {
  const current = inPlaceGate(v.pod);
  const grace = o.neoset.spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds;
  const since = current?.status === 'False' && current.lastTransitionTime ? current.lastTransitionTime : gateTransitionTime('False', grace, o.nowMs);
  const gate = { status: 'False', reason: REASON_DRAINING, message: `draining for update to ${state.revision}`, lastTransitionTime: since } as const;
  return { kind: 'markDraining', pod: v.ref, state, gate, event };
}
