// Which pods the rollout moves to updateRevision, how, and which start now (§4.4).
import { isAvailable } from './availability.ts';
import { unavailableInRange, type Observed, type PodView } from './observed.ts';
import type { Action } from './plan.ts';
import { rfc3339 } from './time.ts';

/**
 * How a pod on revision `from` reaches updateRevision under the strategy: in place (only images and
 * template labels/annotations differ), by recreation (ReCreate, or InPlaceIfPossible with any other
 * difference), Blocked (InPlaceOnly with any other difference), or Never (OnDelete: the user deletes).
 * A pod whose revision is not stored cannot be compared, so it is never updated in place.
 */
export type UpdateMethod = 'InPlace' | 'Recreate' | 'Blocked' | 'Never';

export function updateMethod(o: Observed, from: string | undefined): UpdateMethod {
  const type = o.neoset.spec.updateStrategy.type;
  if (type === 'OnDelete') return 'Never';
  if (type === 'ReCreate') return 'Recreate';
  if (o.change(from, o.update.name)?.inPlace) return 'InPlace';
  return type === 'InPlaceOnly' ? 'Blocked' : 'Recreate';
}

/** §4.4: the rollout moves a pod in range, with ordinal >= partition, that is not on updateRevision. */
export function wantsUpdate(o: Observed, v: PodView): boolean {
  return v.inRange && v.ordinal >= o.neoset.spec.updateStrategy.partition && v.revision !== o.update.name;
}

/** The rollout can move this pod now or later (its strategy allows it). */
export function canMove(o: Observed, v: PodView): boolean {
  const method = updateMethod(o, v.revision);
  return wantsUpdate(o, v) && (method === 'InPlace' || method === 'Recreate');
}

/** Pods waiting for an update that InPlaceOnly forbids, in update order: the rollout is Failed with what differs (§4.4). */
export function blockedPods(o: Observed): { view: PodView; differences: string[] }[] {
  if (o.neoset.spec.updateStrategy.type !== 'InPlaceOnly') return [];
  return o.pods
    .filter((v) => !v.terminating && v.state === null && wantsUpdate(o, v) && updateMethod(o, v.revision) === 'Blocked')
    .sort((a, b) => b.ordinal - a.ordinal)
    .map((view) => ({ view, differences: o.change(view.revision, o.update.name)?.differences ?? ['(unknown revision)'] }));
}

/**
 * The updates that start in this decision, each a markDraining (the memory comes first).
 * Highest ordinal first. Pods already unavailable are taken first and outside the budget — they
 * cannot make availability worse; this is what lets a rollback rescue a broken rollout (§4.4). The
 * others take the budget: maxUnavailable minus the pods 0..replicas-1 unavailable now. Nothing
 * starts while paused or under OnDelete; only rescues start while the rollout is Failed.
 * `free` says which pods have no other write in this decision (one write per pod per decision).
 */
export function startUpdates(o: Observed, failed: boolean, free: (v: PodView) => boolean): Action[] {
  const strategy = o.neoset.spec.updateStrategy;
  if (strategy.pause || strategy.type === 'OnDelete') return [];
  const candidates = o.pods
    .filter((v) => !v.terminating && !v.finished && v.state === null && free(v) && canMove(o, v))
    .sort((a, b) => b.ordinal - a.ordinal);
  const rescue = candidates.filter((v) => !isAvailable(v.pod, o.minReadySeconds, o.nowMs));
  const budget = failed ? 0 : Math.max(0, o.maxUnavailable - unavailableInRange(o));
  const batch = candidates.filter((v) => isAvailable(v.pod, o.minReadySeconds, o.nowMs)).slice(0, budget);
  return [...rescue.map((v) => markDraining(o, v, true)), ...batch.map((v) => markDraining(o, v, false))];
}

function markDraining(o: Observed, v: PodView, rescue: boolean): Action {
  const grace = o.neoset.spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds;
  const how = updateMethod(o, v.revision) === 'InPlace' ? 'in place' : 'by recreation';
  return {
    kind: 'markDraining',
    pod: v.ref,
    state: {
      revision: o.update.name,
      phase: 'Draining',
      generation: o.generation,
      drainStartedAt: rfc3339(o.nowMs),
      ...(rescue ? { rescue: true } : {}),
    },
    event: {
      type: 'Normal',
      reason: 'UpdateStarted',
      message:
        `pod ${v.name}: update ${v.revision ?? '(none)'} -> ${o.update.name} ${how}` +
        `${rescue ? ' (pod unavailable: outside the maxUnavailable budget)' : ''}; draining for ${grace}s`,
    },
  };
}
