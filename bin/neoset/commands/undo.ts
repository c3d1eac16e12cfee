import type { Cluster } from '../cluster.ts';
import { notFound } from '../errors.ts';
import { listRevisions, readNeoSet, ref } from '../neosets.ts';
import { writeNeoSet } from '../write.ts';
import { hasTemplateOf, templateOf, undoPatch, undoTarget } from '../../../shared/core/revisions/rollback.ts';
import { imagesOf } from '../revisions.ts';

/**
 * SPEC §4.7: copy the revision's template into spec.template; the controller does the rest.
 * Returns what it did, as the CLI prints it and the dashboard shows it.
 */
export async function undo({ client, namespace }: Cluster, name: string, toRevision: number | undefined): Promise<string> {
  const neoset = await readNeoSet(client, namespace, name);
  const revisions = await listRevisions(client, neoset);
  const target = undoTarget(neoset, revisions, toRevision);
  if (!target) {
    throw notFound(
      toRevision === undefined
        ? `${ref(name)} has no previous revision to roll back to`
        : `revision ${toRevision} not found for ${ref(name)} (revisions: ${revisions.map((r) => r.revision).join(', ') || 'none'})`,
    );
  }
  if (hasTemplateOf(neoset, target)) return `${ref(name)} skipped rollback (current template already matches revision ${target.revision})`;
  await writeNeoSet(client, neoset, { patch: 'json', body: undoPatch(neoset, target) });
  return `${ref(name)} rolled back to revision ${target.revision} (${imagesOf(templateOf(target))})`;
}
