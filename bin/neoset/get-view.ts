// `kubectl neoset get`: the seed's table (the CRD's printer columns, SPEC §3) plus UPDATING, the pods
// being updated now (status.currentUpdatePods; the seed's "Current Update Pod").
import type { NeoSet } from '../../shared/api/neoset.ts';
import { formatTable, humanDuration } from './table.ts';

const HEADER = ['NAME', 'REPLICAS', 'READY', 'UPDATED', 'PHASE', 'CURRENT', 'TARGET', 'AGE', 'UPDATING'];

/** §4.11: the canary step column, shown when a NeoSet has steps: `2/5`, or `done`. */
function stepColumn({ spec, status = {} }: NeoSet): string {
  const steps = spec.updateStrategy.canary?.steps.length ?? 0;
  const c = status.canary;
  if (steps === 0 || !c) return '-';
  if (c.abort) return `${c.abort.reason}@${Math.min(c.stepIndex + 1, steps)}/${steps}`;
  return c.stepIndex >= steps ? 'done' : `${c.stepIndex + 1}/${steps}`;
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
