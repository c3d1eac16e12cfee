// `kubectl neoset get`: the seed's table (the CRD's printer columns, SPEC §3) plus UPDATING, the pods
// being updated now (status.currentUpdatePods; the seed's "Current Update Pod").
import type { NeoSet } from '../../shared/api/neoset.ts';
import { canaryPosition, type CanaryPosition } from '../../shared/core/canary/position.ts';
import { formatTable, humanDuration } from './table.ts';

const HEADER = ['NAME', 'REPLICAS', 'READY', 'UPDATED', 'PHASE', 'CURRENT', 'TARGET', 'AGE', 'UPDATING'];

/** A canary position as the plugin spells it: `2/5`, or `done`. */
export const stepText = (at: CanaryPosition): string => (at.done ? 'done' : `${at.index + 1}/${at.count}`);

/** §4.11: the canary step column, shown when a NeoSet has steps: `2/5`, `done`, or `AnalysisFailed@1/5`. */
function stepColumn({ spec, status = {} }: NeoSet): string {
  const c = status.canary;
  const at = canaryPosition(spec.updateStrategy.canary?.steps.length ?? 0, c, status.updateRevision);
  if (!c || !at) return '-';
  if (c.abort) return `${c.abort.reason}@${Math.min(at.index + 1, at.count)}/${at.count}`;
  return stepText(at);
}

export function formatNeoSets(neosets: NeoSet[], now: number): string {
  const withSteps = neosets.some((n) => (n.spec.updateStrategy.canary?.steps.length ?? 0) > 0);
  const table = formatRows(neosets, now);
  if (!withSteps) return formatTable(table);
  // The STEP column only where a canary has steps: the seed's table stays as it was otherwise.
  return formatTable(table.map((row, i) => [...row, i === 0 ? 'STEP' : stepColumn(neosets[i - 1])]));
}

function formatRows(neosets: NeoSet[], now: number): string[][] {
  const rows = neosets.map(({ metadata, spec, status = {} }) => [
    metadata.name,
    String(spec.replicas),
    String(status.readyReplicas ?? 0),
    String(status.updatedReplicas ?? 0),
    status.phase ?? '',
    status.currentImage ?? '',
    status.targetImage ?? '',
    metadata.creationTimestamp ? humanDuration(now - Date.parse(metadata.creationTimestamp)) : '<unknown>',
    status.currentUpdatePods?.length ? status.currentUpdatePods.join(',') : '<none>',
  ]);
  return [HEADER, ...rows];
}
