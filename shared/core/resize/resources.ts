// Container cpu/memory as in-place pod resize sees them (SPEC §4.9; Kubernetes 1.35 GA, read in the
// 1.37 sources): quantities compared by value, the QoS class a resize may not change
// (pkg/apis/core/validation ValidatePodResize, pkg/apis/core/helper/qos), and which container
// resource changes the `pods/resize` subresource accepts (cpu and memory only; none removed).
import { isPlainObject, sameJson, type JsonObject } from '../json.ts';

/** The two resources a running container can be resized in (ValidatePodResize: "only cpu and memory resources are mutable"). */
export const RESIZABLE = ['cpu', 'memory'] as const;

export interface ResourceRequirements {
  requests?: Record<string, string | number>;
  limits?: Record<string, string | number>;
}

/**
 * A container's resize target: what NeoSet writes through pods/resize. Only resources: 1.37's
 * ValidatePodResize refuses a resizePolicy change there ("only cpu and memory resources are mutable").
 */
export interface ResizeTarget {
  resources: ResourceRequirements;
}

const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** A resource.Quantity's value in milli-units (`100m` -> 100, `0.1` -> 100, `1Gi` -> 1073741824000); NaN when unreadable. */
export function milli(q: string | number | undefined): number {
  if (q === undefined) return NaN;
  if (typeof q === 'number') return Math.round(q * 1000);
  const m = /^([+-]?[0-9.]+)(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(q.trim());
  if (!m) return NaN;
  const base = Number(m[1]) * (m[2] !== undefined ? 10 ** Number(m[2]) : SUFFIX[m[3] ?? '']);
  return Math.round(base * 1000);
}

/** Two resource lists hold the same cpu/memory values (other resources ignored). */
function sameCpuMemory(a: Record<string, string | number> | undefined, b: Record<string, string | number> | undefined): boolean {
  return RESIZABLE.every((k) => (a?.[k] === undefined) === (b?.[k] === undefined) && (a?.[k] === undefined || milli(a[k]) === milli(b![k])));
}

/**
 * The same cpu/memory requests and limits (a container's spec and the template's, or what the kubelet
 * reports in containerStatuses[].resources). Requests are compared as the API server defaults them: a
 * missing request takes its limit's value (pkg/apis/core/v1/defaults.go SetDefaults_Pod).
 */
export function resourcesMatch(reported: ResourceRequirements | undefined, target: ResourceRequirements): boolean {
  return sameCpuMemory(effectiveRequests(reported), effectiveRequests(target)) && sameCpuMemory(reported?.limits, target.limits);
}

export function effectiveRequests(r: ResourceRequirements | undefined): Record<string, string | number> {
  return { ...r?.limits, ...r?.requests };
}

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/**
 * The pod's QoS class from its containers (pkg/apis/core/helper/qos ComputePodQOS, cpu and memory):
 * BestEffort with no request or limit at all; Guaranteed when every container has cpu and memory
 * limits and its requests (defaulted to the limits) equal them; else Burstable.
 */
export function qosClass(containers: unknown[]): QosClass {
  const all = containers.map((c) => resourcesOf(c));
  const set = (r: Record<string, unknown> | undefined) => RESIZABLE.filter((k) => r?.[k] !== undefined);
  if (all.every((r) => set(r.requests).length === 0 && set(r.limits).length === 0)) return 'BestEffort';
  const guaranteed = all.every((r) => {
    const limits = r.limits ?? {};
    const requests = effectiveRequests(r);
    return RESIZABLE.every((k) => limits[k] !== undefined && milli(requests[k]) === milli(limits[k]));
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export function resourcesOf(container: unknown): ResourceRequirements {
  const r = isPlainObject(container) ? container.resources : undefined;
  return isPlainObject(r) ? (r as ResourceRequirements) : {};
}

/**
 * Why a change of one container's `resources` cannot go through pods/resize, as field paths under
 * `at` (`spec.containers[0].resources.limits.nvidia.com/gpu`): a resource other than cpu/memory
 * changed, or a cpu/memory request or limit was removed ("resource requests cannot be removed").
 */
export function resizeBlockers(before: ResourceRequirements, after: ResourceRequirements, at: string): string[] {
  const out: string[] = [];
  for (const list of ['requests', 'limits'] as const) {
    const a: JsonObject = (before[list] ?? {}) as JsonObject;
    const b: JsonObject = (after[list] ?? {}) as JsonObject;
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const resizable = (RESIZABLE as readonly string[]).includes(k);
      if (resizable ? a[k] !== undefined && b[k] === undefined : !sameJson(a[k], b[k])) out.push(`${at}.resources.${list}.${k}`);
    }
  }
  return out;
}
