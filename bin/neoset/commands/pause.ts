import type { Cluster } from '../cluster.ts';
import { readNeoSet, ref } from '../neosets.ts';
import { writeNeoSet } from '../write.ts';

/**
 * pause / resume: set spec.updateStrategy.pause; a no-op, said plainly, when it already has that value.
 * Returns what it did, in the words the CLI prints and the dashboard shows.
 */
export async function setPause({ client, namespace }: Cluster, name: string, pause: boolean): Promise<string> {
  const neoset = await readNeoSet(client, namespace, name);
  if (neoset.spec.updateStrategy.pause === pause) return `${ref(name)} ${pause ? 'is already paused' : 'is not paused'}`;
  await writeNeoSet(client, neoset, { patch: 'merge', body: { metadata: { resourceVersion: neoset.metadata.resourceVersion }, spec: { updateStrategy: { pause } } } });
  return `${ref(name)} ${pause ? 'paused' : 'resumed'}`;
}
