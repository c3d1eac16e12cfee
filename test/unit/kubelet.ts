// The simulated kubelet of the in-memory world: what a real kubelet does to a pod's status —
// start containers, pass readiness probes, restart a container whose image was patched, crashloop
// on a bad image, fail — and the pod conditions it computes (ContainersReady; Ready including the
// readiness gates).
import { fnv32a } from '../../shared/core/revisions/hash.ts';
import { normalizeImage } from '../../shared/core/pods/images.ts';
import type { ContainerStatus, Pod, PodCondition } from '../../shared/core/objects.ts';
import { rfc3339 } from '../../shared/core/time.ts';

/** Images whose containers crash forever (CrashLoopBackOff). */
export const BAD_IMAGE_MARK = 'crash';

export interface Clock {
  now: number;
  nextId(): string;
}

const isBad = (image: string) => image.includes(BAD_IMAGE_MARK);

/** One sync: the next notch of the pod's lifecycle. Returns whether the status changed. */
export function syncPod(pod: Pod, clock: Clock): boolean {
  if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') return false;
  const before = JSON.stringify(pod.status);
  const status = (pod.status ??= { phase: 'Pending' });
  status.containerStatuses ??= [];
  if (status.phase === 'Pending') {
    status.phase = 'Running';
    status.containerStatuses = pod.spec.containers.map((c) => start(c.name, c.image, 0, clock));
  } else {
    for (const c of pod.spec.containers) {
      const cs = status.containerStatuses.find((s) => s.name === c.name);
      if (!cs) status.containerStatuses.push(start(c.name, c.image, 0, clock));
      else if (normalizeImage(c.image) !== cs.image || isBad(c.image)) Object.assign(cs, start(c.name, c.image, cs.restartCount + 1, clock));
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

function start(name: string, image: string, restartCount: number, clock: Clock): ContainerStatus {
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
