// In-place pod resize as the kubelet does it (SPEC §4.9; Kubernetes 1.37 pkg/kubelet/allocation and
// pkg/kubelet/status): a spec whose cpu/memory differ from what the containers were allocated is
// judged — Infeasible (a Guaranteed pod's cpu under the static CPU manager policy) or Deferred (it
// does not fit beside the node's other pods: "Node didn't have enough resource: ...") as
// PodResizePending — else accepted (PodResizeInProgress, observedGeneration the pod's generation),
// and carried out `resizeDelayMs` later: the new values reported in containerStatuses[].resources,
// each container whose resizePolicy says RestartContainer for a changed resource restarted, the
// conditions removed. A spec back to the allocation clears a pending resize.
import type { V1Container, V1Pod, V1PodCondition, V1ResourceRequirements } from '@kubernetes/client-node';
import { effectiveRequests, milli, qosClass, resourcesMatch, resourcesOf, RESIZABLE, type ResourceRequirements } from '../../shared/core/resize/resources.ts';
import { apiTime, type SimContext, type SimSettings } from './pod-status.ts';

export interface NodeResources {
  allocatable: { cpu: string; memory: string };
  /** `static`: a Guaranteed pod's cpu cannot be resized (the kubelet's CPU manager). Default `none`. */
  cpuManagerPolicy?: 'none' | 'static';
}

export interface ResizeStep {
  /** The pod's conditions with PodResizePending / PodResizeInProgress as they now stand. */
  conditions: V1PodCondition[];
  /** Containers whose new resources are carried out now, and those of them restarted for it. */
  actuate: Set<string>;
  restart: Set<string>;
  /** The resize was accepted by this step (its start is remembered in the caller's marks). */
  accepted: boolean;
}

/** containerStatuses[].resources: the container's cpu/memory requests (defaulted from limits) and limits. */
export function reportedResources(container: V1Container): V1ResourceRequirements {
  const r = resourcesOf(container);
  const only = (list: Record<string, string | number>) =>
    Object.fromEntries(Object.entries(list).filter(([k]) => (RESIZABLE as readonly string[]).includes(k)).map(([k, v]) => [k, String(v)]));
  const requests = only(effectiveRequests(r));
  const limits = only(r.limits ?? {});
  return { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
}

/** The cpu/memory requests (milli-units) of a pod as allocated: what its containers report. */
export function allocatedRequests(pod: V1Pod): { cpu: number; memory: number } {
  const sum = { cpu: 0, memory: 0 };
  for (const cs of pod.status?.containerStatuses ?? []) {
    const requests = (cs.resources as ResourceRequirements | undefined)?.requests ?? {};
    for (const k of RESIZABLE) sum[k] += milli(requests[k]) || 0;
  }
  return sum;
}

export function resizeStep(pod: V1Pod, settings: SimSettings, ctx: SimContext, wake: (at: number) => void): ResizeStep {
  const containers = pod.spec?.containers ?? [];
  const statuses = pod.status?.containerStatuses ?? [];
  const others = (pod.status?.conditions ?? []).filter((c) => c.type !== 'PodResizePending' && c.type !== 'PodResizeInProgress');
  const pending = containers.filter((c) => {
    const cs = statuses.find((s) => s.name === c.name);
    return cs?.resources !== undefined && !resourcesMatch(cs.resources as ResourceRequirements, resourcesOf(c));
  });
  const none = { actuate: new Set<string>(), restart: new Set<string>(), accepted: false };
  if (pending.length === 0) return { conditions: others, ...none };
  const generation = pod.metadata?.generation;
  const condition = (type: string, reason?: string, message?: string): V1PodCondition => {
    const before = pod.status?.conditions?.find((c) => c.type === type);
    const same = before?.reason === reason;
    return {
      type,
      status: 'True',
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
      observedGeneration: generation,
      lastProbeTime: apiTime(ctx.now),
      lastTransitionTime: same && before?.lastTransitionTime ? before.lastTransitionTime : apiTime(ctx.now),
    } as V1PodCondition;
  };

  const verdict = judge(pod, pending, settings, ctx);
  if (verdict) return { conditions: [...others, condition('PodResizePending', verdict.reason, verdict.message)], ...none };

  const inProgress = pod.status?.conditions?.find((c) => c.type === 'PodResizeInProgress');
  if (!inProgress || inProgress.observedGeneration !== generation) {
    wake(ctx.now + settings.resizeDelayMs);
    return { conditions: [...others, condition('PodResizeInProgress')], ...none, accepted: true };
  }
  const acceptedAt = ctx.seen('resize') ?? inProgress.lastTransitionTime?.getTime() ?? ctx.now;
  if (ctx.now < acceptedAt + settings.resizeDelayMs) {
    wake(acceptedAt + settings.resizeDelayMs);
    return { conditions: [...(pod.status?.conditions ?? [])].filter((c) => c.type !== 'PodResizePending'), ...none };
  }
  const restart = pending.filter((c) => {
    const before = (statuses.find((s) => s.name === c.name)!.resources ?? {}) as ResourceRequirements;
    const after = resourcesOf(c);
    const changed = RESIZABLE.filter((k) => milli(effectiveRequests(before)[k]) !== milli(effectiveRequests(after)[k]) || milli(before.limits?.[k]) !== milli(after.limits?.[k]));
    return changed.some((k) => c.resizePolicy?.find((p) => p.resourceName === k)?.restartPolicy === 'RestartContainer');
  });
  return { conditions: others, actuate: new Set(pending.map((c) => c.name)), restart: new Set(restart.map((c) => c.name)), accepted: false };
}

/** Why the allocation manager does not admit the resize now (lifecycle.ResizeOperation), or null. */
function judge(pod: V1Pod, pending: V1Container[], settings: SimSettings, ctx: SimContext): { reason: 'Infeasible' | 'Deferred'; message: string } | null {
  const policy = settings.node.cpuManagerPolicy ?? 'none';
  if (policy === 'static' && qosClass(pod.spec?.containers ?? []) === 'Guaranteed') {
    const cpuChanges = pending.some((c) => {
      const before = pod.status?.containerStatuses?.find((s) => s.name === c.name)?.resources as ResourceRequirements | undefined;
      return milli(before?.limits?.cpu) !== milli(resourcesOf(c).limits?.cpu);
    });
    if (cpuChanges) return { reason: 'Infeasible', message: 'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"' };
  }
  // The predicate admit handler: the pod's new requests beside what the other pods were allocated.
  for (const k of RESIZABLE) {
    const requested = (pod.spec?.containers ?? []).reduce((sum, c) => sum + (milli(effectiveRequests(resourcesOf(c))[k]) || 0), 0);
    const capacity = milli(settings.node.allocatable[k]);
    const used = ctx.usedByOthers[k];
    if (requested + used > capacity) {
      // Go's InsufficientResourceError: cpu in millicores, memory in bytes.
      const unit = (v: number) => (k === 'cpu' ? v : v / 1000);
      return { reason: 'Deferred', message: `Node didn't have enough resource: ${k}, requested: ${unit(requested)}, used: ${unit(used)}, capacity: ${unit(capacity)}` };
    }
  }
  return null;
}
