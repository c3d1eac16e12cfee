// The plugin's canary (SPEC §4.11): what `rollout status` and `get` say about the steps, and what
// promote / abort / retry write (status.canary) or refuse.
import { describe, expect, it } from 'vitest';
import { parseInvocation } from '../../bin/neoset/args.ts';
import { formatNeoSets } from '../../bin/neoset/get-view.ts';
import { rolloutStatus } from '../../bin/neoset/rollout-status.ts';
import { canaryCommand } from '../../shared/core/canary/commands.ts';
import { neoset } from './plugin-fixtures.ts';

const steps = [{ partition: 4 }, { pause: { duration: '10m' } }, { partition: '50%' }, { pause: {} }, { partition: 0 }];
const observed = { observedGeneration: 2, replicas: 5, readyReplicas: 5, updatedReplicas: 1, currentRevision: 'mysql-a', updateRevision: 'mysql-b' };
const T = Date.parse('2025-01-01T10:00:00Z');
const at = (stepIndex: number, extra = {}) =>
  neoset({ updateStrategy: { canary: { steps } }, status: { ...observed, phase: 'Canary', canary: { revision: 'mysql-b', stepIndex, stepStartedAt: '2025-01-01T10:00:00Z', ...extra } } });

describe('rollout status with canary steps', () => {
  it('a timed pause counts down; a pause without duration waits for promote; the last analysis is shown', () => {
    expect(rolloutStatus(at(1), T + (2 * 60 + 48) * 1000)).toEqual({ state: 'waiting', message: 'step 2/5: paused for 7m12s more' });
    expect(rolloutStatus(at(3), T).message).toBe('step 4/5: paused until kubectl neoset rollout promote');
    const analysis = { step: 2, result: 'Successful' as const, value: '0.01', message: 'rate = 0.01: successCondition "result < 0.05" holds', at: '2025-01-01T10:00:00Z' };
    expect(rolloutStatus(at(3, { analysis }), T).message).toBe('step 4/5: paused until kubectl neoset rollout promote; last analysis (step 3): Successful, rate = 0.01: successCondition "result < 0.05" holds');
    expect(rolloutStatus(at(2), T).message).toBe('step 3/5: partition 50%, 1 of 5 pods updated');
  });

  it('get shows the step in a STEP column, only when a NeoSet has steps', () => {
    expect(formatNeoSets([at(1)], T).split('\n')[0]).toMatch(/UPDATING\s+STEP$/);
    expect(formatNeoSets([at(1)], T).split('\n')[1]).toMatch(/ 2\/5$/);
    expect(formatNeoSets([at(5)], T).split('\n')[1]).toMatch(/ done$/);
    expect(formatNeoSets([neoset()], T)).not.toContain('STEP');
  });
});

describe('promote / abort / retry', () => {
  it('promote moves one step (or to the end), marking the write as a request', () => {
    expect(canaryCommand(at(1), 'promote', T)).toEqual({ canary: { revision: 'mysql-b', stepIndex: 2, stepStartedAt: '2025-01-01T10:00:00Z', request: 'promote at 2025-01-01T10:00:00Z' } });
    expect(canaryCommand(at(1), 'promote-full', T)).toMatchObject({ canary: { stepIndex: 5 } });
    expect(canaryCommand(at(5), 'promote', T)).toEqual({ refused: 'every canary step is done' });
  });

  it('abort sets abort with reason Aborted; retry clears it and starts at step 0; both refuse when they make no sense', () => {
    const aborted = canaryCommand(at(1), 'abort', T);
    expect(aborted).toMatchObject({ canary: { stepIndex: 1, abort: { reason: 'Aborted' } } });
    expect(canaryCommand(at(1), 'retry', T)).toEqual({ refused: 'the rollout is not aborted: nothing to retry' });
    const a = at(1, { abort: { reason: 'AnalysisFailed', message: 'x', at: '2025-01-01T10:00:00Z' } });
    expect(canaryCommand(a, 'retry', T)).toEqual({ canary: { revision: 'mysql-b', stepIndex: 0, stepStartedAt: '2025-01-01T10:00:00Z', request: 'retry at 2025-01-01T10:00:00Z' } });
    expect(canaryCommand(a, 'promote', T)).toEqual({ refused: 'the rollout was aborted (AnalysisFailed); kubectl neoset rollout retry starts it again' });
    expect(canaryCommand(neoset(), 'abort', T)).toEqual({ refused: 'it has no canary steps (spec.updateStrategy.canary.steps)' });
  });

  it('the command line knows rollout abort and rollout retry', () => {
    expect(parseInvocation(['rollout', 'abort', 'mysql'])).toMatchObject({ kind: 'run', command: { name: 'abort', neoset: 'mysql' } });
    expect(parseInvocation(['rollout', 'retry', 'neoset/mysql'])).toMatchObject({ kind: 'run', command: { name: 'retry', neoset: 'mysql' } });
  });
});
