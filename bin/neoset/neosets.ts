// Reads of NeoSets and their ControllerRevisions, parsed at the edge into the API's types.
import { NeoSet } from '../../shared/api/neoset.ts';
import { LABEL_NEOSET_NAME } from '../../shared/api/names.ts';
import type { ControllerRevision } from '../../shared/core/objects.ts';
import { controlOf } from '../../shared/core/ownership.ts';
import { ApiError, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { CliError, EXIT_API, notFound } from './errors.ts';

/** How kubectl names a NeoSet in messages: neoset.neo.io/mysql. */
export const ref = (name: string) => `neoset.neo.io/${name}`;

export async function readNeoSet(client: KubeClient, namespace: string, name: string): Promise<NeoSet> {
  try {
    return parse(await client.request('GET', paths.neoset(namespace, name)));
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound) throw notFound(`neosets.neo.io "${name}" not found in namespace "${namespace}"`);
    throw err;
  }
}

export async function listNeoSets(client: KubeClient, namespace: string): Promise<NeoSet[]> {
  const list = await client.request<{ items: unknown[] }>('GET', paths.neosets(namespace));
  return list.items.map(parse).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

/**
 * The NeoSet's revisions, oldest first: labelled with its name and the controller's by its rule
 * (§4.1, controlOf: controlled by its uid — not a namesake's — or an orphan it adopts).
 */
export async function listRevisions(client: KubeClient, neoset: NeoSet): Promise<ControllerRevision[]> {
  const { name, namespace = 'default' } = neoset.metadata;
  const list = await client.request<{ items: ControllerRevision[] }>('GET', paths.revisions(namespace), {
    query: { labelSelector: `${LABEL_NEOSET_NAME}=${name}` },
  });
  return list.items
    .filter((r) => controlOf(neoset, r) !== 'other')
    .sort((a, b) => a.revision - b.revision);
}

function parse(obj: unknown): NeoSet {
  const r = NeoSet.safeParse(obj);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const name = (obj as { metadata?: { name?: string } }).metadata?.name ?? '?';
  throw new CliError(EXIT_API, `${ref(name)} does not match the NeoSet API (${issue.path.join('.')}: ${issue.message})`);
}
