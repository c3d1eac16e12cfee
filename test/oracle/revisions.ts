// Which revision is the update revision and which the current one, re-derived from SPEC §4.2:
// updateRevision is the stored revision whose template equals spec.template (after a rollback the
// older one, renumbered to the top: the highest number wins); currentRevision is
// status.currentRevision when it is stored, else the update revision. Without the stored revisions
// (an e2e observer that only watches NeoSets and pods), both are read from status.
import type { NeoSet } from '../../shared/api/neoset.ts';
import type { ControllerRevision } from '../../shared/core/objects.ts';
import { sameJson } from './wire.ts';

export interface RevisionFacts {
  /** Undefined while spec.template has no stored revision yet (or, without revisions, no status). */
  update: string | undefined;
  current: string | undefined;
  /** A rollout is in progress: currentRevision != updateRevision (§4.3). */
  rolling: boolean;
  /** Names of the stored revisions; null when the observation has none. */
  stored: Set<string> | null;
  /** Revision numbers held by more than one stored revision (§4.2: numbers increase). */
  duplicateNumbers: number[];
}

export function resolveRevisions(neoset: NeoSet, revisions: ControllerRevision[] | undefined): RevisionFacts {
  const status = neoset.status;
  if (!revisions) {
    const update = status?.updateRevision;
    const current = status?.currentRevision ?? update;
    return { update, current, rolling: update !== undefined && current !== undefined && current !== update, stored: null, duplicateNumbers: [] };
  }
  const stored = new Set(revisions.map((r) => r.metadata.name));
  const equal = revisions
    .filter((r) => sameJson(r.data?.spec?.template, neoset.spec.template))
    .sort((a, b) => b.revision - a.revision)[0];
  const update = equal?.metadata.name;
  const named = status?.currentRevision;
  const current = named !== undefined && stored.has(named) ? named : update;
  const numbers = revisions.map((r) => r.revision);
  const duplicateNumbers = [...new Set(numbers.filter((n, i) => numbers.indexOf(n) !== i))];
  // A template with no stored revision yet is a new update revision: a rollout from `current`.
  return { update, current, rolling: current !== undefined && current !== update, stored, duplicateNumbers };
}
