// Pod conditions as kubelet's status manager writes them: it owns a fixed set of types, computes
// Ready from ContainersReady and the readiness gates, moves lastTransitionTime only when a status
// flips, and keeps every condition it does not own (readiness gates are set by someone else).

import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';

export interface DesiredCondition {
  type: string;
  status: 'True' | 'False';
  reason?: string;
  message?: string;
}

/** The condition types this kubelet writes; any other type in status belongs to someone else. */
export const KUBELET_CONDITIONS = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];

/** `Ready`, as kubelet's GeneratePodReadyCondition: ContainersReady and every readiness gate True. */
export function readyCondition(pod: V1Pod, unreadyContainers: string[]): DesiredCondition {
  if (unreadyContainers.length > 0) {
    return {
      type: 'Ready',
      status: 'False',
      reason: 'ContainersNotReady',
      message: `containers with unready status: [${unreadyContainers.join(' ')}]`,
    };
  }
  const conditions = pod.status?.conditions ?? [];
  const unreadyGates: string[] = [];
  for (const { conditionType } of pod.spec?.readinessGates ?? []) {
    const condition = conditions.find((c) => c.type === conditionType);
    if (!condition) unreadyGates.push(`corresponding condition of pod readiness gate "${conditionType}" does not exist.`);
    else if (condition.status !== 'True') {
      unreadyGates.push(`the status of pod readiness gate "${conditionType}" is not "True", but ${condition.status}`);
    }
  }
  if (unreadyGates.length > 0) {
    return { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: unreadyGates.join(', ') };
  }
  return { type: 'Ready', status: 'True' };
}

/** `ContainersReady`: True when no container is unready. */
export function containersReadyCondition(unreadyContainers: string[]): DesiredCondition {
  if (unreadyContainers.length === 0) return { type: 'ContainersReady', status: 'True' };
  return {
    type: 'ContainersReady',
    status: 'False',
    reason: 'ContainersNotReady',
    message: `containers with unready status: [${unreadyContainers.join(' ')}]`,
  };
}

/**
 * `current` with each desired condition set: a condition whose status is unchanged keeps its
 * lastTransitionTime; others get `now`. Conditions not in `desired` are kept untouched, in place.
 */
export function setConditions(current: V1PodCondition[], desired: DesiredCondition[], now: Date): V1PodCondition[] {
  const next = current.map((c) => ({ ...c }));
  for (const want of desired) {
    const index = next.findIndex((c) => c.type === want.type);
    const previous = index >= 0 ? next[index] : undefined;
    const condition: V1PodCondition = {
      type: want.type,
      status: want.status,
      lastProbeTime: undefined,
      lastTransitionTime: previous?.status === want.status ? previous.lastTransitionTime : now,
      reason: want.reason,
      message: want.message,
    };
    if (index >= 0) next[index] = condition;
    else next.push(condition);
  }
  return next;
}
