// What `rollout status` says at each point of the seeds' walkthrough, and `rollout promote`'s steps.
import { describe, expect, it } from 'vitest';
import { rolloutStatus } from '../../bin/neoset/rollout-status.ts';
import { promotion } from '../../shared/core/update/promotion.ts';
import type { Condition } from '../../shared/api/neoset.ts';
import { neoset } from './plugin-fixtures.ts';

const observed = { observedGeneration: 2, replicas: 5, readyReplicas: 5, updatedReplicas: 0, currentRevision: 'mysql-a', updateRevision: 'mysql-b' };

describe('rolloutStatus', () => {
  it('waits for the spec to be observed', () => {
    expect(rolloutStatus(neoset({ status: { ...observed, observedGeneration: 1 } }))).toEqual({ state: 'waiting', message: 'Waiting for neoset spec update to be observed...' });
    expect(rolloutStatus(neoset({ status: undefined })).message).toBe('Waiting for neoset spec update to be observed...');
  });

  it('waits for pods to be ready, as kubectl does for a StatefulSet', () => {
    expect(rolloutStatus(neoset({ status: { ...observed, readyReplicas: 4 } }))).toEqual({ state: 'waiting', message: 'Waiting for 1 pods to be ready...' });
  });

  it('with a partition: waits for the pods at or above it, then is partitioned roll out complete', () => {
    const canary = { updateStrategy: { partition: 3 } };
    expect(rolloutStatus(neoset({ ...canary, status: { ...observed, updatedReplicas: 1 } }))).toEqual({
      state: 'waiting',
      message: 'Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...',
    });
    expect(rolloutStatus(neoset({ ...canary, status: { ...observed, updatedReplicas: 2, currentUpdatePods: ['mysql-3'] } })).state).toBe('waiting');
    expect(rolloutStatus(neoset({ ...canary, status: { ...observed, updatedReplicas: 2 } }))).toEqual({ state: 'done', message: 'partitioned roll out complete: 2 new pods have been updated...' });
    expect(rolloutStatus(neoset({ updateStrategy: { partition: 3, pause: true }, status: { ...observed, updatedReplicas: 1 } })).message).toBe(
      'Waiting for partitioned roll out to finish (paused): 1 out of 2 new pods have been updated...',
    );
  });

  it('without a partition: complete when currentRevision has caught up with updateRevision', () => {
    expect(rolloutStatus(neoset({ status: { ...observed, updatedReplicas: 5 } }))).toEqual({ state: 'waiting', message: 'Waiting for roll out to finish: 5 out of 5 new pods have been updated...' });
    expect(rolloutStatus(neoset({ status: { ...observed, updatedReplicas: 5, currentRevision: 'mysql-b' } }))).toEqual({ state: 'done', message: 'roll out complete: 5 pods at revision mysql-b...' });
  });

  it('fails with the Progressing condition as the reason, once the failure is of the current generation', () => {
    const progressing: Condition = { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'mysql-4 not ready 600s after its image was patched', lastTransitionTime: '2025-01-01T00:00:00Z' };
    const failed = { ...observed, readyReplicas: 4, phase: 'Failed' as const, conditions: [progressing] };
    expect(rolloutStatus(neoset({ status: failed }))).toEqual({ state: 'failed', message: 'rollout failed: ProgressDeadlineExceeded: mysql-4 not ready 600s after its image was patched' });
    // After an undo (a new generation) the old failure is no verdict on the new template.
    expect(rolloutStatus(neoset({ generation: 3, status: failed })).state).toBe('waiting');
  });
});

describe('promotion', () => {
  it('lowers by maxUnavailable resolved as the controller does: a percentage rounds up, at least 1', () => {
    const step = (maxUnavailable: number | string) => promotion(neoset({ replicas: 5, updateStrategy: { partition: 5, maxUnavailable } }), false)?.to;
    expect([step(2), step('20%'), step('30%'), step('1%'), step('100%')]).toEqual([3, 4, 3, 4, 0]);
  });

  it("walks the seeds' canary: partition 4 -> 2 -> 0 with maxUnavailable 2, clearing pause", () => {
    expect(promotion(neoset({ updateStrategy: { partition: 4, maxUnavailable: 2, pause: true } }), false)).toEqual({ from: 4, to: 2, resumes: true });
    expect(promotion(neoset({ updateStrategy: { partition: 2, maxUnavailable: 2 } }), false)).toEqual({ from: 2, to: 0, resumes: false });
    expect(promotion(neoset({ updateStrategy: { partition: 1, maxUnavailable: 2 } }), false)).toEqual({ from: 1, to: 0, resumes: false });
  });

  it('--full goes to partition 0', () => {
    expect(promotion(neoset({ updateStrategy: { partition: 4 } }), true)).toEqual({ from: 4, to: 0, resumes: false });
  });

  it('counts from replicas when the partition is above them', () => {
    expect(promotion(neoset({ replicas: 5, updateStrategy: { partition: 9, maxUnavailable: 1 } }), false)).toEqual({ from: 9, to: 4, resumes: false });
  });

  it('has nothing to do at partition 0 unpaused, and only resumes at partition 0 paused', () => {
    expect(promotion(neoset({ updateStrategy: { partition: 0 } }), false)).toBeUndefined();
    expect(promotion(neoset({ updateStrategy: { partition: 0 } }), true)).toBeUndefined();
    expect(promotion(neoset({ updateStrategy: { partition: 0, pause: true } }), false)).toEqual({ from: 0, to: 0, resumes: true });
  });
});
