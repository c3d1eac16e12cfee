// SPEC §2.4 "In flight, nothing is lost for long": whether a NeoSet, as one decision leaves it, has
// anything in flight — work that goes on by itself (the kubelet's, the readiness function's, the
// clock's) and whose next step an event would start. While any NeoSet has, the reconcile function
// keeps the fast tick (shared/k8s/fast-tick.ts): a lost event then costs at most a minute. A NeoSet
// with nothing in flight waits only on a person (a pause, a canary step without duration, a failed
// rollout) or on nothing: a lost event costs at most the slow tick.
//
// In flight, from the decision and the status it leaves:
//   * a time-based wait (requeueAfter: minReadySeconds, a grace period, a deadline, a timed pause, a
//     hook's timeout, an analysis);
//   * any write but an Event (each starts something whose end is another event);
//   * pods being updated (currentUpdatePods), a rollout moving (phase RollingOut), or a scale not
//     done (pods missing or in excess of spec.replicas, or not all Ready): their next step comes from
//     the kubelet, as an event.
// So a rollout stuck on a pod that never becomes Ready keeps the fast tick until someone acts (a
// rollback, a fix, a pause): it is in flight, and cheap at one tick a minute.
import type { NeoSet } from '../api/neoset.ts';
import type { Plan } from './plan.ts';

export function inFlight(neoset: Pick<NeoSet, 'spec' | 'status'>, plan: Pick<Plan, 'actions' | 'status' | 'requeueAfter'>): boolean {
  if (plan.requeueAfter !== null) return true;
  if (plan.actions.some((a) => a.kind !== 'recordEvent')) return true;
  const status = plan.status ?? neoset.status;
  if (!status) return true; // never decided on: its first status write is still to come
  if (status.phase === 'RollingOut' || (status.currentUpdatePods?.length ?? 0) > 0) return true;
  const replicas = neoset.spec.replicas ?? 1;
  return (status.replicas ?? 0) !== replicas || (status.readyReplicas ?? 0) < replicas;
}
