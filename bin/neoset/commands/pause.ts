import type { Cluster } from '../cluster.ts';
import { EXIT_OK } from '../errors.ts';
import { readNeoSet, ref } from '../neosets.ts';
import { writeNeoSet } from '../write.ts';
import type { Io } from './io.ts';

/** pause / resume: set spec.updateStrategy.pause; a no-op, said plainly, when it already has that value. */
export async function setPause({ client, namespace }: Cluster, name: string, pause: boolean, io: Io): Promise<number> {
  const neoset = await readNeoSet(client, namespace, name);
  if (neoset.spec.updateStrategy.pause === pause) {
    io.out.write(`${ref(name)} ${pause ? 'is already paused' : 'is not paused'}\n`);
    return EXIT_OK;
  }
  await writeNeoSet(client, neoset, { patch: 'merge', body: { metadata: { resourceVersion: neoset.metadata.resourceVersion }, spec: { updateStrategy: { pause } } } });
  io.out.write(`${ref(name)} ${pause ? 'paused' : 'resumed'}\n`);
  return EXIT_OK;
}
