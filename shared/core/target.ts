// The rollout target (§4.2, §4.4, §4.11): the step after observe() that decides where the rollout
// goes — the canary's progress, the partition this decision works with, the revision pods move to,
// and whether currentRevision advances. Facts in (observed.ts), a target out; the rules of §4.3–§4.10
// then work toward it.
import type { AnalysisMeasurement } from './snapshot.ts';
import { isAvailable } from './pods/availability.ts';
import { inUpdate, type Observed, type ObservedPod } from './observed.ts';
import type { Revision } from './revisions/revisions.ts';
import { canaryProgress, type CanaryProgress } from './canary/progress.ts';

export interface RolloutTarget {
  /**
   * The revision the rollout moves pods to. Not always SPEC's updateRevision (the revision of
   * spec.template, revisions.update, which status.updateRevision names): while the canary is aborted
   * it is the current revision (§4.11: pods return in place, spec untouched).
   */
  target: Revision;
  /** The partition this decision works with: spec.updateStrategy.partition, or the canary steps' (§4.11). */
  partition: number;
  /** The automated canary's progress (§4.11); status undefined without steps. */
  canary: CanaryProgress;
  /** The current revision this decision works with: status.currentRevision, advanced when the rollout is done (§4.2). */
  current: Revision;
  /** currentRevision moves to the target in this decision. */
  advanced: boolean;
}

/** What the rules decide from: the snapshot's facts and the rollout target. */
export type Rollout = Observed & RolloutTarget;

export function rolloutTarget(o: Observed, measurement: AnalysisMeasurement | undefined): RolloutTarget {
  const { neoset, revisions } = o;
  const canary = canaryProgress({
    neoset,
    nowMs: o.nowMs,
    updateRevision: revisions.update.name,
    currentRevision: revisions.current.name,
    minReadySeconds: o.minReadySeconds,
    pods: o.pods,
    byOrdinal: o.byOrdinal,
    ordinals: o.ordinals,
    measurement,
  });
  const target = canary.aborted ? revisions.current : revisions.update;
  const stepsDone = canary.status === undefined || canary.status.stepIndex >= (neoset.spec.updateStrategy.canary?.steps.length ?? 0);
  // currentRevision moves only to a stored revision: the status may be written before this
  // decision's createRevision (a claim, §2.0), and must never name a revision that is not there.
  // With canary steps, only once the last one has passed (its analysis too, §4.11).
  const advanced =
    revisions.current.name !== target.name &&
    stepsDone &&
    target.stored !== null &&
    rolloutDone(o.ordinals, o.byOrdinal, target.name, o.minReadySeconds, o.nowMs);
  return { target, partition: canary.partition, canary, current: advanced ? target : revisions.current, advanced };
}

/**
 * §4.2: currentRevision advances only when every pod in range (Observed.ordinals) exists, runs the target
 * (label, and no in-place update in flight: inUpdate) and is available — so never while partition holds pods back.
 */
function rolloutDone(ordinals: number[], byOrdinal: Map<number, ObservedPod>, target: string, minReady: number, nowMs: number): boolean {
  for (const i of ordinals) {
    const v = byOrdinal.get(i);
    if (!v || v.terminating || v.revision !== target || inUpdate(v, target) || !isAvailable(v.pod, minReady, nowMs)) return false;
  }
  return true;
}

/** A rollout is in progress: currentRevision differs from the target (§4.3). */
export function rolloutInProgress(o: Rollout): boolean {
  return o.current.name !== o.target.name;
}

/**
 * Revisions that must not be pruned: on a pod (label or in-place target), current, target, spec's
 * (§4.2) — and those the status written so far still names: the status is written after the prune,
 * so a crash in between must not leave it naming a deleted revision. They go in the next decision.
 */
export function liveRevisions(o: Rollout): Set<string> {
  const written = [o.neoset.status?.currentRevision, o.neoset.status?.updateRevision].filter((r) => r !== undefined);
  const live = new Set([o.current.name, o.target.name, o.revisions.update.name, ...written]);
  for (const v of o.pods) {
    if (v.revision) live.add(v.revision);
    if (v.state) live.add(v.state.revision);
  }
  return live;
}
