import type { Cluster } from '../cluster.ts';
import { CliError, EXIT_API, notFound } from '../errors.ts';
import { listRevisions, ref } from '../neosets.ts';
import { decideAndWrite, throwIfConflict, writeNeoSet } from '../write.ts';
import { formatUndoDryRun } from '../undo-view.ts';
import type { NeoSet } from '../../../shared/api/neoset.ts';
import { hasTemplateOf, templateOf, undoPatch, undoTarget } from '../../../shared/core/revisions/rollback.ts';
import {
  ANNOTATION_DATA_FORMAT_DOWNGRADE as ACK,
  dataFormatOf,
  downgradeOf,
  downgradeValue,
  formatsRan,
  revisionFormat,
} from '../../../shared/core/revisions/data-format.ts';
import { jsonPointer } from '../../../shared/core/field-path.ts';
import { ApiError, type KubeClient } from '../../../shared/k8s/client.ts';
import { paths } from '../../../shared/k8s/paths.ts';
import { listPodsOnRevisions } from '../../../shared/k8s/pods-on-revisions.ts';
import { imagesOf } from '../revisions.ts';

export interface UndoOptions {
  /** Send the write with dryRun=All and print what it would do, admission's answer included. */
  dryRun?: boolean;
  /** Set the acknowledgement of the data format downgrade this rollback is (SPEC §4.7) in the same write. */
  acceptDataFormatDowngrade?: boolean;
  /** Told each warning the API server answers the write with (admission's), as kubectl prints them on stderr. */
  warn?: (text: string) => void;
}

/**
 * The acknowledgement annotation, after undoPatch's ops: set to `value`, or removed when there is none
 * to set — an acknowledgement is of one rollback, so a later undo without the flag does not inherit it.
 */
function acknowledgementOps(neoset: NeoSet, ops: object[], value: string | undefined): object[] {
  const path = jsonPointer(['metadata', 'annotations', ACK]);
  if (value === undefined) return neoset.metadata.annotations?.[ACK] === undefined ? [] : [{ op: 'remove', path }];
  const hasAnnotations = neoset.metadata.annotations !== undefined || ops.some((o) => (o as { path: string }).path === '/metadata/annotations');
  return [hasAnnotations ? { op: 'add', path, value } : { op: 'add', path: '/metadata/annotations', value: { [ACK]: value } }];
}

/** The same PATCH with dryRun=All: admission judges it as it would the real one. Returns its refusal, or null. */
async function refusalOf(client: KubeClient, neoset: NeoSet, body: object[]): Promise<string | null> {
  const { name, namespace = 'default' } = neoset.metadata;
  try {
    await client.request('PATCH', paths.neoset(namespace, name), { patch: 'json', body, query: { dryRun: 'All' } });
    return null;
  } catch (err) {
    throwIfConflict(err, name);
    if (err instanceof ApiError && err.status >= 400 && err.status < 500) return err.serverMessage;
    throw err;
  }
}

/**
 * SPEC §4.7: copy the revision's template into spec.template; the controller does the rest.
 * Returns what it did, as the CLI prints it and the dashboard shows it.
 */
export async function undo({ client, namespace }: Cluster, name: string, toRevision: number | undefined, opts: UndoOptions = {}): Promise<string> {
  // Decided on the spec: the revision to go back to is the one before the template read.
  return decideAndWrite(client, namespace, name, (n) => n.spec, (neoset) => undoOn(client, neoset, toRevision, opts));
}

/** One attempt, decided on `neoset` and written conditional on its resourceVersion. */
async function undoOn(client: KubeClient, neoset: NeoSet, toRevision: number | undefined, opts: UndoOptions): Promise<string> {
  const { name, namespace = 'default' } = neoset.metadata;
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
  // What the pods ran, read as admission reads it and judged by the same rule: only when asked
  // (a plain undo leaves the judging to admission, whose refusal names the flag).
  const pods = opts.dryRun || opts.acceptDataFormatDowngrade ? await listPodsOnRevisions(client, neoset, namespace) : [];
  const ran = formatsRan({ pods, revisions: revisions.map(revisionFormat), currentRevision: neoset.status?.currentRevision, updateRevision: neoset.status?.updateRevision });
  const downgrade = downgradeOf(dataFormatOf(templateOf(target)), ran);
  const acknowledged = opts.acceptDataFormatDowngrade && downgrade ? downgradeValue(downgrade) : undefined;
  const patch = undoPatch(neoset, target);
  const body = [...patch, ...acknowledgementOps(neoset, patch, acknowledged)];
  if (opts.dryRun) {
    const refusal = await refusalOf(client, neoset, body);
    const report = formatUndoDryRun({ neoset, target, revisions, pods, ran, downgrade, acknowledged, refusal });
    // Refused: exit 3, as the write itself would be.
    if (refusal !== null) throw new CliError(EXIT_API, report);
    return report;
  }
  await writeNeoSet(client, neoset, { patch: 'json', body }, opts.warn);
  const accepted = acknowledged
    ? `, accepting data format downgrade ${acknowledged} (annotation ${ACK})`
    : opts.acceptDataFormatDowngrade
      ? '; no data format downgrade to accept'
      : '';
  return `${ref(name)} rolled back to revision ${target.revision} (${imagesOf(templateOf(target))})${accepted}`;
}
