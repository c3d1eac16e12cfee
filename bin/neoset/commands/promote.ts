import type { Cluster } from '../cluster.ts';
import { EXIT_OK } from '../errors.ts';
import { readNeoSet, ref } from '../neosets.ts';
import { promotePatch, promotion } from '../promotion.ts';
import { writeNeoSet } from '../write.ts';
import type { Io } from './io.ts';

export async function promote({ client, namespace }: Cluster, name: string, full: boolean, io: Io): Promise<number> {
  const neoset = await readNeoSet(client, namespace, name);
  const step = promotion(neoset, full);
  if (!step) {
    io.out.write(`${ref(name)} is already fully promoted (partition 0, not paused)\n`);
    return EXIT_OK;
  }
  await writeNeoSet(client, neoset, { patch: 'merge', body: promotePatch(neoset, step) });
  const moved = step.from === step.to ? `partition ${step.to}` : `partition ${step.from} -> ${step.to}`;
  io.out.write(`${ref(name)} promoted: ${moved}${step.resumes ? ', resumed' : ''}\n`);
  return EXIT_OK;
}
