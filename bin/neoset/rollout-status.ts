// What `rollout status` says about one NeoSet: kubectl's StatefulSet status viewer (observed
// generation, then readiness, then pods updated against the partition), adapted to NeoSet — a
// rollout can fail (phase Failed), a pod is in flight while it is in currentUpdatePods, and without a
// partition the rollout is complete when currentRevision has caught up with updateRevision (SPEC §4.2).
import type { NeoSet } from '../../shared/api/neoset.ts';
import { canaryPosition, pauseEnd } from '../../shared/core/canary/position.ts';
import { formatDuration } from '../../shared/core/duration.ts';

export interface RolloutStatus {
  state: 'waiting' | 'done' | 'failed';
  message: string;
}

export function rolloutStatus(neoset: NeoSet, now: number = Date.now()): RolloutStatus {
  const { spec, status = {} } = neoset;
  const observed = status.observedGeneration ?? 0;
  if (status.phase === 'Failed' && observed === neoset.metadata.generation) {
    const progressing = status.conditions?.find((c) => c.type === 'Progressing');
    const why = progressing ? `${progressing.reason}: ${progressing.message}` : 'phase Failed';
    return { state: 'failed', message: `rollout failed: ${why}` };
  }
  if (observed === 0 || (neoset.metadata.generation ?? 0) > observed) {
    return waiting('Waiting for neoset spec update to be observed...');
  }
  const step = canaryStepMessage(neoset, now);
  if (step !== null) return waiting(step);
  const replicas = spec.replicas;
  const ready = status.readyReplicas ?? 0;
  if (ready < replicas) return waiting(`Waiting for ${replicas - ready} pods to be ready...`);
  const updated = status.updatedReplicas ?? 0;
  const inFlight = (status.currentUpdatePods ?? []).length > 0;
  const paused = spec.updateStrategy.pause ? ' (paused)' : '';
  const partition = spec.updateStrategy.partition;
  if (partition > 0) {
    const target = Math.max(0, replicas - partition);
    if (updated < target || inFlight) {
      return waiting(`Waiting for partitioned roll out to finish${paused}: ${updated} out of ${target} new pods have been updated...`);
    }
    return { state: 'done', message: `partitioned roll out complete: ${updated} new pods have been updated...` };
  }
  if (status.currentRevision !== status.updateRevision || updated < replicas || inFlight) {
    return waiting(`Waiting for roll out to finish${paused}: ${updated} out of ${replicas} new pods have been updated...`);
  }
  return { state: 'done', message: `roll out complete: ${replicas} pods at revision ${status.updateRevision}...` };
}

const waiting = (message: string): RolloutStatus => ({ state: 'waiting', message });

/**
 * §4.11: where the canary steps are, while some remain — `step 2/5: paused for 7m12s more` — and the
 * last analysis result; null without steps or once they are done.
 */
export function canaryStepMessage(neoset: NeoSet, now: number): string | null {
  const steps = neoset.spec.updateStrategy.canary?.steps ?? [];
  const c = neoset.status?.canary;
  const at = canaryPosition(steps.length, c, neoset.status?.updateRevision);
  if (!c || !at?.running) return null;
  const step = steps[at.index];
  const of = `step ${at.index + 1}/${at.count}`;
  let what: string;
  if (step.pause?.duration !== undefined) {
    const left = Math.max(0, pauseEnd(step, c.stepStartedAt) - now);
    what = `${of}: paused for ${formatDuration(Math.ceil(left / 1000) * 1000)} more`;
  } else if (step.pause) {
    what = `${of}: paused until kubectl neoset rollout promote`;
  } else {
    what = `${of}: partition ${step.partition}, ${neoset.status?.updatedReplicas ?? 0} of ${neoset.spec.replicas} pods updated`;
  }
  const a = c.analysis;
  return a ? `${what}; last analysis (step ${a.step + 1}): ${a.result}, ${a.message}` : what;
}
