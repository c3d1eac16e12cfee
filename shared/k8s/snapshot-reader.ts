// Reads the Snapshot that decide() needs (§2.0): the children first — pods and revisions carrying
// the NeoSet's label, in parallel — and the NeoSet last, so that a claim another decision wrote
// after our pod read is in the status we read; then the claims (PVCs) only when the spec has claim
// templates. Which children are the NeoSet's own, and which orphans it adopts, is the core's call
// (observed.ts controlOf): labels alone can be forged.
import { z } from 'zod';
import { LABEL_NEOSET_NAME } from '../api/names.ts';
import { NeoSet } from '../api/neoset.ts';
import type { ControllerRevision, ObjectMeta, PersistentVolumeClaim, Pod } from '../core/objects.ts';
import type { Snapshot } from '../core/snapshot.ts';
import type { KubeClient } from './client.ts';
import { paths } from './paths.ts';

/** A NeoSet stored in the API server that does not satisfy the schema (admission was bypassed). */
export class InvalidNeoSetError extends Error {
  constructor(namespace: string, name: string, error: z.ZodError) {
    super(`NeoSet ${namespace}/${name} is invalid: ${z.prettifyError(error).replaceAll('\n', '; ')}`);
    this.name = 'InvalidNeoSetError';
  }
}

interface List<T> {
  items: T[];
}

/** The snapshot of one NeoSet, or null when it does not exist. */
export async function readSnapshot(client: KubeClient, namespace: string, name: string): Promise<Snapshot | null> {
  const query = { labelSelector: `${LABEL_NEOSET_NAME}=${name}` };
  const [pods, revisions] = await Promise.all([
    client.request<List<Pod>>('GET', paths.pods(namespace), { query }),
    client.request<List<ControllerRevision>>('GET', paths.revisions(namespace), { query }),
  ]);
  const raw = await client.request<unknown>('GET', paths.neoset(namespace, name)).catch((err) => {
    if (err.isNotFound) return null;
    throw err;
  });
  if (raw === null) return null;
  const parsed = NeoSet.safeParse(raw);
  if (!parsed.success) throw new InvalidNeoSetError(namespace, name, parsed.error);
  const neoset = parsed.data;
  // PVCs outlive their owner on Retain, so they are matched by label (given by name on AlreadyExists, apply.ts).
  const pvcs = neoset.spec.volumeClaimTemplates.length === 0 ? [] : (await client.request<List<PersistentVolumeClaim>>('GET', paths.pvcs(namespace), { query })).items;
  return { neoset, pods: pods.items, revisions: revisions.items, pvcs };
}

/** Every NeoSet in the cluster (namespace undefined) or one namespace, as [namespace, name] pairs. */
export async function listNeoSets(client: KubeClient, namespace?: string): Promise<{ namespace: string; name: string }[]> {
  const list = await client.request<List<{ metadata: ObjectMeta }>>('GET', paths.neosets(namespace));
  return list.items.map((o) => ({ namespace: o.metadata.namespace ?? namespace ?? 'default', name: o.metadata.name }));
}
