// A NeoSet's pods as the data-format rule needs them (SPEC §4.7): name and controller-revision-hash,
// only those the NeoSet controls or would adopt (controlOf, §4.1: a namesake's pods are not ours).
// Read in pages with only name and revision kept, so a NeoSet of 1000 pods costs one page of memory
// at a time (admission holds it inside a webhook call; the plugin's `rollout undo` reads the same).
import { LABEL_NEOSET_NAME, LABEL_REVISION_HASH } from '../api/names.ts';
import type { NeoSet } from '../api/neoset.ts';
import type { PodOnRevision } from '../core/revisions/data-format.ts';
import type { ObjectMeta } from '../core/objects.ts';
import { controlOf } from '../core/ownership.ts';
import type { KubeClient, RequestOptions } from './client.ts';
import { paths } from './paths.ts';

const PAGE = 500;

type List<T> = { items?: T[]; metadata?: { continue?: string } };

/** Every item of a list by label selector, page by page (`limit` and `continue`); `keep`: each item trimmed as it streams in (client.ts). */
export async function* listPages<T>(client: KubeClient, path: string, labelSelector: string, signal?: AbortSignal, keep: Pick<RequestOptions, 'trim' | 'longStrings'> = {}): AsyncGenerator<T[]> {
  let token: string | undefined;
  do {
    const list = await client.request<List<T>>('GET', path, { query: { labelSelector, limit: PAGE, continue: token }, signal, ...keep });
    yield list.items ?? [];
    token = list.metadata?.continue || undefined;
  } while (token);
}

/**
 * What the rule reads of a pod: its metadata (name, labels, owner), its long values (annotations) cut
 * before they are parsed (SPEC §2.5: 500 pods with 200 KiB of annotations each were 100 MB a page).
 */
const METADATA_ONLY: Pick<RequestOptions, 'trim' | 'longStrings'> = {
  trim: (pod) => {
    const p = pod as Record<string, unknown>;
    delete p.spec;
    delete p.status;
    return 0;
  },
  longStrings: { over: 1024, standIn: () => '""' },
};

export const neosetSelector = (neoset: NeoSet) => `${LABEL_NEOSET_NAME}=${neoset.metadata.name}`;

export async function listPodsOnRevisions(client: KubeClient, neoset: NeoSet, namespace: string, signal?: AbortSignal): Promise<PodOnRevision[]> {
  const pods: PodOnRevision[] = [];
  for await (const page of listPages<{ metadata: ObjectMeta }>(client, paths.pods(namespace), neosetSelector(neoset), signal, METADATA_ONLY)) {
    for (const p of page) if (controlOf(neoset, p) !== 'other') pods.push({ name: p.metadata.name, revision: p.metadata.labels?.[LABEL_REVISION_HASH] });
  }
  return pods;
}
