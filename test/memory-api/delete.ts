// DELETE and the garbage collector. Preconditions are checked as rest.BeforeDelete checks them
// (uid first, then resourceVersion; a mismatch is a 409). A Pod is deleted gracefully
// (podStrategy.CheckGracefulDelete): it gets a deletionTimestamp and stays until its kubelet removes
// it — unless it was never scheduled or has already finished, when it goes at once. Other objects go
// at once, unless they carry finalizers: then they terminate until an update removes the last one.
import { isPlainObject } from '../../shared/core/json.ts';
import { conflict } from './errors.ts';
import { RESOURCES, type Resource, type Target } from './resources.ts';
import type { KubeObject, Store } from './store.ts';
import { current } from './update.ts';

/** kube-apiserver's default for a pod without spec.terminationGracePeriodSeconds (SetDefaults_PodSpec). */
const DEFAULT_GRACE_SECONDS = 30;

interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export function remove(store: Store, t: Target, body: unknown): unknown {
  const old = current(store, t);
  const options = (isPlainObject(body) ? body : {}) as DeleteOptions;
  const { uid, resourceVersion } = options.preconditions ?? {};
  const name = old.metadata.name;
  if (uid && uid !== old.metadata.uid) {
    const why = `the UID in the precondition (${uid}) does not match the UID in record (${old.metadata.uid}). The object might have been deleted and then recreated`;
    throw conflict(t.info.deleteAs, name, why);
  }
  if (resourceVersion && resourceVersion !== old.metadata.resourceVersion) {
    const why = `the ResourceVersion in the precondition (${resourceVersion}) does not match the ResourceVersion in record (${old.metadata.resourceVersion}). The object might have been modified`;
    throw conflict(t.info.deleteAs, name, why);
  }
  return deleteObject(store, t.info.plural as Resource, old, options.gracePeriodSeconds);
}

function gracePeriod(pod: KubeObject, requested: number | undefined): number {
  const spec = (pod.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  if (!spec.nodeName || phase === 'Failed' || phase === 'Succeeded') return 0;
  const period = requested ?? spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
  return period < 0 ? 1 : period;
}

/** Deletes as the API does (graceful for scheduled pods); returns what the API answers. */
export function deleteObject(store: Store, resource: Resource, old: KubeObject, requestedGrace?: number): unknown {
  const { namespace = 'default', name } = old.metadata;
  if (resource === 'pods') {
    const period = gracePeriod(old, requestedGrace);
    if (period > 0) {
      const pending = old.metadata.deletionGracePeriodSeconds as number | undefined;
      // Already terminating with a grace period no longer than this one: nothing changes (rest.BeforeDelete).
      if (old.metadata.deletionTimestamp && pending !== undefined && pending <= period) return old;
      const next = structuredClone(old);
      next.metadata.deletionTimestamp = store.timestamp(period);
      next.metadata.deletionGracePeriodSeconds = period;
      if (next.metadata.generation !== undefined) next.metadata.generation += 1;
      return store.put(resource, next);
    }
  }
  if (((old.metadata.finalizers as string[] | undefined) ?? []).length > 0) {
    // Kept until its finalizers are removed (registry store markAsDeleting): terminating now, grace 0.
    if (old.metadata.deletionTimestamp && old.metadata.deletionGracePeriodSeconds === 0) return old;
    const next = structuredClone(old);
    if (!next.metadata.deletionTimestamp && next.metadata.generation !== undefined) next.metadata.generation += 1;
    next.metadata.deletionTimestamp = store.timestamp();
    next.metadata.deletionGracePeriodSeconds = 0;
    return store.put(resource, next);
  }
  store.remove(resource, namespace, name);
  if (resource === 'pods' || resource === 'neosets') return old;
  const info = RESOURCES[resource];
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, group: info.group || undefined, kind: info.plural, uid: old.metadata.uid } };
}

export interface Collected {
  resource: Resource;
  namespace: string;
  name: string;
}

/**
 * kube-controller-manager's garbage collector with background propagation: an object whose every
 * ownerReference names a uid that no longer exists is deleted (through the API: a scheduled pod
 * terminates gracefully), until nothing more goes. Returns what it deleted.
 */
export function collectGarbage(store: Store): Collected[] {
  const collected: Collected[] = [];
  for (;;) {
    const uids = new Set([...store.all()].map(([, o]) => o.metadata.uid));
    const orphans = [...store.all()].filter(([, o]) => {
      const owners = o.metadata.ownerReferences ?? [];
      return owners.length > 0 && !o.metadata.deletionTimestamp && owners.every((r) => !uids.has(r.uid));
    });
    if (orphans.length === 0) return collected;
    for (const [resource, obj] of orphans) {
      deleteObject(store, resource, structuredClone(obj));
      collected.push({ resource, namespace: obj.metadata.namespace ?? 'default', name: obj.metadata.name });
    }
  }
}
