// The resources NeoSet reads and writes, and how a REST path names one of them. Per resource, the
// registry strategy facts the memory API follows (k8s.io/kubernetes pkg/registry/*/strategy.go,
// apiextensions-apiserver pkg/registry/customresource/strategy.go).
import { badRequest, StatusError } from './errors.ts';

export interface ResourceInfo {
  /** The plural, which is also the store's name for the resource. */
  plural: string;
  group: string;
  version: string;
  kind: string;
  /** `pods`, `neosets.neo.io`: the resource as most error messages name it. */
  qualified: string;
  /** `Pod`, `ControllerRevision.apps`, `neosets.neo.io`: as a 422 names it (the registry's qualifiedKind). */
  invalidAs: string;
  /** `Pod`, `NeoSet.neo.io`: as a failed delete precondition names it (rest.BeforeDelete: group and kind). */
  deleteAs: string;
  /** A status subresource exists: the main resource ignores .status, the subresource only writes it. */
  statusSubresource: boolean;
  /** What bumps metadata.generation on update: spec changes (pods), anything but metadata and status (CRs). */
  generation: 'spec' | 'all' | 'none';
  /** An update without metadata.resourceVersion is refused (custom resources: AllowUnconditionalUpdate false). */
  requiresResourceVersion: boolean;
  /** Strategic merge patch: list merge keys by field path (`[]` steps into list items); null: not supported (CRs). */
  strategic: Record<string, string> | null;
}

const META_KEYS = { 'metadata.ownerReferences': 'uid', 'metadata.finalizers': '' };

// patchStrategy:"merge" fields of k8s.io/api core/v1 PodSpec, Container and PodStatus. '' merges a list
// of scalars (a set). Lists not named here (containerStatuses, tolerations, readinessGates) are replaced.
const POD_KEYS: Record<string, string> = {
  ...META_KEYS,
  'spec.volumes': 'name',
  'spec.imagePullSecrets': 'name',
  'spec.hostAliases': 'ip',
  'spec.schedulingGates': 'name',
  'spec.resourceClaims': 'name',
  'spec.topologySpreadConstraints': 'topologyKey',
  'status.conditions': 'type',
  'status.resourceClaimStatuses': 'name',
};
for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
  POD_KEYS[`spec.${list}`] = 'name';
  Object.assign(POD_KEYS, {
    [`spec.${list}[].ports`]: 'containerPort',
    [`spec.${list}[].env`]: 'name',
    [`spec.${list}[].volumeMounts`]: 'mountPath',
    [`spec.${list}[].volumeDevices`]: 'devicePath',
  });
}

const core = (plural: string, kind: string, more: Partial<ResourceInfo> = {}): ResourceInfo => ({
  plural,
  group: '',
  version: 'v1',
  kind,
  qualified: plural,
  invalidAs: kind,
  deleteAs: kind,
  statusSubresource: false,
  generation: 'none',
  requiresResourceVersion: false,
  strategic: META_KEYS,
  ...more,
});

export const RESOURCES = {
  pods: core('pods', 'Pod', { statusSubresource: true, generation: 'spec', strategic: POD_KEYS }),
  persistentvolumeclaims: core('persistentvolumeclaims', 'PersistentVolumeClaim', {
    statusSubresource: true,
    strategic: { ...META_KEYS, 'status.conditions': 'type' },
  }),
  events: core('events', 'Event'),
  controllerrevisions: core('controllerrevisions', 'ControllerRevision', {
    group: 'apps',
    qualified: 'controllerrevisions.apps',
    invalidAs: 'ControllerRevision.apps',
    deleteAs: 'ControllerRevision.apps',
  }),
  neosets: {
    plural: 'neosets',
    group: 'neo.io',
    version: 'v1alpha1',
    kind: 'NeoSet',
    qualified: 'neosets.neo.io',
    invalidAs: 'neosets.neo.io',
    deleteAs: 'NeoSet.neo.io',
    statusSubresource: true,
    generation: 'all',
    requiresResourceVersion: true,
    strategic: null,
  },
} satisfies Record<string, ResourceInfo>;

export type Resource = keyof typeof RESOURCES;

/** What a request path names. */
export interface Target {
  info: ResourceInfo;
  /** Undefined for a cluster-wide list. */
  namespace?: string;
  name?: string;
  subresource?: string;
}

const NOT_SERVED = () => new StatusError(404, 'NotFound', 'the server could not find the requested resource');

/** `/api/v1/namespaces/ns/pods/x/status`, `/apis/neo.io/v1alpha1/neosets`, ... (query string ignored). */
export function parsePath(path: string): Target {
  const parts = path.split('?')[0].split('/').filter(Boolean).map(decodeURIComponent);
  let rest: string[];
  let groupVersion: string;
  if (parts[0] === 'api') [groupVersion, rest] = [parts[1], parts.slice(2)];
  else if (parts[0] === 'apis') [groupVersion, rest] = [`${parts[1]}/${parts[2]}`, parts.slice(3)];
  else throw NOT_SERVED();
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) [namespace, rest] = [rest[1], rest.slice(2)];
  const [plural, name, subresource, ...extra] = rest;
  const info: ResourceInfo | undefined = (RESOURCES as Record<string, ResourceInfo>)[plural];
  if (!info || groupVersion !== (info.group ? `${info.group}/${info.version}` : info.version) || extra.length > 0) throw NOT_SERVED();
  const served = (subresource === 'status' && info.statusSubresource) || (subresource === 'resize' && info.plural === 'pods');
  if (subresource !== undefined && !served) throw NOT_SERVED();
  if (name !== undefined && namespace === undefined) throw badRequest(`${info.qualified} is namespaced: a name needs a namespace`);
  return { info, namespace, name, subresource };
}

export const apiVersionOf = (info: ResourceInfo) => (info.group ? `${info.group}/${info.version}` : info.version);
