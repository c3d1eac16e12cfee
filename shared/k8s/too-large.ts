// A NeoSet too large to decide on (SPEC §2.5): its snapshot passed the run's byte limit (read-budget.ts).
// Retrying will not make it smaller, so the run ends answered — not an error, not an OOM — with a
// Warning Event on the NeoSet saying how large, the limit, and the variable that raises it, and a
// counter an operator can alert on. Other NeoSets keep their runs: nothing of this one is held.
import { Counter } from 'prom-client';
import { registry } from '../metrics/registry.ts';
import type { KubeClient } from './client.ts';
import { recordEvent } from './events.ts';
import { paths } from './paths.ts';
import type { TooLargeToDecide } from './read-budget.ts';

export const tooLargeTotal = new Counter({
  name: 'neoset_snapshot_too_large_total',
  help: 'Runs that ended without a decision because the NeoSet\'s snapshot passed NEOSET_SNAPSHOT_MAX_BYTES (a Warning Event TooLargeToDecide on it).',
  registers: [registry],
});

export const REASON_TOO_LARGE = 'TooLargeToDecide';

/** One object's metadata only (KEP-1601), plain JSON after it: the NeoSet's uid and generation, not its spec. */
const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json';

/**
 * Counts the refusal and records it on the NeoSet, once per generation (the Event's name comes from
 * it: a NeoSet refused on every tick has one Event, a new spec another). Best effort, like every Event.
 */
export async function reportTooLarge(client: KubeClient, key: { namespace: string; name: string }, err: TooLargeToDecide, now: Date): Promise<void> {
  tooLargeTotal.inc();
  const meta = await client
    .request<{ metadata?: { uid?: string; generation?: number } }>('GET', paths.neoset(key.namespace, key.name), { accept: METADATA_ACCEPT })
    .catch(() => null);
  const uid = meta?.metadata?.uid;
  if (!uid) return;
  const message = `not decided: ${err.message}. Raise ${err.variable} on the reconcile function, with its memory limit (README "Memory")`;
  await recordEvent(client, { ...key, uid }, `too-large/${meta.metadata?.generation ?? 0}`, { type: 'Warning', reason: REASON_TOO_LARGE, message }, now).catch(() => undefined);
}
