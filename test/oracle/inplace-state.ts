// The pod annotation neoset.neo.io/inplace-update-state (§4.4), read from its documented JSON form.
// Only the fields the SPEC names are read; any other field (the core may add and remove its own) is
// ignored, so no check can lean on a flag that the checked code writes about itself.
import { ANNOTATION_INPLACE_STATE } from '../../shared/api/names.ts';
import type { Pod } from '../../shared/core/objects.ts';

export interface InPlaceState {
  /** The revision the pod is moving to. */
  revision: string;
  phase: 'Draining' | 'Updating';
  drainStartedAt: string;
  startedAt?: string;
  /** container -> image being rolled out (step 2). */
  targetImages: Record<string, string>;
  /** container -> imageID reported before the patch (step 2). */
  previousImageIDs: Record<string, string>;
  /** container -> containerID before the patch: a restart onto a same-digest image shows here. */
  previousContainerIDs: Record<string, string>;
}

const record = (v: unknown): Record<string, string> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, string>) : {};

/**
 * The state a pod carries, or null. An annotation without the three fields every state has
 * (revision, phase, drainStartedAt) is no state that an update could be resumed from.
 */
export function inPlaceState(pod: Pod): InPlaceState | null {
  const raw = pod.metadata.annotations?.[ANNOTATION_INPLACE_STATE];
  if (!raw) return null;
  let s: Record<string, unknown>;
  try {
    s = record(JSON.parse(raw)) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof s.revision !== 'string' || (s.phase !== 'Draining' && s.phase !== 'Updating') || typeof s.drainStartedAt !== 'string') return null;
  return {
    revision: s.revision,
    phase: s.phase,
    drainStartedAt: s.drainStartedAt,
    ...(typeof s.startedAt === 'string' ? { startedAt: s.startedAt } : {}),
    targetImages: record(s.targetImages),
    previousImageIDs: record(s.previousImageIDs),
    previousContainerIDs: record(s.previousContainerIDs),
  };
}
