// One request, evaluated atomically against the store: the REST verbs of kube-apiserver for the
// resources NeoSet uses. Throws StatusError for what the server would answer with a failure.
import { isPlainObject } from '../../shared/core/json.ts';
import type { PatchType } from '../../shared/k8s/client.ts';
import { remove } from './delete.ts';
import { alreadyExists, badRequest, forbidden, invalid, StatusError } from './errors.ts';
import { validatePodCreate } from './pod-validation.ts';
import { apiVersionOf, parsePath, type Resource, type Target } from './resources.ts';
import { labelMatcher } from './selector.ts';
import type { KubeObject, Store } from './store.ts';
import { current, patch, update } from './update.ts';
import type { NodeAllocatable } from './pod-resize.ts';

export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Admission {
  /** A ResourceQuota `pods` limit for every namespace, or null for none. */
  podQuota: { name: string; limit: number } | null;
  /** The allocatable cpu/memory of the node pods are bound to (PodResizeValidator), or null for no check. */
  nodeAllocatable?: NodeAllocatable;
}

export interface Request {
  verb: Verb;
  path: string;
  body?: unknown;
  patch?: PatchType;
  query?: Record<string, string | number | boolean | undefined>;
}

const notAllowed = () => new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');

export function serve(store: Store, admission: Admission, req: Request): unknown {
  const t = parsePath(req.path);
  const query = { ...Object.fromEntries(new URLSearchParams(req.path.split('?')[1] ?? '')), ...req.query };
  if (req.verb === 'GET') return t.name === undefined ? list(store, t, query) : current(store, t);
  if (t.namespace === undefined) throw notAllowed();
  if (req.verb === 'POST') {
    if (t.name !== undefined) throw notAllowed();
    return create(store, admission, t, req.body);
  }
  if (t.name === undefined) throw notAllowed();
  if (req.verb === 'PUT') return update(store, t, req.body);
  if (req.verb === 'PATCH') return patch(store, t, req.body, req.patch, admission.nodeAllocatable ?? null);
  return remove(store, t, req.body);
}

function list(store: Store, t: Target, query: Record<string, unknown>): unknown {
  if (query.fieldSelector) throw badRequest('the memory API does not serve fieldSelector');
  checkResourceVersionMatch(store, query);
  const selected = labelMatcher(query.labelSelector === undefined ? undefined : String(query.labelSelector));
  const items = store.list(t.info.plural as Resource, t.namespace).filter((o) => selected(o.metadata.labels));
  return { apiVersion: apiVersionOf(t.info), kind: `${t.info.kind}List`, metadata: { resourceVersion: store.resourceVersion }, items };
}

/**
 * A list's resourceVersion and resourceVersionMatch as kube-apiserver checks them (ValidateListOptions;
 * the watch cache's waitUntilFresh). The store is always fresh, so every list it answers is the newest
 * — one of the answers a real server may give to "not older than"; a version it has not reached yet
 * is the real server's answer after its 3 s wait: 504, "Too large resource version".
 */
function checkResourceVersionMatch(store: Store, query: Record<string, unknown>): void {
  const match = query.resourceVersionMatch === undefined ? '' : String(query.resourceVersionMatch);
  const version = query.resourceVersion === undefined ? '' : String(query.resourceVersion);
  if (match !== '' && version === '') throw invalid('ListOptions.meta.k8s.io', '', ['resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided']);
  if (match !== '' && match !== 'NotOlderThan' && match !== 'Exact') {
    throw invalid('ListOptions.meta.k8s.io', '', [`resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan", ""`]);
  }
  if (match === 'Exact') throw badRequest('the memory API keeps no history: it does not serve resourceVersionMatch=Exact');
  if (version === '' || version === '0') return;
  if (!/^[0-9]+$/.test(version)) throw badRequest(`invalid resource version: resourceVersion: Invalid value: "${version}": strconv.ParseUint: parsing "${version}": invalid syntax`);
  if (Number(version) > Number(store.resourceVersion)) {
    throw new StatusError(504, 'Timeout', `Timeout: Too large resource version: ${version}, current: ${store.resourceVersion}`);
  }
}

/** Live pods as ResourceQuota counts them (QuotaV1Pod): not finished, not past their deletion grace. */
function countsForQuota(store: Store, pod: KubeObject): boolean {
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const { deletionTimestamp, deletionGracePeriodSeconds } = pod.metadata;
  if (deletionTimestamp && typeof deletionGracePeriodSeconds === 'number') {
    return store.now() <= Date.parse(deletionTimestamp) + deletionGracePeriodSeconds * 1000;
  }
  return true;
}

function create(store: Store, admission: Admission, t: Target, body: unknown): KubeObject {
  const { info } = t;
  if (!isPlainObject(body) || !isPlainObject(body.metadata)) throw badRequest('the object has no metadata');
  const obj = structuredClone(body) as KubeObject;
  const meta = obj.metadata;
  if (!meta.name && typeof meta.generateName === 'string' && meta.generateName) meta.name = `${meta.generateName}${store.newUid().slice(-5)}`;
  if (!meta.name) throw invalid(info.invalidAs, '', ['metadata.name: Required value: name or generateName is required']);
  if (meta.namespace !== undefined && meta.namespace !== t.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  if (meta.resourceVersion) throw new StatusError(500, 'InternalError', 'Internal error occurred: resourceVersion should not be set on objects to be created');
  if (store.get(info.plural as Resource, t.namespace!, meta.name)) throw alreadyExists(info.qualified, meta.name);
  for (const field of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation']) delete meta[field];
  meta.namespace = t.namespace;

  if (info.plural === 'pods') {
    const error = validatePodCreate(obj as never);
    if (error) throw error;
    const quota = admission.podQuota;
    if (quota) {
      const used = store.list('pods', t.namespace).filter((p) => countsForQuota(store, p)).length;
      if (used + 1 > quota.limit) {
        throw forbidden('pods', meta.name, `exceeded quota: ${quota.name}, requested: pods=1, used: pods=${used}, limited: pods=${quota.limit}`);
      }
    }
    obj.status = { phase: 'Pending', qosClass: qosClass(obj) };
  } else if (info.plural === 'persistentvolumeclaims') obj.status = { phase: 'Pending' };
  else if (info.statusSubresource) delete obj.status;
  if (info.generation !== 'none') meta.generation = 1;
  return store.put(info.plural as Resource, obj);
}

type Resources = { requests?: Record<string, unknown>; limits?: Record<string, unknown> };

/** The QoS class kube-apiserver records at creation (pkg/apis/core/helper/qos), for cpu and memory. */
function qosClass(pod: KubeObject): string {
  const containers = ((pod.spec as { containers?: { resources?: Resources }[] })?.containers ?? []).map((c) => c.resources ?? {});
  const set = (r: Record<string, unknown> | undefined) => Object.keys(r ?? {}).filter((k) => k === 'cpu' || k === 'memory');
  if (containers.every((r) => set(r.requests).length === 0 && set(r.limits).length === 0)) return 'BestEffort';
  const guaranteed = containers.every((r) => {
    const limits = r.limits ?? {};
    const requests = { ...limits, ...r.requests };
    return ['cpu', 'memory'].every((k) => limits[k] !== undefined && String(requests[k]) === String(limits[k]));
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
