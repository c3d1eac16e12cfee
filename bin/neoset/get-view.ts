// `kubectl neoset get`: the seed's table (the CRD's printer columns, SPEC §3) plus UPDATING, the pods
// being updated now (status.currentUpdatePods; the seed's "Current Update Pod").
import type { NeoSet } from '../../shared/api/neoset.ts';
import { formatTable, humanDuration } from './table.ts';

const HEADER = ['NAME', 'REPLICAS', 'READY', 'UPDATED', 'PHASE', 'CURRENT', 'TARGET', 'AGE', 'UPDATING'];

export function formatNeoSets(neosets: NeoSet[], now: number): string {
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
  return formatTable([HEADER, ...rows]);
}
