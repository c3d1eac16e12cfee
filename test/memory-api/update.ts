// PUT and PATCH, main resource and status subresource, as the generic registry runs them
// (k8s.io/apiserver registry/generic/registry/store.go Update, rest.BeforeUpdate) with the
// strategies of resources.ts: the resourceVersion precondition first (even for a change that turns
// out to be none), then what the subresource may touch, validation, generation, and no write at all
// when the object comes out unchanged.
import { isPlainObject, sameJson, type JsonObject } from '../../shared/core/json.ts';
import { badRequest, conflict, invalid, notFound, StatusError, unprocessable } from './errors.ts';
import { jsonPatch, mergePatch, PatchFailed, strategicMerge } from './patch.ts';
import { resizeUpdate, validatePodResize, type NodeAllocatable } from './pod-resize.ts';
import { validatePodUpdate } from './pod-validation.ts';
import type { Resource, Target } from './resources.ts';
import type { KubeObject, Store } from './store.ts';
import type { PatchType } from '../../shared/k8s/client.ts';

/** Metadata only the server sets: an update cannot change it (rest.BeforeUpdate). */
const SYSTEM_METADATA = ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation', 'namespace', 'resourceVersion'];

export function current(store: Store, t: Target): KubeObject {
  const obj = store.get(t.info.plural as Resource, t.namespace!, t.name!);
  if (!obj) throw notFound(t.info.qualified, t.name!);
  return obj;
}

export function patch(store: Store, t: Target, body: unknown, type: PatchType = 'merge', allocatable: NodeAllocatable = null): KubeObject {
  const old = current(store, t);
  let patched: unknown;
  if (type === 'strategic' && !t.info.strategic) {
    throw new StatusError(
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  }
  try {
    if (type === 'json') patched = jsonPatch(old, body);
    else if (!isPlainObject(body)) throw badRequest('error decoding patch: a patch must be a JSON object');
    else patched = type === 'merge' ? mergePatch(old, body) : strategicMerge(old, body, t.info.strategic!);
  } catch (err) {
    if (err instanceof PatchFailed) throw unprocessable();
    throw err;
  }
  return update(store, t, patched, { patch: true, allocatable });
}

export function update(store: Store, t: Target, body: unknown, opts: { patch?: boolean; allocatable?: NodeAllocatable } = {}): KubeObject {
  const { info, name } = t;
  const old = current(store, t);
  if (!isPlainObject(body) || !isPlainObject(body.metadata)) throw badRequest('the object has no metadata');
  const meta = body.metadata as KubeObject['metadata'];
  if (meta.name !== undefined && meta.name !== name) throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
  if (meta.namespace !== undefined && meta.namespace !== t.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const rv = meta.resourceVersion;
  if (!rv && info.requiresResourceVersion && !opts.patch) {
    throw invalid(info.invalidAs, name!, ['metadata.resourceVersion: Invalid value: 0: must be specified for an update']);
  }
  if (rv && rv !== old.metadata.resourceVersion) throw conflict(info.qualified, name!);
  if (meta.uid !== undefined && meta.uid !== old.metadata.uid) {
    throw invalid(info.invalidAs, name!, [`metadata.uid: Invalid value: ${JSON.stringify(meta.uid)}: field is immutable`]);
  }

  const next =
    t.subresource === 'status' ? statusUpdate(info.plural, old, body) : t.subresource === 'resize' ? resizeUpdate(old, body) : mainUpdate(info.statusSubresource, old, body);
  for (const field of SYSTEM_METADATA) {
    if (old.metadata[field] === undefined) delete next.metadata[field];
    else next.metadata[field] = old.metadata[field];
  }
  next.metadata.name = old.metadata.name;
  next.apiVersion = old.apiVersion;
  next.kind = old.kind;

  if (info.plural === 'pods' && t.subresource === undefined) {
    const error = validatePodUpdate(name!, (old.spec ?? {}) as JsonObject, (next.spec ?? {}) as JsonObject);
    if (error) throw error;
  }
  if (t.subresource === 'resize') {
    const error = validatePodResize(name!, old, next, opts.allocatable ?? null);
    if (error) throw error;
  }
  if (generationChanged(info.generation, old, next)) next.metadata.generation = (old.metadata.generation ?? 0) + 1;
  if (sameJson(next, old)) return old;
  // The update that removes the last finalizer of an object being deleted deletes it (store.go
  // shouldDeleteDuringUpdate).
  const { deletionTimestamp, deletionGracePeriodSeconds, finalizers } = next.metadata;
  if (deletionTimestamp && deletionGracePeriodSeconds === 0 && !(finalizers as string[] | undefined)?.length) {
    store.remove(info.plural as Resource, t.namespace!, name!);
    return next;
  }
  return store.put(info.plural as Resource, next);
}

/** The main resource ignores .status when the resource has a status subresource. */
function mainUpdate(statusSubresource: boolean, old: KubeObject, body: JsonObject): KubeObject {
  const next = structuredClone(body) as KubeObject;
  if (statusSubresource) {
    if (old.status === undefined) delete next.status;
    else next.status = structuredClone(old.status);
  }
  return next;
}

/**
 * The status subresource. Custom resources: .status only, the rest of the body ignored (apiextensions
 * statusStrategy). Pods and claims: the spec and the owner references stay (podStatusStrategy), labels
 * and annotations may change.
 */
function statusUpdate(plural: string, old: KubeObject, body: JsonObject): KubeObject {
  if (plural === 'neosets') {
    const next = structuredClone(old);
    if (body.status === undefined) delete next.status;
    else next.status = structuredClone(body.status);
    return next;
  }
  const next = structuredClone(body) as KubeObject;
  next.spec = structuredClone(old.spec);
  if (old.metadata.ownerReferences === undefined) delete next.metadata.ownerReferences;
  else next.metadata.ownerReferences = structuredClone(old.metadata.ownerReferences);
  return next;
}

function generationChanged(rule: 'spec' | 'all' | 'none', old: KubeObject, next: KubeObject): boolean {
  if (rule === 'none' || old.metadata.generation === undefined) return false;
  if (rule === 'spec') return !sameJson(old.spec, next.spec);
  const { metadata: _a, status: _b, ...before } = old;
  const { metadata: _c, status: _d, ...after } = next;
  return !sameJson(before, after);
}
