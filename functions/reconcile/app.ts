// The reconcile function: NeoSet and Pod events and resync ticks → read, decide, apply (SPEC §2.2).
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import type { AnalysisAddresses } from '../../shared/core/canary/addresses.ts';
import { decide } from '../../shared/core/decide.ts';
import { handledFromBirth } from '../../shared/handled.ts';
import { createEventApp } from '../../shared/http/event-app.ts';
import { trackUnfinished } from '../../shared/http/unfinished.ts';
import { sinkFromEnv, type LifecycleSink } from '../../shared/events/lifecycle-sink.ts';
import { notificationSinkFromEnv, type NotificationSink } from '../../shared/events/notify.ts';
import { eventAsk, mergeAsks, RECHECK_ASK, recheckDelayMs, type Ask } from '../../shared/events/reconcile-dispatch.ts';
import { createLogger } from '../../shared/http/logger.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { createCoalescer, mapBounded, type Covered } from '../../shared/k8s/coalesce.ts';
import { neosetKeyPages } from '../../shared/k8s/neoset-keys.ts';
import { offsetReporter } from '../../shared/k8s/server-clock.ts';
import { neosetsOf, reconcileOne, type NeoSetKey, type Outcome } from '../../shared/k8s/reconcile.ts';
import { createSweeper } from '../../shared/k8s/sweep.ts';
import { createFastTick, type FastTick } from '../../shared/k8s/fast-tick.ts';
import { fastTickFromEnv } from '../../shared/events/target.ts';
import { eventWait } from '../../shared/metrics/registry.ts';
import { metricsPortApp } from '../../shared/metrics/metrics-port.ts';

/**
 * NeoSets reconciled at once by one instance's resync sweep (and by one event that names several).
 * A sweep waits on round trips: a NeoSet's run is three reads at once, and the next NeoSet starts when
 * one ends. Issue 34: 1,500 NeoSets with 300 ms added to every request must be swept within the tick's
 * minute — on a loaded 2-core machine a run took 640-850 ms, so 16 at once took 55-83 s, 32 took 40 s
 * (test/integration/ticks.test.ts). 32 runs' reads are up to 96 requests; the client keeps 64 sockets (API_SOCKETS: why not 96, see there).
 */
export const SWEEP_PARALLELISM = 32;

/** Tries of a sweep's run refused for the instance's read budget: waits of 0.2, 0.4 … 2 s, ~20 s in all. */
export const SWEEP_BUSY_ATTEMPTS = 14;

/** What one event's answer rests on, for one NeoSet it names (SPEC §2.0; times are performance.now()). */
export interface EventCoverage {
  eventId: string;
  neoset: string;
  /** When the event reached the handler. */
  arrivedAt: number;
  /** When the reconcile whose outcome answers the event started, and finished. */
  startedAt: number;
  finishedAt: number;
}

/** One NeoSet's run: its outcome, and its Events still in flight (awaited before an event is answered). */
type Run = { outcome: Outcome; tail: Promise<unknown> };

export interface ReconcileDeps {
  client: KubeClient;
  logger?: Logger;
  now?: () => Date;
  /** Schedules a re-check; default an unref'd timer (losing it is harmless: resync covers it). */
  recheck?: (key: NeoSetKey, delayMs: number) => void;
  /** Told, per event and NeoSet, which reconcile answered it (for tests and measurements). */
  onCovered?: (covered: EventCoverage) => void;
  /** Where lifecycle state changes go (SPEC §4.10); default $K_SINK when set. */
  sink?: LifecycleSink;
  /** Where rollout notifications go (SPEC §4.12); default $K_SINK when set. */
  notify?: NotificationSink;
  /** The Prometheus addresses a canary analysis may query (NEOSET_ANALYSIS_ADDRESSES, SPEC §2.3); default none. */
  analysisAddresses?: AnalysisAddresses;
  /** The fast tick (SPEC §2.4, shared/k8s/fast-tick.ts); default the one $NEOSET_FAST_TICK names, null: none. */
  fastTick?: FastTick | null;
}

/**
 * Whether a run's NeoSet keeps the fast tick: something in flight, or a run that did not finish
 * deciding (a lost race re-checks, a transient failure is redelivered: both may need a minute's tick
 * if the instance is scaled away first). A NeoSet gone, invalid or too large waits on a person.
 */
export const keepsFastTick = (outcome: Outcome): boolean => outcome.inFlight === true || outcome.result === 'conflict' || outcome.result === 'error';

export function createApp(deps: ReconcileDeps): Hono {
  const now = deps.now ?? (() => new Date());
  const log = deps.logger ?? createLogger('reconcile');
  // Decisions are on the API server's clock (SPEC §2.3); a node whose own is off says so, at most every 10 minutes.
  const onClockOffset = offsetReporter((offsetSeconds) => log.warn({ offsetSeconds }, "this instance's clock differs from the API server's: deciding on the API server's"));
  const sink = deps.sink ?? sinkFromEnv((err, e) => log.warn({ pod: `${e.namespace}/${e.pod.metadata?.name}`, state: e.state, error: err.message }, 'lifecycle event not delivered to K_SINK'));
  const notify = deps.notify ?? notificationSinkFromEnv((err, n) => log.warn({ id: n.id, type: n.type, error: err.message }, 'notification not delivered to K_SINK'));
  const fastTick = deps.fastTick !== undefined ? deps.fastTick : (() => {
    const ticks = fastTickFromEnv();
    return ticks && createFastTick({ client: deps.client, ...ticks, logger: log });
  })();
  // One table per app instance (STYLE §6): at most one reconcile per NeoSet at a time, and the events
  // that arrive meanwhile share one follow-up, which does what any of them asked (reconcile-dispatch.ts).
  // A run ends, and the NeoSet's next may start, once its writes have landed; its Events may still be
  // in flight (`tail`): each event covered waits for them before it is answered.
  // A tail is awaited only after the run returns: handled from birth (shared/handled.ts).
  const coalescer = createCoalescer<Ask, Run>({
    merge: mergeAsks,
    // Tracked (trackUnfinished): a stopping instance finishes a run and its Events even when no
    // request waits for them (a re-check's run), before it exits.
    run: (key, { duties, seen, neosetSeen, neosetFromEtcd }) =>
      trackUnfinished(
        (async () => {
          const tails: Promise<void>[] = [];
          const outcome = await reconcileOne(deps.client, key, (s, at) => decide(s, at, duties), { now, onClockOffset, sink, notify, seen, neosetSeen, neosetFromEtcd, defer: (t) => void tails.push(handledFromBirth(t)), analysisAddresses: deps.analysisAddresses });
          // Once per run, not per event: the events a run covers share its re-check too.
          const delayMs = recheckDelayMs(outcome);
          if (delayMs !== null) recheck(key, delayMs);
          // Before the run's events are answered: acknowledged, its wait is in the cluster (SPEC §2.4).
          if (fastTick && keepsFastTick(outcome)) await fastTick.need();
          return { outcome, tail: trackUnfinished(Promise.all(tails)) };
        })(),
      ),
  });
  // Resync ticks share one sweep (SPEC §2.5): one queue of runs per instance, whatever the ticks.
  const sweeper = createSweeper<Covered<Run>>({
    pages: () => neosetKeyPages(deps.client),
    // A run refused for the instance's read budget (ReadsBusy: the sweep's other runs hold it) waits
    // and tries again within the sweep, rather than leaving its NeoSet to the next tick: it held
    // nothing while it waited, so runs never wait on each other (read-budget.ts).
    run: async (key) => {
      for (let attempt = 1; ; attempt++) {
        const covered = await coalescer.reconcile(key, RECHECK_ASK);
        await covered.value.tail;
        if (!covered.value.outcome.busy || attempt >= SWEEP_BUSY_ATTEMPTS) return covered;
        await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** attempt)));
      }
    },
    parallelism: SWEEP_PARALLELISM,
    onSweep: (summary) => log.info(summary, 'sweep'),
  });
  const recheck =
    deps.recheck ??
    ((key: NeoSetKey, delayMs: number) => {
      setTimeout(() => {
        coalescer.reconcile(key, RECHECK_ASK).catch((err: Error) => log.error({ neoset: `${key.namespace}/${key.name}`, error: err.message }, 're-check'));
      }, delayMs).unref();
    });
  return createEventApp({
    name: 'reconcile',
    logger: log,
    handle: async (event) => {
      const arrivedAt = performance.now();
      const answered = ({ value, startedAt, finishedAt }: Covered<Run>, waited: boolean) => {
        if (waited) eventWait.observe(Math.max(0, startedAt - arrivedAt) / 1000);
        deps.onCovered?.({ eventId: event.id, neoset: value.outcome.neoset, arrivedAt, startedAt, finishedAt });
        return value.outcome;
      };
      // A failure to list the NeoSets throws: 503, the Broker redelivers. A tick's failed NeoSets are
      // answered 200 by the event app: they wait for the next tick. A tick's wait is its sweep's
      // (neoset_sweep_duration_seconds), not an event's behind one run (neoset_event_wait_seconds).
      if (event.target.kind === 'all') {
        // The fast tick as it was before any run of this tick's sweep started (fast-tick.ts: retire).
        const before = fastTick && (await fastTick.read());
        const swept = await sweeper.tick(event.id);
        if (fastTick && !swept.some(({ value }) => keepsFastTick(value.value.outcome))) await fastTick.retire(before ?? null);
        return swept.map(({ value }) => answered(value, false));
      }
      const keys = await neosetsOf(deps.client, event.target);
      // An event whose object shows nothing for reconcile to do (its next change is someone else's, and
      // comes as its own event) costs no run.
      const asked = eventAsk(event, now().getTime());
      if ('skipped' in asked) return keys.map((key) => ({ neoset: `${key.namespace}/${key.name}`, result: 'ok', actions: [], statusWritten: false, requeueAfter: null, skipped: asked.skipped }));
      const { ask } = asked;
      return mapBounded(keys, SWEEP_PARALLELISM, async (key) => {
        const covered = await coalescer.reconcile(key, ask);
        await covered.value.tail;
        return answered(covered, true);
      });
    },
  });
}

/**
 * METRICS_PORT's app: the instance's series, the per-NeoSet ones and the NeoSet state gauges listed
 * from the API at scrape time (SPEC §4.8) — on that port only, never on the event port (SPEC §2.5).
 */
export const createMetricsApp = (client: KubeClient): Hono => metricsPortApp({ client });
