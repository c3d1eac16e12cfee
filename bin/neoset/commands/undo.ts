import type { Cluster } from '../cluster.ts';
import { EXIT_OK, notFound } from '../errors.ts';
import { listRevisions, readNeoSet, ref } from '../neosets.ts';
import { writeNeoSet } from '../write.ts';
import { sameJson } from '../../../shared/core/json.ts';
import { imagesOf, previousRevision, templateOf, undoPatch } from '../revisions.ts';
import type { Io } from './io.ts';

/** SPEC §4.7: copy the revision's template into spec.template; the controller does the rest. */
export async function undo({ client, namespace }: Cluster, name: string, toRevision: number | undefined, io: Io): Promise<number> {
  const neoset = await readNeoSet(client, namespace, name);
  const revisions = await listRevisions(client, neoset);
  const target = toRevision === undefined ? previousRevision(neoset, revisions) : revisions.find((r) => r.revision === toRevision);
  if (!target) {
    throw notFound(
      toRevision === undefined
        ? `${ref(name)} has no previous revision to roll back to`
        : `revision ${toRevision} not found for ${ref(name)} (revisions: ${revisions.map((r) => r.revision).join(', ') || 'none'})`,
    );
  }
  // The same comparison the controller uses to find a template's revision (SPEC §4.2).
  if (sameJson(templateOf(target), neoset.spec.template)) {
    io.out.write(`${ref(name)} skipped rollback (current template already matches revision ${target.revision})\n`);
    return EXIT_OK;
  }
  await writeNeoSet(client, neoset, { patch: 'json', body: undoPatch(neoset, target) });
  io.out.write(`${ref(name)} rolled back to revision ${target.revision} (${imagesOf(templateOf(target))})\n`);
  return EXIT_OK;
}
