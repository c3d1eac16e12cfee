// The automated canary (SPEC §4.11) as one pure step of the decision: where the steps are, whether the
// current step is complete and the next one starts, and whether the canary is judged failed — all from
// status.canary (the step and the time it started) and the pods. Nothing is remembered elsewhere, so
// a timed pause survives any restart: its end is a time in status, served by requeueAfter and the
// resync tick.
//
// The Prometheus query is I/O: decide() never runs it. When a step's end is due and the canary has a
// Prometheus analysis, the decision asks for it (Plan.analysis) and does not advance; the reconcile
// function then runs the query and decides again with the measurement in the snapshot
// (shared/k8s/reconcile.ts). A measurement that could not be taken is inconclusive: the rollout waits
// with the Paused condition naming why, and never passes.
import type { CanaryStatus, NeoSet, PrometheusAnalysis } from '../../api/neoset.ts';
import { isAvailable } from '../pods/availability.ts';
import { isReady, podCondition } from '../pods/conditions.ts';
import type { Failure } from '../failure.ts';
import type { Action } from '../plan.ts';
import type { AnalysisMeasurement } from '../snapshot.ts';
import { rfc3339, toMs } from '../time.ts';
import { pauseEnd } from './position.ts';
import { restartsSinceUpdate } from './restarts.ts';
import { holds, parseSuccessCondition, partitionAt, pauseMs } from './steps.ts';
import { inUpdate, type ObservedPod } from '../observed.ts';

/** How soon an inconclusive analysis is tried again. */
export const INCONCLUSIVE_RETRY_MS = 10_000;

export interface CanaryProgress {
  /** status.canary to write; undefined without steps. */
  status: CanaryStatus | undefined;
  /** The partition the decision works with: the steps', or spec.updateStrategy.partition without steps. */
  partition: number;
  /** The rollout of the update revision is aborted: pods return to currentRevision (§4.11). */
  aborted: boolean;
  /** AnalysisFailed / Aborted, for the Progressing condition and phase Failed. */
  failure: (Failure & { reason: 'AnalysisFailed' | 'Aborted' }) | null;
  /** Why the steps wait for someone (a pause without duration, an inconclusive analysis): phase Paused. */
  waiting: { reason: 'CanaryPause' | 'AnalysisInconclusive'; message: string } | null;
  /** When a timed pause ends (or an inconclusive analysis is tried again), in ms. */
  wakeAt: number | null;
  /** A Prometheus analysis due now: the reconcile function measures it and decides again. */
  analysisDue: PrometheusAnalysis | null;
  events: Action[];
}

export interface CanaryFacts {
  neoset: NeoSet;
  nowMs: number;
  /** The revision of spec.template, and status.currentRevision as resolved. */
  updateRevision: string;
  currentRevision: string;
  minReadySeconds: number;
  pods: ObservedPod[];
  byOrdinal: Map<number, ObservedPod>;
  /** The ordinals in range (ordinals.ts); a step's partition counts positions in it. */
  ordinals: number[];
  measurement: AnalysisMeasurement | undefined;
}

export function canaryProgress(f: CanaryFacts): CanaryProgress {
  const { spec } = f.neoset;
  const steps = spec.updateStrategy.canary?.steps ?? [];
  const result: CanaryProgress = {
    status: undefined,
    partition: spec.updateStrategy.partition,
    aborted: false,
    failure: null,
    waiting: null,
    wakeAt: null,
    analysisDue: null,
    events: [],
  };
  if (steps.length === 0) return result;
  const now = rfc3339(f.nowMs);
  const stored = f.neoset.status?.canary;
  // A new update revision starts at step 0; no rollout (the template is the current revision again: a
  // rollback) means no steps to run — the pods go back at once.
  let c: CanaryStatus;
  if (stored && stored.revision === f.updateRevision) {
    const { request: _, ...rest } = stored;
    c = rest;
  } else {
    c = { revision: f.updateRevision, stepIndex: f.updateRevision === f.currentRevision ? steps.length : 0, stepStartedAt: now };
  }
  result.status = c;
  if (!c.abort && c.stepIndex < steps.length) abortOnRestarts(f, c, result, now);
  if (!c.abort && c.stepIndex < steps.length) abortOnNotReady(f, c, pauseMs(steps[c.stepIndex]), result, now);
  if (c.abort) {
    result.status = c;
    result.partition = 0;
    result.aborted = true;
    result.failure = { reason: c.abort.reason, message: c.abort.message };
    return result;
  }
  let measurement = f.measurement;
  const analysis = spec.updateStrategy.canary?.analysis?.prometheus;
  // Step on while the step is complete; at most one Prometheus judgement per decision (one measurement).
  while (c.stepIndex < steps.length && !spec.updateStrategy.pause) {
    const step = steps[c.stepIndex];
    const of = `step ${c.stepIndex + 1}/${steps.length}`;
    if (step.pause && step.pause.duration === undefined) {
      result.waiting = { reason: 'CanaryPause', message: `${of}: paused until kubectl neoset rollout promote` };
      break;
    }
    if (step.pause) {
      const end = pauseEnd(step, c.stepStartedAt);
      if (f.nowMs < end) {
        result.wakeAt = Math.min(result.wakeAt ?? Infinity, end);
        break;
      }
    } else if (!partitionComplete(f, partitionAt(steps, c.stepIndex, spec.replicas))) {
      break;
    }
    if (analysis) {
      if (measurement === undefined) {
        result.analysisDue = analysis;
        break;
      }
      const judged = judge(analysis, measurement);
      c = { ...c, analysis: { step: c.stepIndex, ...judged, at: now } };
      measurement = undefined;
      if (judged.result === 'Inconclusive') {
        result.waiting = { reason: 'AnalysisInconclusive', message: `${of}: ${judged.message}` };
        result.wakeAt = f.nowMs + INCONCLUSIVE_RETRY_MS;
        break;
      }
      if (judged.result === 'Failed') {
        c = { ...c, abort: { reason: 'AnalysisFailed', message: `${of}: ${judged.message}`, at: now } };
        result.events.push(abortEvent(c));
        result.status = c;
        result.partition = 0;
        result.aborted = true;
        result.failure = { reason: 'AnalysisFailed', message: c.abort!.message };
        return result;
      }
    }
    c = { ...c, stepIndex: c.stepIndex + 1, stepStartedAt: now };
    result.events.push({
      kind: 'recordEvent',
      key: `canary-step/${c.revision}/${c.stepIndex}/${now}`,
      event: { type: 'Normal', reason: 'CanaryStep', message: c.stepIndex < steps.length ? `step ${c.stepIndex + 1}/${steps.length} started` : 'all canary steps done' },
    });
  }
  result.status = c;
  result.partition = partitionAt(steps, c.stepIndex, spec.replicas);
  return result;
}

/** A partition step is complete when every pod in range at position >= partition runs the update revision, with no update in flight, and is available. */
function partitionComplete(f: CanaryFacts, partition: number): boolean {
  for (const i of f.ordinals.slice(partition)) {
    const v = f.byOrdinal.get(i);
    if (!v || v.terminating || v.revision !== f.updateRevision || inUpdate(v, f.updateRevision) || !isAvailable(v.pod, f.minReadySeconds, f.nowMs)) return false;
  }
  return true;
}

/** maxRestarts: an updated pod past it aborts at once, without waiting for the step or the in-place deadline. */
function abortOnRestarts(f: CanaryFacts, c: CanaryStatus, result: CanaryProgress, now: string): void {
  const max = f.neoset.spec.updateStrategy.canary?.analysis?.maxRestarts;
  if (max === undefined) return;
  for (const v of f.pods) {
    if (!v.inRange || v.terminating || v.revision !== f.updateRevision) continue;
    const restarts = restartsSinceUpdate(v.pod);
    if (restarts <= max) continue;
    const message = `pod ${v.name}: ${restarts} container restarts > maxRestarts ${max}`;
    c.analysis = { step: c.stepIndex, result: 'Failed', value: String(restarts), message, at: now };
    c.abort = { reason: 'AnalysisFailed', message, at: now };
    result.events.push(abortEvent(c));
    return;
  }
}

/**
 * §4.11 "(or not Ready for longer than the step's pause)": during a timed pause, an updated pod that has
 * not been Ready for longer than the pause lasts aborts at once (with analysis configured).
 */
function abortOnNotReady(f: CanaryFacts, c: CanaryStatus, pause: number | null, result: CanaryProgress, now: string): void {
  if (pause === null || !f.neoset.spec.updateStrategy.canary?.analysis) return;
  for (const v of f.pods) {
    if (!v.inRange || v.terminating || v.revision !== f.updateRevision || isReady(v.pod)) continue;
    const since = toMs(podCondition(v.pod, 'Ready')?.lastTransitionTime);
    if (f.nowMs - since <= pause) {
      result.wakeAt = Math.min(result.wakeAt ?? Infinity, since + pause + 1);
      continue;
    }
    const seconds = Math.floor((f.nowMs - since) / 1000);
    const message = `pod ${v.name}: not Ready for ${seconds}s, longer than the step's pause (${f.neoset.spec.updateStrategy.canary.steps[c.stepIndex].pause!.duration})`;
    c.analysis = { step: c.stepIndex, result: 'Failed', value: `${seconds}s`, message, at: now };
    c.abort = { reason: 'AnalysisFailed', message, at: now };
    result.events.push(abortEvent(c));
    return;
  }
}

function abortEvent(c: CanaryStatus): Action {
  return {
    kind: 'recordEvent',
    key: `canary-abort/${c.revision}/${c.abort!.at}`,
    event: { type: 'Warning', reason: c.abort!.reason, message: `${c.abort!.message}; pods return to the current revision` },
  };
}

/** What a measurement says against successCondition. */
export function judge(analysis: PrometheusAnalysis, m: AnalysisMeasurement): { result: 'Successful' | 'Failed' | 'Inconclusive'; value?: string; message: string } {
  const condition = parseSuccessCondition(analysis.successCondition);
  if ('error' in m) return { result: 'Inconclusive', message: `analysis inconclusive: ${m.error}` };
  if (condition === null) return { result: 'Inconclusive', value: String(m.value), message: `analysis inconclusive: successCondition "${analysis.successCondition}" is not "result <op> <number>"` };
  const ok = holds(condition, m.value);
  return {
    result: ok ? 'Successful' : 'Failed',
    value: String(m.value),
    message: `${analysis.query} = ${m.value}: successCondition "${analysis.successCondition}" ${ok ? 'holds' : 'does not hold'}`,
  };
}
