// A NeoSet's pods as the data-format rule needs them (SPEC §4.7): name and controller-revision-hash,
// only those the NeoSet controls or would adopt (controlOf, §4.1: a namesake's pods are not ours).
// Read in pages with only name and revision kept, so a NeoSet of 1000 pods costs one page of memory
// at a time (admission holds it inside a webhook call; the plugin's `rollout undo` reads the same).
import { LABEL_NEOSET_NAME, LABEL_REVISION_HASH } from '../api/names.ts';
import type { NeoSet } from '../api/neoset.ts';
import type { PodOnRevision } from '../core/revisions/data-format.ts';
import type { ObjectMeta } from '../core/objects.ts';
import { controlOf } from '../core/ownership.ts';
import type { KubeClient } from './client.ts';
import { paths } from './paths.ts';

const PAGE = 500;

type List<T> = { items?: T[]; metadata?: { continue?: string } };

/** Every item of a list by label selector, page by page (`limit` and `continue`). */
export async function* listPages<T>(client: KubeClient, path: string, labelSelector: string, signal?: AbortSignal): AsyncGenerator<T[]> {
  let token: string | undefined;
  do {
    const list = await client.request<List<T>>('GET', path, { query: { labelSelector, limit: PAGE, continue: token }, signal });
    yield list.items ?? [];
    token = list.metadata?.continue || undefined;
  } while (token);
}

export const neosetSelector = (neoset: NeoSet) => `${LABEL_NEOSET_NAME}=${neoset.metadata.name}`;

export async function listPodsOnRevisions(client: KubeClient, neoset: NeoSet, namespace: string, signal?: AbortSignal): Promise<PodOnRevision[]> {
  const pods: PodOnRevision[] = [];
  for await (const page of listPages<{ metadata: ObjectMeta }>(client, paths.pods(namespace), neosetSelector(neoset), signal)) {
    for (const p of page) if (controlOf(neoset, p) !== 'other') pods.push({ name: p.metadata.name, revision: p.metadata.labels?.[LABEL_REVISION_HASH] });
  }
  return pods;
}
