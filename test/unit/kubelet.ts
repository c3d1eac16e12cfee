// The simulated kubelet of the in-memory world: what a real kubelet does to a pod's status —
// start containers, pass readiness probes, restart a container whose image was patched, crashloop
// on a bad image, fail, resize a container in place (§4.9: PodResizeInProgress, then the new
// resources reported, the container restarted when its resizePolicy says so; or PodResizePending
// Deferred / Infeasible, as the world's kubelet decides) — and the pod conditions it computes
// (ContainersReady; Ready including the readiness gates).
import { fnv32a } from '../../shared/core/revisions/hash.ts';
import { normalizeImage } from '../../shared/core/pods/images.ts';
import type { ContainerStatus, Pod, PodCondition } from '../../shared/core/objects.ts';
import { rfc3339 } from '../../shared/core/time.ts';
import { effectiveRequests, resourcesMatch, resourcesOf, RESIZABLE, type ResourceRequirements } from '../../shared/core/resize/resources.ts';

/** Images whose containers crash forever (CrashLoopBackOff). */
export const BAD_IMAGE_MARK = 'crash';

export interface Clock {
  now: number;
  nextId(): string;
  /** The kubelet's verdict on a pod's pending resize (default: it fits). */
  resizeVerdict?(pod: Pod): ResizeVerdict;
}

export type ResizeVerdict = 'Fits' | 'Deferred' | 'Infeasible';

const isBad = (image: string) => image.includes(BAD_IMAGE_MARK);

/** One sync: the next notch of the pod's lifecycle. Returns whether the status changed. */
export function syncPod(pod: Pod, clock: Clock): boolean {
  if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') return false;
  const before = JSON.stringify(pod.status);
  const status = (pod.status ??= { phase: 'Pending' });
  status.containerStatuses ??= [];
  if (status.phase === 'Pending') {
    status.phase = 'Running';
    status.containerStatuses = pod.spec.containers.map((c) => start(c.name, c.image, 0, clock, resourcesOf(c)));
  } else {
    const resizing = resize(pod, clock);
    for (const c of pod.spec.containers) {
      const cs = status.containerStatuses.find((s) => s.name === c.name);
      if (!cs) status.containerStatuses.push(start(c.name, c.image, 0, clock, resourcesOf(c)));
      else if (normalizeImage(c.image) !== cs.image || isBad(c.image) || resizing.restart.has(c.name)) {
        Object.assign(cs, start(c.name, c.image, cs.restartCount + 1, clock, resizing.restart.has(c.name) ? resourcesOf(c) : (cs.resources ?? {})));
      } else if (resizing.actuate.has(c.name)) cs.resources = reported(resourcesOf(c));
      else cs.ready = true; // the readiness probe passes
    }
  }
  computeConditions(pod, clock.now);
  return JSON.stringify(pod.status) !== before;
}

/** A container's readiness probe fails, until the next sync. */
export function makeUnready(pod: Pod, clock: Clock): boolean {
  if (!pod.status?.containerStatuses?.length) return false;
  pod.status.containerStatuses[0].ready = false;
  computeConditions(pod, clock.now);
  return true;
}

/** The pod fails for good (evicted): phase Failed. */
export function failPod(pod: Pod, clock: Clock): void {
  pod.status = { ...pod.status, phase: 'Failed' };
  for (const cs of pod.status.containerStatuses ?? []) cs.ready = false;
  computeConditions(pod, clock.now);
}

/**
 * The resize step of one sync (kubelet's allocation manager): a spec that differs from what the
 * containers report is judged (Deferred / Infeasible: PodResizePending), accepted (PodResizeInProgress
 * for one sync), then actuated — the new values reported, each container whose resizePolicy says
 * RestartContainer for a changed resource restarted — and the conditions cleared.
 */
function resize(pod: Pod, clock: Clock): { actuate: Set<string>; restart: Set<string> } {
  const none = { actuate: new Set<string>(), restart: new Set<string>() };
  const statuses = pod.status?.containerStatuses ?? [];
  const pending = pod.spec.containers.filter((c) => {
    const cs = statuses.find((s) => s.name === c.name);
    return cs !== undefined && !resourcesMatch(cs.resources, resourcesOf(c));
  });
  pod.status!.conditions ??= [];
  const drop = (type: string) => (pod.status!.conditions = pod.status!.conditions!.filter((c) => c.type !== type));
  if (pending.length === 0) {
    drop('PodResizePending');
    drop('PodResizeInProgress');
    return none;
  }
  const verdict = clock.resizeVerdict?.(pod) ?? 'Fits';
  if (verdict !== 'Fits') {
    drop('PodResizeInProgress');
    const message = verdict === 'Infeasible' ? 'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"' : "Node didn't have enough resource: cpu";
    drop('PodResizePending');
    pod.status!.conditions!.push({ type: 'PodResizePending', status: 'True', reason: verdict, message, observedGeneration: pod.metadata.generation, lastTransitionTime: rfc3339(clock.now) });
    return none;
  }
  drop('PodResizePending');
  if (!pod.status!.conditions!.some((c) => c.type === 'PodResizeInProgress')) {
    pod.status!.conditions!.push({ type: 'PodResizeInProgress', status: 'True', observedGeneration: pod.metadata.generation, lastTransitionTime: rfc3339(clock.now) });
    return none;
  }
  drop('PodResizeInProgress');
  const restart = pending.filter((c) => {
    const before = statuses.find((s) => s.name === c.name)!.resources ?? {};
    const changed = RESIZABLE.filter((k) => !resourcesMatch(pick(before, k), pick(resourcesOf(c), k)));
    const policy = (c.resizePolicy as { resourceName: string; restartPolicy: string }[] | undefined) ?? [];
    return changed.some((k) => policy.find((p) => p.resourceName === k)?.restartPolicy === 'RestartContainer');
  });
  return { actuate: new Set(pending.map((c) => c.name)), restart: new Set(restart.map((c) => c.name)) };
}

const pick = (r: ResourceRequirements, k: string): ResourceRequirements => ({
  requests: r.requests?.[k] !== undefined ? { [k]: r.requests[k] } : {},
  limits: r.limits?.[k] !== undefined ? { [k]: r.limits[k] } : {},
});

/** containerStatuses[].resources: the container's cpu/memory requests and limits. */
function reported(r: ResourceRequirements): ResourceRequirements {
  const only = (list: Record<string, string | number> | undefined) => Object.fromEntries(Object.entries(list ?? {}).filter(([k]) => (RESIZABLE as readonly string[]).includes(k)));
  return { requests: only(effectiveRequests(r)), limits: only(r.limits) };
}

function start(name: string, image: string, restartCount: number, clock: Clock, resources: ResourceRequirements): ContainerStatus {
  const bad = isBad(image);
  const normalized = normalizeImage(image);
  return {
    name,
    image: normalized,
    imageID: `docker.io/library/x@sha256:${fnv32a(new TextEncoder().encode(normalized)).toString(16)}`,
    containerID: `containerd://${clock.nextId()}`,
    ready: false,
    started: !bad,
    restartCount,
    state: bad ? { waiting: { reason: 'CrashLoopBackOff' } } : { running: { startedAt: rfc3339(clock.now) } },
    resources: reported(resources),
  };
}

/** ContainersReady, and Ready = ContainersReady and every readiness gate True. */
function computeConditions(pod: Pod, now: number): void {
  const running = pod.status?.phase === 'Running';
  const containersReady = running && pod.spec.containers.length > 0 && (pod.status?.containerStatuses ?? []).every((c) => c.ready);
  const gates = (pod.spec.readinessGates ?? []).every((g) => pod.status?.conditions?.find((c) => c.type === g.conditionType)?.status === 'True');
  setCondition(pod, { type: 'ContainersReady', status: containersReady ? 'True' : 'False' }, now);
  setCondition(pod, { type: 'Ready', status: containersReady && gates ? 'True' : 'False' }, now);
}

/** Upsert a pod condition; lastTransitionTime moves only when the status flips. */
export function setCondition(pod: Pod, c: Omit<PodCondition, 'lastTransitionTime'>, now: number): void {
  const conditions = (pod.status ??= {}).conditions ?? (pod.status.conditions = []);
  const old = conditions.find((x) => x.type === c.type);
  if (!old) conditions.push({ ...c, lastTransitionTime: rfc3339(now) });
  else {
    if (old.status !== c.status) old.lastTransitionTime = rfc3339(now);
    Object.assign(old, c);
  }
}
