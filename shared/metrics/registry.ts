// The per-instance metrics of SPEC §4.8. Metrics registries are the one module-level state allowed
// in function code (STYLE §6): they are reported, never read back for a decision.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { NEOSET_VERSION } from '../version.ts';

export const registry = new Registry();
/**
 * How often the event loop's delay is sampled (nodejs_eventloop_lag_*). prom-client's default, 10 ms,
 * is a timer waking the process 100 times a second: 7 ms of CPU a second on this machine, in each
 * function, idle or not (4–5 ms of the functions' CPU per pod of a 30-pod rollout). A blocked loop
 * still shows: it delays the next sample however far apart they are.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;
collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });

export const reconcileTotal = new Counter({
  name: 'neoset_reconcile_total',
  help: 'Reconciles of one NeoSet, by result (ok, conflict, error, invalid, gone).',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const reconcileDuration = new Histogram({
  name: 'neoset_reconcile_duration_seconds',
  help: 'Time to read, decide and apply for one NeoSet.',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

/** Millisecond-scale steps of one reconcile (its phases, an event's wait). */
const STEP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** Where a reconcile's time goes (issue 10's breakdown of the rollout step). */
export const reconcilePhase = new Histogram({
  name: 'neoset_reconcile_phase_seconds',
  help: 'Time of one reconcile by phase: read (the NeoSet, with its pods and revisions listed alongside), decide, apply (claim, pod writes, status; its Events are posted after).',
  labelNames: ['phase'] as const,
  buckets: STEP_BUCKETS,
  registers: [registry],
});

/** Coalescing's cost to an event (SPEC §2.0): the wait for the run that answers it to start. */
export const eventWait = new Histogram({
  name: 'neoset_event_wait_seconds',
  help: 'Time from an event reaching reconcile to the start of the reconcile that answers it (behind a run in flight).',
  buckets: STEP_BUCKETS,
  registers: [registry],
});

export const apiRequests = new Counter({
  name: 'neoset_api_requests_total',
  help: 'Kubernetes API requests made, by verb, resource and HTTP code (0: no answer).',
  labelNames: ['verb', 'resource', 'code'] as const,
  registers: [registry],
});

/**
 * Series labelled by NeoSet (namespace, name): served only on METRICS_PORT's listener, never on the
 * port events (and, on Knative, anyone in the cluster through the Service's route) reach — SPEC §2.5,
 * nothing crosses namespaces (shared/metrics/metrics-port.ts).
 */
export const perNeoSetRegistry = new Registry();

/** No pod label: one series per pod would be unbounded cardinality (SPEC §4.8). Per NeoSet: perNeoSetRegistry. */
export const inPlaceUpdateDuration = new Histogram({
  name: 'neoset_inplace_update_duration_seconds',
  help: 'Duration of completed in-place updates, drain to done.',
  labelNames: ['namespace', 'neoset'] as const,
  buckets: [1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200],
  registers: [perNeoSetRegistry],
});

/** §4.11: canary analyses judged by the reconcile function (a Prometheus query), by result. */
export const analysisTotal = new Counter({
  name: 'neoset_analysis_total',
  help: 'Canary analyses judged (a Prometheus query at the end of a step), by result: Successful, Failed, Inconclusive.',
  labelNames: ['result'] as const,
  registers: [registry],
});

/** §4.12: rollout notifications sent to $K_SINK, by CloudEvent type and result (sent, failed). */
export const notificationsTotal = new Counter({
  name: 'neoset_notifications_total',
  help: 'Rollout notifications (io.neo.neoset.rollout.*) sent to K_SINK after the status write that made them true, by type and result: sent, failed (not delivered; logged, never retried).',
  labelNames: ['type', 'result'] as const,
  registers: [registry],
});

/**
 * SPEC §2.3: a promise rejected with no handler is a bug that Node would end the process for; the
 * functions log it and count it here instead (shared/http/unhandled.ts), in the registry every
 * function's /metrics serves (admission's too: functions/admission/metrics.ts).
 */
export const unhandledRejections = new Counter({
  name: 'neoset_unhandled_rejections_total',
  help: 'Promises rejected with no handler in this process (a bug: logged at fatal level with the stack; the process keeps serving).',
  registers: [registry],
});

/** What runs (Prometheus' build_info convention): always 1, the version in the labels (README "Releases and versions"). */
const buildInfo = new Gauge({
  name: 'neoset_build_info',
  help: 'Always 1: the NeoSet version, the function and the Node.js version of this process.',
  labelNames: ['version', 'function', 'node'] as const,
  registers: [registry],
});

/** Sets neoset_build_info for `fn`, the function this process serves (its app calls it once). */
export function recordBuildInfo(fn: string): void {
  buildInfo.set({ version: NEOSET_VERSION, function: fn, node: process.versions.node }, 1);
}

/**
 * SPEC §2.3 "one clock": this instance's wall clock minus the API server's, in seconds, as last seen
 * (shared/k8s/server-clock.ts; up to ~1 s above the true offset: `Date` has 1 s resolution). A gauge,
 * not a histogram: the offset is a state of the node, and what an alert asks is whether it is large now.
 */
export const clockOffset = new Gauge({
  name: 'neoset_clock_offset_seconds',
  help: "This instance's wall clock minus the API server's (from the responses' Date), last seen; NeoSet decides on the API server's clock whatever this says.",
  registers: [registry],
});
