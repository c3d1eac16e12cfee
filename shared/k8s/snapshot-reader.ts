// Reads the Snapshot that decide() needs: the NeoSet and the objects it owns, in four parallel reads.
import { z } from 'zod';
import { LABEL_NEOSET_NAME } from '../api/names.ts';
import { NeoSet } from '../api/neoset.ts';
import type { ControllerRevision, ObjectMeta, PersistentVolumeClaim, Pod } from '../core/k8s.ts';
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

/** Objects the NeoSet controls: a controller ownerReference with its uid (labels alone can be forged). */
const ownedBy = (uid: string | undefined) => (o: { metadata: ObjectMeta }) =>
  o.metadata.ownerReferences?.some((r) => r.uid === uid && r.controller) ?? false;

/** The snapshot of one NeoSet, or null when it does not exist. */
export async function readSnapshot(client: KubeClient, namespace: string, name: string): Promise<Snapshot | null> {
  const labelSelector = `${LABEL_NEOSET_NAME}=${name}`;
  const query = { labelSelector };
  const [raw, pods, revisions, pvcs] = await Promise.all([
    client.request<unknown>('GET', paths.neoset(namespace, name)).catch((err) => {
      if (err.isNotFound) return null;
      throw err;
    }),
    client.request<List<Pod>>('GET', paths.pods(namespace), { query }),
    client.request<List<ControllerRevision>>('GET', paths.revisions(namespace), { query }),
    client.request<List<PersistentVolumeClaim>>('GET', paths.pvcs(namespace), { query }),
  ]);
  if (raw === null) return null;
  const parsed = NeoSet.safeParse(raw);
  if (!parsed.success) throw new InvalidNeoSetError(namespace, name, parsed.error);
  const neoset = parsed.data;
  const owned = ownedBy(neoset.metadata.uid);
  return {
    neoset,
    pods: pods.items.filter(owned),
    revisions: revisions.items.filter(owned),
    // PVCs outlive their owner on Retain, so they are matched by label, as StatefulSet matches by name.
    pvcs: pvcs.items,
  };
}

/** Every NeoSet in the cluster (namespace undefined) or one namespace, as [namespace, name] pairs. */
export async function listNeoSets(client: KubeClient, namespace?: string): Promise<{ namespace: string; name: string }[]> {
  const list = await client.request<List<{ metadata: ObjectMeta }>>('GET', paths.neosets(namespace));
  return list.items.map((o) => ({ namespace: o.metadata.namespace ?? namespace ?? 'default', name: o.metadata.name }));
}
