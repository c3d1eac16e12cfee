// The arithmetic of `rollout promote`: the next canary step lowers the partition by one batch —
// maxUnavailable pods, resolved exactly as the controller resolves its budget (SPEC §4.4) — and
// clears pause.
import type { NeoSet } from '../../shared/api/neoset.ts';
import { resolveMaxUnavailable } from '../../shared/core/index.ts';

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
  // so the first promote updates the highest ordinal rather than doing nothing.
  const to = full ? 0 : Math.max(0, Math.min(from, replicas) - resolveMaxUnavailable(neoset.spec));
  if (from === 0 && !updateStrategy.pause) return undefined;
  return { from, to, resumes: updateStrategy.pause };
}

/** The merge patch of one step, guarded by the resourceVersion read: two promotes at once must not both lower the partition. */
export function promotePatch(neoset: NeoSet, step: Promotion): object {
  return { metadata: { resourceVersion: neoset.metadata.resourceVersion }, spec: { updateStrategy: { partition: step.to, pause: false } } };
}
