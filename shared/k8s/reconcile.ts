// One invocation's work, shared by the reconcile and readiness functions: name the NeoSets an event
// points at, then for each read → decide → apply. Nothing is kept between invocations (SPEC §2).
import { LABEL_NEOSET_NAME } from '../api/names.ts';
import type { Pod } from '../core/objects.ts';
import { parseOrdinal } from '../core/pods/identity.ts';
import type { Plan } from '../core/plan.ts';
import type { Snapshot } from '../core/snapshot.ts';
import type { Target } from '../events/target.ts';
import type { AnalysisAddresses } from '../core/canary/addresses.ts';
import { judge } from '../core/canary/progress.ts';
import { inFlight } from '../core/in-flight.ts';
import { analysisTotal, reconcileDuration, reconcilePhase, reconcileTotal } from '../metrics/registry.ts';
import type { LifecycleSink } from '../events/lifecycle-sink.ts';
import type { NotificationSink } from '../events/notify.ts';
import { applyPlan, writtenBefore } from './apply.ts';
import { ApiError, type KubeClient } from './client.ts';
import { paths } from './paths.ts';
import { serverClock, systemClock } from './server-clock.ts';
import { measure } from './prometheus-query.ts';
import { listNeoSetKeys } from './neoset-keys.ts';
import { InvalidNeoSetError, readSnapshot, readSnapshotCached } from './snapshot-reader.ts';
import { epochMs, timedRequests, type RunTiming } from './run-timing.ts';
import { instanceReads, ReadRefused, ReadsBusy, runBudget, snapshotMaxBytes, TooLargeToDecide, type InstanceBudget } from './read-budget.ts';
import { reportTooLarge } from './too-large.ts';

export interface NeoSetKey {
  namespace: string;
  name: string;
}

export interface Outcome {
  neoset: string;
  /**
   * 'failed': the API server refused a write; reported on the NeoSet (Event, condition), not worth a redelivery.
   * 'gone': the NeoSet is not there, or its namespace is being deleted (apply.ts): nothing to do.
   * 'too-large': its snapshot passed the run's byte limit (read-budget.ts): reported on the NeoSet, not retried.
   */
  result: 'ok' | 'conflict' | 'failed' | 'gone' | 'invalid' | 'too-large' | 'error';
  actions: string[];
  statusWritten: boolean;
  requeueAfter: number | null;
  error?: string;
  /** Whether redelivering the event could help (a transient API failure). */
  transient?: boolean;
  /** Why no run was needed for this event (its pod's next change is someone else's). */
  skipped?: string;
  /** When the run's phases ended (reconcile only; logged with the event: bench/rollout.ts's step breakdown). */
  timing?: RunTiming;
  /** The NeoSet read from the watch cache was older than etcd's: the run decided again on etcd's (reconcile only). */
  reread?: true;
  /** A read was refused for the instance's budget (ReadsBusy): nothing was decided; worth a try once other runs let go. */
  busy?: true;
  /**
   * The NeoSet has something in flight as this run leaves it (shared/core/in-flight.ts, SPEC §2.4):
   * set on decided runs ('ok', 'conflict', 'failed'); absent when nothing was decided.
   */
  inFlight?: boolean;
}

export type Decider = (snapshot: Snapshot, now: Date) => Plan;

/**
 * The NeoSets an event's target names (a Pod in Reference mode costs one read to find its label). The
 * reconcile function sweeps a tick's through shared/k8s/sweep.ts, which lists them page by page.
 */
export async function neosetsOf(client: KubeClient, target: Target): Promise<NeoSetKey[]> {
  switch (target.kind) {
    case 'ignore':
      return [];
    case 'all':
      return listNeoSetKeys(client);
    case 'neoset':
      return [{ namespace: target.namespace, name: target.name }];
    case 'pod': {
      if (target.neoset) return [{ namespace: target.namespace, name: target.neoset }];
      const pod = await client.request<Pod>('GET', paths.pod(target.namespace, target.name)).catch((err) => {
        if (err instanceof ApiError && err.isNotFound) return null;
        throw err;
      });
      const label = pod?.metadata.labels?.[LABEL_NEOSET_NAME];
      if (label) return [{ namespace: target.namespace, name: label }];
      if (pod) return [];
      // The pod is gone (Reference-mode delete): its NeoSet is the one whose name + "-<ordinal>" it had.
      const all = await listNeoSetKeys(client, target.namespace);
      return all.filter((n) => parseOrdinal(n.name, target.name) !== null);
    }
  }
}

export interface ReconcileOptions {
  /**
   * The instance's wall clock: decisions are not made on it but on the API server's, read from the
   * run's responses (server-clock.ts, SPEC §2.3); it stands in only while no response carried a `Date`.
   */
  now?: () => Date;
  /** The instance's monotonic clock (ms): what carries the server's time from a response to a decision. */
  monotonic?: () => number;
  /** Told the run's clock offset (instance minus server, seconds; null: no `Date` seen) once it is decided. */
  onClockOffset?: (offsetSeconds: number | null) => void;
  sink?: LifecycleSink;
  /** Rollout notifications (SPEC §4.12), sent after the status write that made them true. */
  notify?: NotificationSink;
  /** The newest resourceVersion of the Pods in the events this run answers (readSnapshot's `seen`). */
  seen?: string;
  /** The newest resourceVersion of the NeoSet in the events this run answers (readSnapshotCached's `neosetSeen`). */
  neosetSeen?: string;
  /** A NeoSet event of this run showed no version: the NeoSet is read from etcd (reconcile-dispatch.ts Ask). */
  neosetFromEtcd?: boolean;
  /** Takes the plan's Events in flight instead of awaiting them (ApplyOptions.defer). */
  defer?: (tail: Promise<void>) => void;
  /** The Prometheus addresses a canary analysis may query (SPEC §2.3); default none: no query runs. */
  analysisAddresses?: AnalysisAddresses;
  /**
   * The bytes a run's snapshot may hold, and the instance's budget it shares with the runs in flight
   * (read-budget.ts; default NEOSET_SNAPSHOT_MAX_BYTES and the process's NEOSET_READ_BUDGET_BYTES).
   */
  reads?: { snapshotMaxBytes: number; instance: InstanceBudget };
}

/** Reads, decides and applies for one NeoSet. Never throws: the outcome says what happened. */
export async function reconcileOne(client: KubeClient, key: NeoSetKey, decider: Decider, opts: ReconcileOptions = {}): Promise<Outcome> {
  const first = await attempt(client, key, decider, opts, !opts.neosetFromEtcd);
  // The NeoSet from the watch cache was older than etcd's (its write lost, 409): decided again on
  // etcd's at once. Not left to the winner's event: a status write's event is skipped
  // (event-relevance.ts) — and the winner may be this very instance's previous run.
  if (!first.reread) return first;
  const again = await attempt(client, key, decider, opts, false);
  return { ...again, actions: [...first.actions, ...again.actions], reread: true };
}

/**
 * The apply phase's requests, each charged to the instance's budget while it is in flight — its body
 * (a created pod or revision carries the template: up to 1.5 MiB, SPEC §2.5) and its answer as it
 * arrives — and given back once answered: a write past the budget is refused (ReadsBusy, transient)
 * before it is sent. Not to the run's NEOSET_SNAPSHOT_MAX_BYTES: a write is not what a decision is on.
 */
export function chargedInFlight(client: KubeClient, instance: InstanceBudget): KubeClient {
  return {
    async request(verb, path, opts = {}) {
      const budget = runBudget(instance, Infinity);
      try {
        return await client.request(verb, path, { ...opts, budget });
      } finally {
        budget.release();
      }
    },
  };
}

/** One read → decide → apply, the NeoSet from the watch cache or from etcd. */
async function attempt(client: KubeClient, key: NeoSetKey, decider: Decider, opts: ReconcileOptions, cached: boolean): Promise<Outcome> {
  const { now = () => new Date(), sink, notify, seen, neosetSeen, defer, analysisAddresses = [] } = opts;
  // Every request of the run goes through the clock, so the snapshot's responses set `now` for the
  // decision and a chained write's response keeps it on the server's clock for what the applier stamps.
  const timing: RunTiming = { started: epochMs(), requests: [] };
  const clock = serverClock(timedRequests(client, timing), { wall: () => now().getTime(), monotonic: opts.monotonic ?? systemClock.monotonic });
  const id = `${key.namespace}/${key.name}`;
  const stop = reconcileDuration.startTimer();
  // What the run's reads hold, given back when it is done with its snapshot (after the apply).
  const instance = opts.reads?.instance ?? instanceReads;
  const budget = runBudget(instance, opts.reads?.snapshotMaxBytes ?? snapshotMaxBytes);
  const outcome = await (async (): Promise<Outcome> => {
    try {
      const read = reconcilePhase.startTimer({ phase: 'read' });
      const reading = { budget };
      const { snapshot, neosetFromCache } = cached ? await readSnapshotCached(clock.client, key.namespace, key.name, seen, neosetSeen, reading) : { snapshot: await readSnapshot(clock.client, key.namespace, key.name, seen, reading), neosetFromCache: false };
      read();
      timing.read = epochMs();
      if (!snapshot) return { neoset: id, result: 'gone', actions: [], statusWritten: false, requeueAfter: null };
      const at = clock.now();
      opts.onClockOffset?.(clock.offsetSeconds());
      const deciding = reconcilePhase.startTimer({ phase: 'decide' });
      let plan = decider(snapshot, at);
      deciding();
      timing.decided = epochMs();
      // §4.11: a step's end is due and must pass a Prometheus query: measure (I/O, here at the edge)
      // and decide again with the measurement; decide() stays pure.
      if (plan.analysis) {
        const measurement = await measure(plan.analysis, { allowed: analysisAddresses });
        analysisTotal.inc({ result: judge(plan.analysis, measurement).result });
        plan = decider({ ...snapshot, analysis: measurement }, at);
      }
      const apply = reconcilePhase.startTimer({ phase: 'apply' });
      const applied = await applyPlan(chargedInFlight(clock.client, instance), snapshot, plan, { now: clock.now, sink, notify, defer, neosetFromCache }).finally(() => apply());
      return {
        ...(neosetFromCache && applied.neosetWriteLost ? { reread: true as const } : {}),
        neoset: id,
        result: applied.outcome === 'applied' ? 'ok' : applied.outcome,
        actions: applied.written,
        statusWritten: applied.statusWritten,
        requeueAfter: applied.outcome === 'gone' ? null : plan.requeueAfter,
        ...(applied.outcome === 'gone' ? {} : { inFlight: inFlight(snapshot.neoset, plan) }),
        ...(applied.error ? { error: applied.error.message } : {}),
      };
    } catch (err) {
      if (err instanceof InvalidNeoSetError) return { neoset: id, result: 'invalid', actions: [], statusWritten: false, requeueAfter: null, error: err.message };
      if (err instanceof TooLargeToDecide) {
        budget.release();
        await reportTooLarge(clock.client, key, err, clock.now());
        return { neoset: id, result: 'too-large', actions: [], statusWritten: false, requeueAfter: null, error: err.message };
      }
      // ReadsBusy (the instance's budget, read-budget.ts) is transient: other runs let go.
      const transient = err instanceof ApiError ? err.isTransient : err instanceof ReadRefused;
      return { neoset: id, result: 'error', actions: writtenBefore(err), statusWritten: false, requeueAfter: null, error: (err as Error).message, transient, ...(err instanceof ReadsBusy ? { busy: true as const } : {}) };
    }
  })().finally(() => budget.release());
  stop();
  reconcileTotal.inc({ result: outcome.result });
  return { ...outcome, timing };
}
