// The rollout phase (§4.6), a pure function of the snapshot:
// Failed > Paused > Canary > RollingOut > Completed > Idle.
import { rolloutInProgress, type Rollout } from '../target.ts';
import type { Phase } from '../../api/neoset.ts';
import type { FailureReason } from '../failure.ts';
import { inHooks } from '../pods/lifecycle-state.ts';

/**
 * A rollout is pending while currentRevision != updateRevision, or while a pod 0..replicas-1 has an
 * update in flight or is in its update hooks (§4.10), or has ordinal >= partition and is not on updateRevision (after a rollback to the
 * current revision, current == update but pods still have to move back).
 */
export function rolloutPending(o: Rollout): boolean {
  if (rolloutInProgress(o)) return true;
  const { partition } = o;
  return o.pods.some((v) => v.inRange && !v.terminating && (v.state !== null || inHooks(v.pod) || (v.ordinal >= partition && v.revision !== o.target.name)));
}

export function phaseOf(o: Rollout, pending: boolean, failure: FailureReason | null): Phase {
  const { pause } = o.neoset.spec.updateStrategy;
  if (failure) return 'Failed';
  // §4.11: a canary pause without duration, or an inconclusive analysis, waits like a pause.
  if (pending && (pause || o.canary.waiting)) return 'Paused';
  if (pending) return o.partition > 0 ? 'Canary' : 'RollingOut';
  // "A rollout has happened": the update revision is not the first one ever numbered (survives pruning).
  return o.target.number > 1 ? 'Completed' : 'Idle';
}
