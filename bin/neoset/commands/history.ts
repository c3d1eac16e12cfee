import type { Cluster } from '../cluster.ts';
import { EXIT_OK, notFound } from '../errors.ts';
import { formatHistory, formatRevision } from '../history-view.ts';
import { listRevisions, readNeoSet, ref } from '../neosets.ts';
import type { Io } from './io.ts';

export async function history({ client, namespace }: Cluster, name: string, revision: number | undefined, io: Io): Promise<number> {
  const neoset = await readNeoSet(client, namespace, name);
  const revisions = await listRevisions(client, neoset);
  if (revision === undefined) {
    if (revisions.length === 0) io.err.write(`${ref(name)} has no revisions yet (the controller writes one for each template it sees)\n`);
    else io.out.write(formatHistory(neoset, revisions));
    return EXIT_OK;
  }
  const found = revisions.find((r) => r.revision === revision);
  if (!found) throw notFound(`revision ${revision} not found for ${ref(name)} (revisions: ${revisions.map((r) => r.revision).join(', ') || 'none'})`);
  io.out.write(formatRevision(neoset, found));
  return EXIT_OK;
}
