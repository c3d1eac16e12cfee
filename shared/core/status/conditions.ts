// The NeoSet conditions (§4.6, seed ch.8): Available, Progressing, Paused, ReadyForUpgrade, each with
// observedGeneration; lastTransitionTime changes only when the status flips (monitoring alerts on
// "False for 5 minutes" rely on it).
import type { Condition, Phase } from '../../api/neoset.ts';
import type { Failure } from '../failure.ts';
import { CONDITION_CLAIMS_RESIZED, type ClaimsDraft } from './claims-condition.ts';
import { rfc3339 } from '../time.ts';

export interface ConditionFacts {
  generation: number;
  nowMs: number;
  replicas: number;
  maxUnavailable: number;
  /** Pods 0..replicas-1 available (Ready for minReadySeconds). */
  available: number;
  /** Pods 0..replicas-1 on updateRevision with no update in flight. */
  updated: number;
  unfinished: boolean;
  pause: boolean;
  /** §4.11: the canary steps wait (a pause without duration, an inconclusive analysis). */
  canaryWaiting: { reason: string; message: string } | null;
  phase: Phase;
  failure: Failure | null;
  /** §4.12: the ClaimsResized condition (claims-condition.ts); absent without storage in the claim templates. */
  claims?: ClaimsDraft | null;
}

type Draft = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

export function neosetConditions(f: ConditionFacts, previous: Condition[] | undefined): Condition[] {
  const isAvailable = f.available >= f.replicas - f.maxUnavailable;
  const progressing = f.unfinished && !f.failure;
  const updated = `${f.updated}/${f.replicas} updated`;
  const drafts: Draft[] = [
    {
      type: 'Available',
      status: isAvailable ? 'True' : 'False',
      reason: isAvailable ? 'EnoughReplicas' : 'NotEnoughReplicas',
      message: `${f.available}/${f.replicas} ready`,
    },
    {
      type: 'Progressing',
      status: progressing ? 'True' : 'False',
      reason: f.failure ? f.failure.reason : f.phase,
      message: f.failure ? `${updated}; ${f.failure.message}` : updated,
    },
    f.pause || !f.canaryWaiting
      ? { type: 'Paused', status: f.pause ? 'True' : 'False', reason: f.pause ? 'PausedByUser' : 'NotPaused', message: `pause=${f.pause}` }
      : { type: 'Paused', status: 'True', reason: f.canaryWaiting.reason, message: f.canaryWaiting.message },
    {
      type: 'ReadyForUpgrade',
      status: isAvailable && !progressing ? 'True' : 'False',
      reason: !isAvailable ? 'NotAvailable' : progressing ? 'RolloutInProgress' : 'ReadyForUpgrade',
      message: !isAvailable ? 'not enough replicas available' : progressing ? updated : 'a new rollout can start',
    },
  ];
  if (f.claims) drafts.push({ type: CONDITION_CLAIMS_RESIZED, ...f.claims });
  const computed = drafts.map((d) => {
    const old = previous?.find((c) => c.type === d.type);
    const lastTransitionTime = old && old.status === d.status ? old.lastTransitionTime : rfc3339(f.nowMs);
    return { ...d, lastTransitionTime, observedGeneration: f.generation };
  });
  // ReplicaFailure is the applier's: set when a write failed, cleared when a plan went through (§4.6).
  const failure = previous?.find((c) => c.type === CONDITION_REPLICA_FAILURE);
  return failure ? [...computed, failure] : computed;
}

/** A write the API server refused (quota, validation, a name taken): set by the applier, with its message. */
export const CONDITION_REPLICA_FAILURE = 'ReplicaFailure';
