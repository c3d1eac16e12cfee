import type { Cluster } from '../cluster.ts';
import { EXIT_OK } from '../errors.ts';
import { formatNeoSets } from '../get-view.ts';
import { listNeoSets, readNeoSet } from '../neosets.ts';
import type { Io } from './io.ts';

export async function get({ client, namespace }: Cluster, name: string | undefined, io: Io): Promise<number> {
  const neosets = name === undefined ? await listNeoSets(client, namespace) : [await readNeoSet(client, namespace, name)];
  // kubectl get: an empty list is no error, and the notice goes to stderr.
  if (neosets.length === 0) io.err.write(`No resources found in ${namespace} namespace.\n`);
  else io.out.write(formatNeoSets(neosets, io.now()));
  return EXIT_OK;
}
