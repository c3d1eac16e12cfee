// The pods/resize subresource (Kubernetes 1.37, read in its sources): pkg/registry/core/pod/strategy.go
// podResizeStrategy — only spec.containers[*].resources and resizePolicy are kept from the request
// (dropNonResizeUpdates), the rest comes from the stored pod; pkg/apis/core/validation
// ValidatePodResize — anything but cpu/memory changed is refused (resizePolicy included), the QoS class may not change, a running container must report its resources
// (else the node "has no support for resize"), no request or limit removed, only cpu and memory;
// and the PodResizeValidator admission plugin (plugin/pkg/admission/podresize) — a bound pod's
// requests may not exceed its node's allocatable.
import { isPlainObject, sameJson, type JsonObject } from '../../shared/core/json.ts';
import { milli, qosClass, resizeBlockers, resourcesOf, RESIZABLE, type ResourceRequirements } from '../../shared/core/resize/resources.ts';
import { forbidden, invalid } from './errors.ts';
import type { KubeObject } from './store.ts';

/** The node every memory-API pod runs on: its allocatable cpu/memory as quantities; null: no node check. */
export type NodeAllocatable = { cpu: string; memory: string } | null;

type Spec = JsonObject & { containers?: JsonObject[]; initContainers?: JsonObject[] };

/** The pod a resize request leaves (before validation): the stored pod with the request's container resources and resizePolicy. */
export function resizeUpdate(old: KubeObject, body: JsonObject): KubeObject {
  const next = structuredClone(old);
  const spec = (isPlainObject(body.spec) ? body.spec : {}) as Spec;
  const oldSpec = next.spec as Spec;
  const requested = spec.containers ?? [];
  // Added, removed, reordered or renamed containers: the request's list as-is (validation refuses it).
  if (requested.length !== (oldSpec.containers ?? []).length || requested.some((c, i) => c.name !== oldSpec.containers![i].name)) {
    oldSpec.containers = structuredClone(requested);
    return next;
  }
  oldSpec.containers = oldSpec.containers!.map((c, i) => {
    const out = { ...c };
    for (const field of ['resources', 'resizePolicy'] as const) {
      if (requested[i][field] === undefined) delete out[field];
      else out[field] = structuredClone(requested[i][field]);
    }
    return out;
  });
  if (isPlainObject(body.metadata)) {
    const meta = body.metadata as KubeObject['metadata'];
    if (meta.resourceVersion !== undefined) next.metadata.resourceVersion = meta.resourceVersion;
  }
  return next;
}

export function validatePodResize(name: string, old: KubeObject, next: KubeObject, allocatable: NodeAllocatable): Error | null {
  const [before, after] = [old.spec as Spec, next.spec as Spec];
  const causes: string[] = [];
  const [from, to] = [qosClass([...(before.containers ?? []), ...(before.initContainers ?? [])]), qosClass([...(after.containers ?? []), ...(after.initContainers ?? [])])];
  // The value quoted is newPod.Status.QOSClass: the status is the stored pod's, so the old class.
  const recorded = (old.status as { qosClass?: string } | undefined)?.qosClass ?? from;
  if (from !== to) causes.push(`spec: Invalid value: "${recorded}": Pod QOS Class may not change as a result of resizing`);
  const statuses = ((old.status as { containerStatuses?: { state?: { running?: unknown }; resources?: unknown }[] } | undefined)?.containerStatuses ?? []);
  const running = statuses.find((cs) => cs.state?.running !== undefined);
  if (running && running.resources === undefined) causes.push('spec: Forbidden: Pod running on node without support for resize');
  const afterContainers = after.containers ?? [];
  if (afterContainers.length !== (before.containers ?? []).length || afterContainers.some((c, i) => c.name !== before.containers![i].name)) {
    causes.push('spec.containers: Forbidden: containers may not be added, removed, reordered or renamed');
    return invalid('Pod', name, causes);
  }
  let otherChanged = false;
  afterContainers.forEach((c, i) => {
    const was = resourcesOf(before.containers![i]);
    const now = resourcesOf(c);
    // Anything but resources differing (resizePolicy: the strategy keeps it, validation refuses it).
    const { resources: _a, ...restBefore } = before.containers![i];
    const { resources: _b, ...restAfter } = c;
    if (!sameJson(restBefore, restAfter)) otherChanged = true;
    for (const blocker of resizeBlockers(was, now, `spec.containers[${i}]`)) {
      const [, list, resource] = /\.resources\.(requests|limits)\.(.*)$/.exec(blocker)!;
      if ((RESIZABLE as readonly string[]).includes(resource)) causes.push(`spec.containers[${i}].resources.${list}: Forbidden: resource ${list} cannot be removed`);
      else otherChanged = true;
    }
  });
  if (otherChanged) causes.push('spec: Forbidden: only cpu and memory resources are mutable');
  if (causes.length > 0) return invalid('Pod', name, [...new Set(causes)]);
  // PodResizeValidator: only for a bound pod whose spec changed (generation moved).
  if (allocatable && (old.spec as { nodeName?: string }).nodeName && !sameJson(before, after)) {
    const requests = (list: JsonObject[], k: string) => list.reduce((sum, c) => sum + (milli(requestOf(resourcesOf(c), k)) || 0), 0);
    const msg: string[] = [];
    const cpu = requests(afterContainers, 'cpu');
    if (cpu > milli(allocatable.cpu)) msg.push(`cpu, requested: ${cpu}, allocatable: ${milli(allocatable.cpu)}`);
    const memory = requests(afterContainers, 'memory');
    if (memory > milli(allocatable.memory)) msg.push(`memory, requested: ${memory / 1000}, allocatable: ${milli(allocatable.memory) / 1000}`);
    if (msg.length > 0) return forbidden('pods', name, `node didn't have enough allocatable resources: ${msg.join('; ')}`);
  }
  return null;
}

/** A container's request, defaulted to its limit (the API server defaults requests from limits). */
function requestOf(r: ResourceRequirements, k: string): string | number | undefined {
  return r.requests?.[k] ?? r.limits?.[k];
}
