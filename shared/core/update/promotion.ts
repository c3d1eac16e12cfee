// The arithmetic of `kubectl neoset rollout promote` on a NeoSet without canary steps (the partition
// as a manual canary, SPEC §4.4): the next step lowers the partition by one batch — maxUnavailable
// pods, resolved exactly as the decision resolves its budget — and clears pause. With canary steps,
// promote moves the steps instead (canary/commands.ts).
import type { NeoSet } from '../../api/neoset.ts';
import { resolveMaxUnavailable } from './budget.ts';

export interface Promotion {
  from: number;
  to: number;
  /** pause was set and is cleared. */
  resumes: boolean;
}

/** undefined: already fully promoted (partition 0, not paused), nothing to write. */
export function promotion(neoset: NeoSet, full: boolean): Promotion | undefined {
  const { replicas, updateStrategy } = neoset.spec;
  const from = updateStrategy.partition;
  // A partition above replicas holds back no more pods than one equal to replicas: count from there,
  // so the first promote updates the highest ordinal rather than doing nothing. The partition counts
  // positions among the ordinals in range (§4.12, update/starts.ts wantsUpdate), so start and
  // reserveOrdinals change nothing here: a batch is still maxUnavailable pods.
  const to = full ? 0 : Math.max(0, Math.min(from, replicas) - resolveMaxUnavailable(neoset.spec));
  if (from === 0 && !updateStrategy.pause) return undefined;
  return { from, to, resumes: updateStrategy.pause };
}

/** The merge patch of one step, guarded by the resourceVersion read: two promotes at once must not both lower the partition. */
export function promotePatch(neoset: NeoSet, step: Promotion): object {
  return { metadata: { resourceVersion: neoset.metadata.resourceVersion }, spec: { updateStrategy: { partition: step.to, pause: false } } };
}
