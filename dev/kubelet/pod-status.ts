// What kubelet would report for a pod, computed from the pod alone (its spec and last status) and the
// time: the simulation keeps no state of its own beyond the millisecond starts the caller remembers
// (API timestamps have whole seconds only, too coarse for delays of a few hundred ms). After a restart
// of the simulated kubelet the second-precision timestamps in the status stand in for them.

import type { V1Container, V1ContainerState, V1ContainerStatus, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { containersReadyCondition, readyCondition, setConditions } from './conditions.ts';
import { resizeStep, reportedResources, type NodeResources } from './resize.ts';
import { imageIDOf, isCrashLoopImage, normalizeImage } from './image.ts';

export interface SimSettings {
  hostIP: string;
  /** Pod bound → containers running (image pull and start). */
  startDelayMs: number;
  /** Container started → ready (stands for the readinessProbe's first success). */
  readyDelayMs: number;
  /** Time between two crashes of a `-crashloop` container. */
  crashLoopRestartMs: number;
  /** Resize accepted (PodResizeInProgress) → carried out (§4.9). */
  resizeDelayMs: number;
  /** The node's allocatable cpu/memory, and its CPU manager policy (static: Guaranteed pods' cpu cannot be resized). */
  node: NodeResources;
}

export interface SimContext {
  now: number;
  podIP: string;
  /** The millisecond time this kubelet saw `key` (`pod`, or a containerID) start, if it remembers. */
  seen: (key: string) => number | undefined;
  newContainerID: () => string;
  /** The cpu/memory requests (milli-units) allocated to the node's other pods: what a resize must fit beside. */
  usedByOthers: { cpu: number; memory: number };
}

export interface SimResult {
  status: V1PodStatus;
  /** Millisecond starts of what `status` begins (`pod`, new containerIDs): the caller remembers them once written. */
  marks: Record<string, number>;
  /** When the status changes next without any outside event (a container becomes ready, crashes again). */
  wakeAt?: number;
}

/** Timestamps as the API stores them: whole seconds (so a status read back compares equal). */
export function apiTime(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

interface Step {
  ctx: SimContext;
  settings: SimSettings;
  pod: V1Pod;
  marks: Record<string, number>;
  wake: (at: number) => void;
}

/** The next status of a bound, live pod. */
export function simulatePod(pod: V1Pod, settings: SimSettings, ctx: SimContext): SimResult {
  const previous = pod.status ?? {};
  const marks: Record<string, number> = {};
  let wakeAt: number | undefined;
  const step: Step = { ctx, settings, pod, marks, wake: (at) => (wakeAt = Math.min(wakeAt ?? at, at)) };

  if (!previous.startTime) marks.pod = ctx.now;
  const podStart = previous.startTime ? (ctx.seen('pod') ?? previous.startTime.getTime()) : ctx.now;
  const running = ctx.now >= podStart + settings.startDelayMs;
  if (!running) step.wake(podStart + settings.startDelayMs);

  const resize = running ? resizeStep(pod, settings, ctx, step.wake) : null;
  if (resize?.accepted) marks.resize = ctx.now;
  const containerStatuses = (pod.spec?.containers ?? []).map((container) => {
    const before = previous.containerStatuses?.find((cs) => cs.name === container.name);
    if (!running) return creatingStatus(container);
    // §4.9: a resize carried out — the new values reported; restarted when its resizePolicy says so.
    if (before?.containerID && resize?.restart.has(container.name)) {
      return startContainer(container, before.restartCount + 1, stoppedState(before, ctx.now), step);
    }
    const next = nextContainerStatus(container, before, step);
    if (resize?.actuate.has(container.name)) return { ...next, resources: reportedResources(container) };
    // Until then the container runs with what was allocated, an image restart included.
    return before?.resources ? { ...next, resources: before.resources } : next;
  });
  const unready = containerStatuses.filter((cs) => !cs.ready).map((cs) => cs.name);
  const containersReady = containersReadyCondition(unready);
  const conditions = setConditions(
    resize ? resize.conditions : (previous.conditions ?? []),
    [
      { type: 'PodReadyToStartContainers', status: 'True' },
      { type: 'Initialized', status: 'True' },
      readyCondition(pod, unready),
      containersReady,
      { type: 'PodScheduled', status: 'True' },
    ],
    apiTime(ctx.now),
  );
  const status: V1PodStatus = {
    phase: running ? 'Running' : 'Pending',
    conditions,
    hostIP: settings.hostIP,
    hostIPs: [{ ip: settings.hostIP }],
    podIP: ctx.podIP,
    podIPs: [{ ip: ctx.podIP }],
    startTime: previous.startTime ?? apiTime(ctx.now),
    containerStatuses,
  };
  return { status, marks, wakeAt };
}

function creatingStatus(container: V1Container): V1ContainerStatus {
  return {
    name: container.name,
    image: normalizeImage(container.image ?? ''),
    imageID: '',
    ready: false,
    started: false,
    restartCount: 0,
    state: { waiting: { reason: 'ContainerCreating' } },
    lastState: {},
  };
}

function nextContainerStatus(container: V1Container, before: V1ContainerStatus | undefined, step: Step): V1ContainerStatus {
  const { ctx, settings } = step;
  const reference = container.image ?? '';
  if (!before?.containerID) return startContainer(container, 0, {}, step);
  if (before.image !== normalizeImage(reference)) {
    // In-place image change: kubelet kills the container and starts one from the new image.
    return startContainer(container, before.restartCount + 1, stoppedState(before, ctx.now), step);
  }
  if (isCrashLoopImage(reference) || !before.state?.running) {
    const crashedAt = step.ctx.seen(before.containerID) ?? before.lastState?.terminated?.finishedAt?.getTime() ?? ctx.now;
    const restartAt = crashedAt + settings.crashLoopRestartMs;
    if (ctx.now < restartAt) {
      step.wake(restartAt);
      return before;
    }
    return startContainer(container, before.restartCount + 1, stoppedState(before, ctx.now), step);
  }
  const startedAt = ctx.seen(before.containerID) ?? before.state.running.startedAt?.getTime() ?? ctx.now;
  const readyAt = startedAt + readyDelayOf(container, settings);
  if (ctx.now < readyAt) step.wake(readyAt);
  return { ...before, started: true, ready: ctx.now >= readyAt };
}

/** A new container (new containerID) from the spec's image; a `-crashloop` image dies at once. */
function startContainer(container: V1Container, restartCount: number, lastState: V1ContainerState, step: Step): V1ContainerStatus {
  const { ctx, settings, pod } = step;
  const reference = container.image ?? '';
  const containerID = ctx.newContainerID();
  step.marks[containerID] = ctx.now;
  const now = apiTime(ctx.now);
  // containerStatuses[].resources from the start: without them kube-apiserver refuses pods/resize
  // ("Pod running on node without support for resize", SPEC §4.9).
  const base = {
    name: container.name,
    image: normalizeImage(reference),
    imageID: imageIDOf(reference),
    containerID,
    restartCount,
    resources: reportedResources(container),
  };
  if (isCrashLoopImage(reference)) {
    step.wake(ctx.now + settings.crashLoopRestartMs);
    const podRef = `${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})`;
    return {
      ...base,
      ready: false,
      started: false,
      state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off 10s restarting failed container=${container.name} pod=${podRef}` } },
      lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: now, finishedAt: now, containerID } },
    };
  }
  const readyDelayMs = readyDelayOf(container, settings);
  if (readyDelayMs > 0) step.wake(ctx.now + readyDelayMs);
  return { ...base, ready: readyDelayMs <= 0, started: true, state: { running: { startedAt: now } }, lastState };
}

/**
 * Started → ready: the simulation's delay, or the readinessProbe's initialDelaySeconds if longer (a
 * kubelet runs no readiness probe before it, so no container is ready sooner).
 */
function readyDelayOf(container: V1Container, settings: SimSettings): number {
  return Math.max(settings.readyDelayMs, (container.readinessProbe?.initialDelaySeconds ?? 0) * 1000);
}

/** What a container leaves in `lastState` when it is stopped (or, crashing, what it already left). */
function stoppedState(before: V1ContainerStatus, now: number): V1ContainerState {
  if (!before.state?.running) return before.lastState ?? {};
  return {
    terminated: {
      exitCode: 0,
      reason: 'Completed',
      startedAt: before.state.running.startedAt,
      finishedAt: apiTime(now),
      containerID: before.containerID,
    },
  };
}

/**
 * The status kubelet writes once a deleted pod's containers are stopped (Kubernetes >= 1.27 puts a
 * deleted pod in a terminal phase before confirming the deletion): Succeeded when every container
 * exited 0, else Failed.
 */
export function terminatedStatus(pod: V1Pod, now: number): V1PodStatus {
  const previous = pod.status ?? {};
  const containerStatuses = (previous.containerStatuses ?? []).map((before): V1ContainerStatus => {
    const running = before.state?.running;
    const terminated = running
      ? { exitCode: 0, reason: 'Completed', startedAt: running.startedAt, finishedAt: apiTime(now), containerID: before.containerID }
      : (before.state?.terminated ??
        before.lastState?.terminated ?? { exitCode: 137, reason: 'ContainerStatusUnknown', finishedAt: apiTime(now) });
    return { ...before, ready: false, started: false, state: { terminated } };
  });
  const succeeded = containerStatuses.every((cs) => cs.state?.terminated?.exitCode === 0);
  const completed = { status: 'False' as const, reason: 'PodCompleted' };
  return {
    phase: succeeded ? 'Succeeded' : 'Failed',
    conditions: setConditions(
      previous.conditions ?? [],
      [
        { type: 'Ready', ...completed },
        { type: 'ContainersReady', ...completed },
        { type: 'PodReadyToStartContainers', status: 'False' },
      ],
      apiTime(now),
    ),
    containerStatuses,
  };
}
