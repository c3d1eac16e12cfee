// The readiness function's work for one Pod event (SPEC §2.0, §2.2). The Pod in the event (Resource
// mode) may only tell it that nothing is to be done — most Pod events need nothing, and a skip costs
// no read. When the event's pod says something is to be done, the pod is read from the API server
// and the duties decided again from what was read; only that decision is applied, each write
// conditional on the resourceVersion read. So a forged or stale event (no resourceVersion, the
// current one, a state annotation removed, a finished update claimed) causes at most one GET, never
// a write the pod's real state does not call for (§2 "Event = hint, never command"): +1 read per
// pod written, not per event. What the decision needs of the NeoSet was recorded on the pod when its
// update started, so there is no NeoSet read. A Reference-mode event carries no pod: read at once.
import { KIND, LABEL_NEOSET_NAME } from '../api/names.ts';
import type { OwnerReference, Pod } from '../core/objects.ts';
import type { Action } from '../core/plan.ts';
import { podReadiness } from '../core/readiness/readiness.ts';
import type { Target } from '../events/target.ts';
import { reconcileDuration, reconcileTotal } from '../metrics/registry.ts';
import { applyPodWrites, writtenBefore } from './apply.ts';
import { ApiError, type KubeClient } from './client.ts';
import { paths } from './paths.ts';
import type { Outcome } from './reconcile.ts';
import { serverClock, systemClock } from './server-clock.ts';

/** What readiness would do for a pod: null when it is no NeoSet's pod (nothing to do, no outcome). */
type Duties = { owner: OwnerReference; actions: Action[] } | null;

function dutiesOf(pod: Pod | null, nowMs: number): Duties {
  const owner = pod?.metadata.ownerReferences?.find((r) => r.controller && r.kind === KIND);
  if (!pod || !owner || pod.metadata.labels?.[LABEL_NEOSET_NAME] !== owner.name) return null;
  return { owner, actions: podReadiness(pod, nowMs) };
}

/**
 * The duties the event's pod would call for, or 'read' when only a read can say: the event's pod
 * would have something written, or is not even shaped like a pod (a forged body decides nothing).
 */
function hinted(object: unknown, nowMs: number): Duties | 'read' {
  if (object === null || object === undefined) return 'read';
  try {
    const duties = dutiesOf(object as Pod, nowMs);
    return duties && duties.actions.length > 0 ? 'read' : duties;
  } catch {
    return 'read';
  }
}

/**
 * `now` is the instance's wall clock: it only decides a skip (whether there are duties does not depend
 * on the time; only what they stamp does). What is written is decided on the API server's clock, read
 * from the GET's `Date` (server-clock.ts, SPEC §2.3): the gate's lastTransitionTime and the update's
 * duration. `now` stands in only when no response carries a `Date`.
 */
export async function readinessOne(
  client: KubeClient,
  target: Extract<Target, { kind: 'pod' }>,
  object: unknown,
  now: () => Date,
  monotonic: () => number = systemClock.monotonic,
): Promise<Outcome[]> {
  const stop = reconcileDuration.startTimer();
  const clock = serverClock(client, { wall: () => now().getTime(), monotonic });
  let duties = hinted(object, now().getTime());
  if (duties === 'read') {
    const pod = await clock.client.request<Pod>('GET', paths.pod(target.namespace, target.name)).catch((err) => {
      if (err instanceof ApiError && err.isNotFound) return null;
      throw err;
    });
    duties = dutiesOf(pod, clock.now().getTime());
  }
  if (!duties) return [];
  const { owner, actions } = duties;
  const id = `${target.namespace}/${owner.name}`;
  const outcome = await (async (): Promise<Outcome> => {
    if (actions.length === 0) return { neoset: id, result: 'ok', actions: [], statusWritten: false, requeueAfter: null };
    try {
      const applied = await applyPodWrites(clock.client, { name: owner.name, namespace: target.namespace, uid: owner.uid }, actions, { now: clock.now });
      const result = applied.outcome === 'applied' ? 'ok' : applied.outcome;
      return { neoset: id, result, actions: applied.written, statusWritten: false, requeueAfter: null, ...(applied.error ? { error: applied.error.message } : {}) };
    } catch (err) {
      const transient = err instanceof ApiError ? err.isTransient : false;
      return { neoset: id, result: 'error', actions: writtenBefore(err), statusWritten: false, requeueAfter: null, error: (err as Error).message, transient };
    }
  })();
  stop();
  reconcileTotal.inc({ result: outcome.result });
  return [outcome];
}
