import type { Cluster } from '../cluster.ts';
import { ref } from '../neosets.ts';
import { decideAndWrite, writeNeoSet } from '../write.ts';

/**
 * pause / resume: set spec.updateStrategy.pause; a no-op, said plainly, when it already has that value.
 * Returns what it did, in the words the CLI prints and the dashboard shows.
 */
export async function setPause({ client, namespace }: Cluster, name: string, pause: boolean): Promise<string> {
  // Decided on the pause flag alone: the brake holds whatever else changes meanwhile.
  return decideAndWrite(client, namespace, name, (n) => n.spec.updateStrategy.pause, async (neoset) => {
    if (neoset.spec.updateStrategy.pause === pause) return `${ref(name)} ${pause ? 'is already paused' : 'is not paused'}`;
    await writeNeoSet(client, neoset, { patch: 'merge', body: { metadata: { resourceVersion: neoset.metadata.resourceVersion }, spec: { updateStrategy: { pause } } } });
    return `${ref(name)} ${pause ? 'paused' : 'resumed'}`;
  });
}
