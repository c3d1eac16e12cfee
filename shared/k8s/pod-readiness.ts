// The readiness function's work for one Pod event (SPEC §2.0, §2.2). The Pod in the event (Resource
// mode) is a claim. Most Pod events need nothing, and the event's pod may say so: a skip costs no
// request. When it says something is to be done, the write is decided on the event's pod and carries
// the facts it was decided on as JSON Patch tests that the API server checks against the pod as stored
// before it applies anything (pod-facts.ts): one request, and nothing written that the pod's real state
// does not call for. A test that fails — the pod moved on, or the event was stale or forged — costs a
// GET: the duties are decided again from the pod as read, each write conditional on its
// resourceVersion (as every write was before issue 24). So a forged event (no resourceVersion, the
// current one, a state annotation removed, a finished update claimed) causes at most a refused write
// and one GET, never a write (§2 "Event = hint, never command"). What the decision needs of the NeoSet
// was recorded on the pod when its update started, so there is no NeoSet read. A Reference-mode event
// carries no pod: read at once. The stamps a write carries are on the server's clock: a write on facts
// is made only while the instance holds a Date read in the last RECENT_CLOCK_MS (server-clock.ts),
// else it reads first.
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
import { podFacts, type PodFacts } from './pod-facts.ts';
import { serverClock, systemClock, type ClockMemory, type ServerClock } from './server-clock.ts';

/** What readiness would do for a pod: null when it is no NeoSet's pod (nothing to do, no outcome). */
type Duties = { owner: OwnerReference; actions: Action[] } | null;

function dutiesOf(pod: Pod | null, nowMs: number): Duties {
  const owner = pod?.metadata.ownerReferences?.find((r) => r.controller && r.kind === KIND);
  if (!pod || !owner || pod.metadata.labels?.[LABEL_NEOSET_NAME] !== owner.name) return null;
  return { owner, actions: podReadiness(pod, nowMs) };
}

/** The duties of the event's pod, or 'read' when it is shaped so that they cannot be decided (forged). */
function hint(view: Pod, nowMs: number): Duties | 'read' {
  try {
    return dutiesOf(view, nowMs);
  } catch {
    return 'read';
  }
}

/**
 * `now` is the instance's wall clock: it only decides a skip (whether there are duties does not depend
 * on the time; only what they stamp does). What is written is stamped on the API server's clock, read
 * from a response's `Date` (server-clock.ts, SPEC §2.3): the gate's lastTransitionTime and the
 * update's duration. `memory` holds the latest Date this instance read; `now` stands in only when no
 * response carries a `Date`.
 */
export async function readinessOne(
  client: KubeClient,
  target: Extract<Target, { kind: 'pod' }>,
  object: unknown,
  now: () => Date,
  monotonic: () => number = systemClock.monotonic,
  memory?: ClockMemory,
): Promise<Outcome[]> {
  const stop = reconcileDuration.startTimer();
  const clock = serverClock(client, { wall: () => now().getTime(), monotonic }, memory);
  const outcome = await (async (): Promise<Outcome | null> => {
    // An event's pod without the facts' shape (no uid, another name, no status) may still tell a skip,
    // as before there were facts; only a write needs them.
    const facts = object === null || object === undefined ? null : podFacts(object, target.namespace, target.name);
    const hinted = object === null || object === undefined ? 'read' : hint((facts?.view ?? object) as Pod, clock.now().getTime());
    // Not a NeoSet's pod, or nothing to do: answered from the event.
    if (hinted !== 'read' && (!hinted || hinted.actions.length === 0)) return act(clock, target, hinted, null);
    // Something to do: written on the event's facts while the server's clock is known.
    if (hinted !== 'read' && facts && clock.onServerClock()) {
      const written = await act(clock, target, hinted, facts);
      if (written?.result !== 'conflict') return written;
    }
    // No facts to go on, or they no longer held: the pod as read.
    const pod = await clock.client.request<Pod>('GET', paths.pod(target.namespace, target.name)).catch((err) => {
      if (err instanceof ApiError && err.isNotFound) return null;
      throw err;
    });
    return act(clock, target, dutiesOf(pod, clock.now().getTime()), null);
  })();
  if (!outcome) return [];
  stop();
  reconcileTotal.inc({ result: outcome.result });
  return [outcome];
}

/**
 * What the duties come to: nothing for no NeoSet's pod, an empty outcome when nothing is to be done,
 * else their writes — on `facts` (JSON Patch tests), or conditional on the resourceVersion read.
 */
async function act(clock: ServerClock, target: Extract<Target, { kind: 'pod' }>, duties: Duties, facts: PodFacts | null): Promise<Outcome | null> {
  if (!duties) return null;
  const { owner, actions } = duties;
  const id = `${target.namespace}/${owner.name}`;
  if (actions.length === 0) return { neoset: id, result: 'ok', actions: [], statusWritten: false, requeueAfter: null };
  try {
    const applied = await applyPodWrites(clock.client, { name: owner.name, namespace: target.namespace, uid: owner.uid }, actions, { now: clock.now, ...(facts ? { facts } : {}) });
    const result = applied.outcome === 'applied' ? 'ok' : applied.outcome;
    return { neoset: id, result, actions: applied.written, statusWritten: false, requeueAfter: null, ...(applied.error ? { error: applied.error.message } : {}) };
  } catch (err) {
    const transient = err instanceof ApiError ? err.isTransient : false;
    return { neoset: id, result: 'error', actions: writtenBefore(err), statusWritten: false, requeueAfter: null, error: (err as Error).message, transient };
  }
}
