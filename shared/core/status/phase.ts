// The rollout phase (§4.6), a pure function of the snapshot:
// Failed > Paused > Canary > RollingOut > Completed > Idle.
import { rolloutInProgress, type Rollout } from '../target.ts';
import type { Phase } from '../../api/neoset.ts';
import type { FailureReason } from '../failure.ts';
import { inHooks } from '../pods/lifecycle-state.ts';
import { inUpdate } from '../observed.ts';

/**
 * The rollout has work left (§4.6: phase RollingOut/Canary/Paused rather than Completed): a new
 * revision to reach (rolloutInProgress: currentRevision != the target), or a pod in range with
 * an update in flight (inUpdate), in its update hooks (§4.10), or at position >= partition and not on the
 * target (after a rollback to the current revision, current == target but pods still have to move back).
 */
export function rolloutUnfinished(o: Rollout): boolean {
  if (rolloutInProgress(o)) return true;
  const { partition } = o;
  return o.pods.some((v) => v.inRange && !v.terminating && (inUpdate(v, o.target.name) || inHooks(v.pod) || (v.position >= partition && v.revision !== o.target.name)));
}

export function phaseOf(o: Rollout, unfinished: boolean, failure: FailureReason | null): Phase {
  const { pause } = o.neoset.spec.updateStrategy;
  if (failure) return 'Failed';
  // §4.11: a canary pause without duration, or an inconclusive analysis, waits like a pause.
  if (unfinished && (pause || o.canary.waiting)) return 'Paused';
  if (unfinished) return o.partition > 0 ? 'Canary' : 'RollingOut';
  // "A rollout has happened": the update revision is not the first one ever numbered (survives pruning).
  return o.target.number > 1 ? 'Completed' : 'Idle';
}
