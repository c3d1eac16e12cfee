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
import { comparableVersionOf, isNewer } from './resource-version.ts';
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
 * The pod as the API server has it, at least as new as the event's (`seen`). From the watch cache at
 * once (resourceVersion 0) when that copy is not older than `seen` — one API server's cache already
 * holds every version it has sent in an event — else, or without a `seen`, a quorum read from etcd,
 * as before: newer than anything a genuine event showed. A forged `seen` (999999999999) costs that
 * one more read, never a wait (a GET asked not to be older than a version the server has not reached
 * waits ~3 s for it). A decision from a copy not older than the event is as good as one from etcd's
 * newest: its write is conditional on the copy's resourceVersion (a newer pod: 409), and any change
 * after the copy comes as an event of its own. Mid-rollout on the dev stack the quorum GET was the
 * slowest of reconcile's reads (bench/rollout.ts); the readiness GET is on the path of every pod's
 * update twice (the gate opening on the restart, the finish).
 */
async function readPod(client: KubeClient, target: Extract<Target, { kind: 'pod' }>, seen: string | undefined): Promise<Pod | null> {
  const get = (query?: Record<string, string>) =>
    client.request<Pod>('GET', paths.pod(target.namespace, target.name), query ? { query } : {}).catch((err) => {
      if (err instanceof ApiError && err.isNotFound) return null;
      throw err;
    });
  if (seen === undefined) return get();
  const cached = await get({ resourceVersion: '0' });
  const version = cached?.metadata.resourceVersion;
  // Not found in the cache, or older than the event (or not comparable): etcd says.
  return version !== undefined && isNewer(seen, version) === false ? cached : get();
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
    const pod = await readPod(clock.client, target, comparableVersionOf(object));
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
