// What `rollout status` says about one NeoSet: kubectl's StatefulSet status viewer (observed
// generation, then readiness, then pods updated against the partition), adapted to NeoSet — a
// rollout can fail (phase Failed), a pod is in flight while it is in currentUpdatePods, and without a
// partition the rollout is complete when currentRevision has caught up with updateRevision (SPEC §4.2).
import type { NeoSet } from '../../shared/api/neoset.ts';

export interface RolloutStatus {
  state: 'waiting' | 'done' | 'failed';
  message: string;
}

export function rolloutStatus(neoset: NeoSet): RolloutStatus {
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
