// Writes to a NeoSet, each guarded by the resourceVersion it was computed from (SPEC §2): if someone
// else changed the NeoSet in between, the command stops and says so instead of overwriting them.
import type { NeoSet } from '../../shared/api/neoset.ts';
import { ApiError, type KubeClient, type PatchType } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { ConflictError } from './errors.ts';
import { ref } from './neosets.ts';

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
    if (err instanceof ApiError && err.isConflict) {
      throw new ConflictError(`${ref(name)} was changed by someone else while this command ran; nothing was written: run it again`);
    }
    throw err;
  }
}
