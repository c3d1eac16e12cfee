// Which NeoSets there are, by namespace/name only: what a resync tick sweeps (SPEC §2) and what a
// Reference-mode delete of a pod is matched against. Read as the API server's metadata client does —
// each NeoSet's metadata only (PartialObjectMetadataList) — and a page at a time, so naming the
// NeoSets holds neither their specs (up to etcd's 1.5 MiB each: 150 such NeoSets were 150 MiB in one
// list) nor more than a page's worth of metadata at once (SPEC §2.5 "lists paged or streamed").
import { ApiError, type KubeClient } from './client.ts';
import { paths } from './paths.ts';
import type { NeoSetKey } from './reconcile.ts';

/**
 * NeoSets per page (client-go's pager takes 500). A NeoSet's metadata is about 1 KiB, but a tenant may
 * write 256 KiB of annotations, and its managedFields grow with its spec: a page of 100 is 100 of them
 * at worst, and 1,500 NeoSets are 15 pages, fetched while the first pages' NeoSets are reconciled.
 */
export const NEOSET_KEYS_PAGE = 100;

/**
 * Metadata only, as kube-apiserver serves it for any resource (KEP-1601's "as=PartialObjectMetadataList");
 * plain JSON after it, so a server that cannot answer so still answers (with whole objects) rather than 406.
 */
export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json';

interface MetadataList {
  metadata?: { continue?: unknown };
  items?: unknown;
}

/**
 * The NeoSets of the cluster (namespace undefined) or of one namespace, a page at a time. A continue
 * token that expired meanwhile (410: the API server keeps the list's revision ~5 minutes) starts the
 * list over once, as client-go's pager falls back to a full list: the pages before may then come again.
 */
export async function* neosetKeyPages(client: KubeClient, namespace?: string, pageSize = NEOSET_KEYS_PAGE): AsyncGenerator<NeoSetKey[]> {
  let token: string | undefined;
  let restarted = false;
  for (;;) {
    let list: MetadataList;
    try {
      list = await client.request<MetadataList>('GET', paths.neosets(namespace), { query: { limit: pageSize, continue: token }, accept: METADATA_LIST_ACCEPT });
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 410 && token !== undefined && !restarted)) throw err;
      restarted = true;
      token = undefined;
      continue;
    }
    yield keysOf(list, namespace);
    const next = list.metadata?.continue;
    if (typeof next !== 'string' || next === '') return;
    token = next;
  }
}

/** Every NeoSet of the cluster or of one namespace, as namespace/name (all pages). */
export async function listNeoSetKeys(client: KubeClient, namespace?: string): Promise<NeoSetKey[]> {
  const keys: NeoSetKey[] = [];
  for await (const page of neosetKeyPages(client, namespace)) keys.push(...page);
  return keys;
}

/** The items' names; an item without a name string is skipped (nothing could be read by it). */
function keysOf(list: MetadataList, namespace: string | undefined): NeoSetKey[] {
  const items = Array.isArray(list.items) ? (list.items as { metadata?: { name?: unknown; namespace?: unknown } }[]) : [];
  const keys: NeoSetKey[] = [];
  for (const item of items) {
    const { name, namespace: ns } = item?.metadata ?? {};
    if (typeof name === 'string' && name !== '') keys.push({ namespace: typeof ns === 'string' && ns !== '' ? ns : (namespace ?? 'default'), name });
  }
  return keys;
}
