// Writes to a NeoSet, each guarded by the resourceVersion it was computed from (SPEC §2): if someone
// else changed the NeoSet in between, the command decides again on a fresh read when what it decided
// on is unchanged (decideAndWrite), and otherwise stops and says so instead of overwriting them.
import { isDeepStrictEqual } from 'node:util';
import type { NeoSet } from '../../shared/api/neoset.ts';
import { ApiError, type KubeClient, type PatchType } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { ConflictError } from './errors.ts';
import { readNeoSet, ref } from './neosets.ts';

/** How many times a command is decided again from a fresh read before its conflict is reported. */
export const ATTEMPTS = 5;

/** A write of `name` the API server refused as stale (409) becomes the command's ConflictError; anything else passes. */
export function throwIfConflict(err: unknown, name: string): void {
  if (err instanceof ApiError && err.isConflict) throw new ConflictError(`${ref(name)} was changed by someone else while this command ran; nothing was written: run it again`);
}

/** `warn` is told the API server's warnings (admission's, e.g. an accepted data format downgrade), as kubectl prints them. */
export async function writeNeoSet(
  client: KubeClient,
  neoset: NeoSet,
  change: { patch: PatchType; body: unknown },
  warn?: (text: string) => void,
): Promise<void> {
  const { name, namespace = 'default' } = neoset.metadata;
  try {
    await client.request('PATCH', paths.neoset(namespace, name), warn ? { ...change, warning: warn } : change);
  } catch (err) {
    // Every patch here carries metadata.resourceVersion: the API server answers 409 when it is stale.
    throwIfConflict(err, name);
    throw err;
  }
}

/**
 * Reads the NeoSet and runs `command` on it — a decision and a write guarded by the read's
 * resourceVersion. When that write loses to someone else's, it reads again and decides again, as long
 * as what the decision rests on (`basis`) is what it first read: mid-rollout the controller writes
 * status and pod counts several times a second, and `rollout pause` — the brake — must not fail on
 * those (a run of the brake test did, "changed by someone else"). A change to the basis itself (the
 * spec another user changed, a canary step someone else promoted) still stops the command and says so.
 */
export async function decideAndWrite<T>(
  client: KubeClient,
  namespace: string,
  name: string,
  basis: (neoset: NeoSet) => unknown,
  command: (neoset: NeoSet) => Promise<T>,
): Promise<T> {
  const first = await readNeoSet(client, namespace, name);
  let current = first;
  for (let attempt = 1; ; attempt++) {
    try {
      return await command(current);
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= ATTEMPTS) throw err;
      current = await readNeoSet(client, namespace, name);
      if (!isDeepStrictEqual(basis(current), basis(first))) throw err;
    }
  }
}
