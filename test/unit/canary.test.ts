// §4.11 automated canary on the in-memory world: steps, a timed pause from the clock, promote,
// abort (by hand and by maxRestarts), retry, a new template, and the Prometheus analysis as the
// reconcile function feeds it (a measurement in the snapshot). The invariant checker runs throughout.
import { describe, expect, it } from 'vitest';
import type { CanaryStatus } from '../../shared/api/neoset.ts';
import { canaryCommand, type CanaryCommand } from '../../shared/core/canary/commands.ts';
import { neosetEventCanSkip, podEventCanSkip } from '../../shared/core/event-relevance.ts';
import type { AnalysisMeasurement } from '../../shared/core/snapshot.ts';
import { readSnapshot } from '../../shared/k8s/snapshot-reader.ts';
import { checkInvariants } from '../oracle/index.ts';
import { imagesOfPods, plan, settled, uids } from './helpers.ts';
import { NAMESPACE, stateOf, type World, type WorldObservation } from './world.ts';
import type { Pod } from '../../shared/core/objects.ts';

const STEPS = [{ partition: 4 }, { pause: { duration: '5s' } }, { partition: '50%' }, { pause: {} }, { partition: 0 }];

/** One reconcile (with a measurement when the plan asks for one), one kubelet round, one second. Checked. */
async function tick(w: World, measurement?: AnalysisMeasurement): Promise<void> {
  const before = w.observation();
  const snapshot = (await readSnapshot(w.api.client, NAMESPACE, w.name))!;
  const first = plan(w);
  await w.reconcile(first.analysis && measurement ? { snapshot: { ...snapshot, analysis: measurement } } : {});
  const mid = w.observation();
  expect(checkInvariants({ ...mid, previous: before })).toEqual([]);
  w.kubeletSettle(1);
  expect(checkInvariants({ ...w.observation(), previous: mid })).toEqual([]);
  w.advance(1);
}

async function until(w: World, done: (w: World) => boolean, max = 60, measurement?: AnalysisMeasurement): Promise<number> {
  for (let i = 0; i < max; i++) {
    if (done(w)) return i;
    await tick(w, measurement);
  }
  throw new Error(`not reached in ${max} ticks: ${JSON.stringify(w.neoset.status?.canary)} ${imagesOfPods(w).join(' ')}`);
}

function command(w: World, c: CanaryCommand): void {
  const r = canaryCommand(w.neoset, c, w.now);
  if ('refused' in r) throw new Error(r.refused);
  w.mutateNeoSet((n) => void (n.status!.canary = r.canary));
}

const canary = (w: World): CanaryStatus => w.neoset.status!.canary!;
const onV2 = (w: World) => imagesOfPods(w).map((i) => (i === 'app:v2' ? 2 : 1));

describe('canary steps (§4.11)', () => {
  it('partition 4, a 5 s pause, 50% (rounded up: 3), a pause for promote, then all', async () => {
    const w = await settled({ image: 'app:v1', updateStrategy: { canary: { steps: STEPS } } });
    expect(canary(w)).toMatchObject({ stepIndex: 5 }); // no rollout yet: every step done
    w.setImage('app:v2');
    await until(w, (x) => canary(x).stepIndex === 1);
    expect(onV2(w)).toEqual([1, 1, 1, 1, 2]);
    const pauseStarted = Date.parse(canary(w).stepStartedAt);
    expect(w.neoset.status!.phase).toBe('Canary');
    await until(w, (x) => canary(x).stepIndex === 2);
    // The pause ends by the clock: 5 s after the step before it completed (ticks of 1 s).
    expect(Date.parse(canary(w).stepStartedAt) - pauseStarted).toBe(5000);
    await until(w, (x) => canary(x).stepIndex === 3);
    expect(onV2(w)).toEqual([1, 1, 1, 2, 2]);
    for (let i = 0; i < 10; i++) await tick(w);
    expect(onV2(w)).toEqual([1, 1, 1, 2, 2]);
    expect(w.neoset.status!.phase).toBe('Paused');
    expect(w.neoset.status!.conditions!.find((c) => c.type === 'Paused')).toMatchObject({ status: 'True', reason: 'CanaryPause', message: 'step 4/5: paused until kubectl neoset rollout promote' });
    command(w, 'promote');
    await until(w, (x) => x.neoset.status!.phase === 'Completed');
    expect(onV2(w)).toEqual([2, 2, 2, 2, 2]);
    expect(canary(w)).toMatchObject({ stepIndex: 5 });
    expect(canary(w).request).toBeUndefined();
  });

  it('a timed pause is a time in status: a decision long after its end (any restart) moves on at once', async () => {
    const w = await settled({ image: 'app:v1', updateStrategy: { canary: { steps: STEPS } } });
    w.setImage('app:v2');
    await until(w, (x) => canary(x).stepIndex === 1);
    const p = plan(w);
    expect(p.requeueAfter).toBeGreaterThan(0);
    expect(p.requeueAfter).toBeLessThanOrEqual(5);
    w.advance(60);
    const next = plan(w);
    expect(next.status!.canary).toMatchObject({ stepIndex: 2 });
    expect(next.actions.map((a) => a.kind)).toContain('markDraining');
  });

  it('promote --full skips to the end; a new template starts again at step 0', async () => {
    const w = await settled({ image: 'app:v1', updateStrategy: { canary: { steps: STEPS } } });
    w.setImage('app:v2');
    await until(w, (x) => canary(x).stepIndex === 1);
    command(w, 'promote-full');
    await until(w, (x) => x.neoset.status!.phase === 'Completed');
    w.setImage('app:v3');
    await tick(w);
    expect(canary(w)).toMatchObject({ stepIndex: 0, revision: w.neoset.status!.updateRevision });
  });
});

describe('canary abort (§4.11)', () => {
  it('maxRestarts 2 on a crashlooping canary: Failed/AnalysisFailed, pods back in place, spec untouched; retry starts step 0', async () => {
    const w = await settled({ image: 'app:v1', updateStrategy: { canary: { steps: STEPS, analysis: { maxRestarts: 2 } } } });
    const before = uids(w);
    w.setImage('app:v2-crash');
    const template = structuredClone(w.neoset.spec.template);
    const crashing: Pod[] = [];
    await until(w, (x) => {
      const p = x.pod(4)!;
      if (stateOf(p)?.revision === x.neoset.status!.updateRevision && p.spec.containers[0].image === 'app:v2-crash' && (p.status?.containerStatuses?.[0]?.restartCount ?? 0) > 1) {
        crashing.push(structuredClone(p));
      }
      return x.neoset.status!.phase === 'Failed';
    });
    const progressing = w.neoset.status!.conditions!.find((c) => c.type === 'Progressing')!;
    expect(progressing).toMatchObject({ status: 'False', reason: 'AnalysisFailed' });
    expect(progressing.message).toMatch(/pod web-4: 3 container restarts > maxRestarts 2/);
    expect(canary(w).abort).toMatchObject({ reason: 'AnalysisFailed' });
    await until(w, (x) => imagesOfPods(x).every((i) => i === 'app:v1') && x.neoset.status!.currentUpdatePods!.length === 0);
    expect(uids(w)).toEqual(before);
    expect(w.neoset.spec.template).toEqual(template);
    // While it crashlooped mid-update, its restarts were news for reconcile (not left to the resync tick).
    expect(crashing.length).toBeGreaterThan(0);
    expect(crashing.every((p) => podEventCanSkip(p, w.now) === null)).toBe(true);
    expect(w.neoset.status).toMatchObject({ phase: 'Failed', currentImage: 'app:v1', targetImage: 'app:v2-crash' });
    expect(w.eventReasons()).toContain('AnalysisFailed');
    command(w, 'retry');
    await tick(w);
    expect(canary(w)).toMatchObject({ stepIndex: 0 });
    expect(canary(w).abort).toBeUndefined();
    expect(imagesOfPods(w)[4]).toBe('app:v2-crash');
  });

  it('an updated pod not Ready for longer than the timed pause it is in aborts (with analysis set)', async () => {
    const steps = [{ partition: 4 }, { pause: { duration: '30s' } }, { partition: 0 }];
    const w = await settled({ image: 'app:v1', updateStrategy: { canary: { steps, analysis: { maxRestarts: 100 } } } });
    w.setImage('app:v2');
    await until(w, (x) => canary(x).stepIndex === 1);
    w.kubeletUnready('web-4');
    w.advance(20);
    const early = plan(w);
    expect(early.status?.canary?.abort).toBeUndefined();
    expect(early.requeueAfter).toBeLessThanOrEqual(11);
    w.advance(11);
    expect(plan(w).status?.canary?.abort).toMatchObject({ reason: 'AnalysisFailed', message: "pod web-4: not Ready for 31s, longer than the step's pause (30s)" });
  });

  it('abort by hand: reason Aborted, pods return, nothing starts toward the update revision', async () => {
    const w = await settled({ image: 'app:v1', updateStrategy: { canary: { steps: STEPS } } });
    w.setImage('app:v2');
    await until(w, (x) => canary(x).stepIndex === 1);
    command(w, 'abort');
    await until(w, (x) => imagesOfPods(x).every((i) => i === 'app:v1'));
    for (let i = 0; i < 10; i++) await tick(w);
    expect(imagesOfPods(w).every((i) => i === 'app:v1')).toBe(true);
    expect(w.neoset.status!.conditions!.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'False', reason: 'Aborted' });
  });
});

describe('canary Prometheus analysis (§4.11)', () => {
  const prometheus = { address: 'http://prometheus:9090', query: 'error_rate', successCondition: 'result < 0.05' };

  it('the decision asks for the query at a step end and does not advance without it', async () => {
    const w = await settled({ image: 'app:v1', updateStrategy: { canary: { steps: STEPS, analysis: { prometheus } } } });
    w.setImage('app:v2');
    await until(w, (x) => plan(x).analysis !== undefined);
    expect(plan(w).analysis).toEqual(prometheus);
    expect(canary(w).stepIndex).toBe(0);
    await until(w, (x) => canary(x).stepIndex === 1, 5, { value: 0.01 });
    expect(canary(w).analysis).toMatchObject({ step: 0, result: 'Successful', value: '0.01' });
  });

  it('a value over the threshold aborts with the value; an unreachable Prometheus waits, naming it, and never passes', async () => {
    const w = await settled({ image: 'app:v1', updateStrategy: { canary: { steps: STEPS, analysis: { prometheus } } } });
    w.setImage('app:v2');
    await until(w, (x) => plan(x).analysis !== undefined);
    const unreachable = { error: 'Prometheus at http://prometheus:9090 unreachable: ECONNREFUSED' };
    for (let i = 0; i < 20; i++) await tick(w, unreachable);
    expect(canary(w)).toMatchObject({ stepIndex: 0, analysis: { result: 'Inconclusive' } });
    expect(w.neoset.status!.phase).toBe('Paused');
    expect(w.neoset.status!.conditions!.find((c) => c.type === 'Paused')).toMatchObject({ status: 'True', reason: 'AnalysisInconclusive' });
    expect(w.neoset.status!.conditions!.find((c) => c.type === 'Paused')!.message).toContain('http://prometheus:9090');
    await until(w, (x) => x.neoset.status!.phase === 'Failed', 5, { value: 0.2 });
    expect(canary(w).abort!.message).toContain('error_rate = 0.2');
    await until(w, (x) => imagesOfPods(x).every((i) => i === 'app:v1'));
  });
});

describe('the plugin\'s writes reach the reconcile function (§4.11, §2.0)', () => {
  it('a status.canary write by promote/abort/retry keeps the generation, and its event is not skipped; the next decision drops the mark', async () => {
    const w = await settled({ image: 'app:v1', updateStrategy: { canary: { steps: STEPS } } });
    w.setImage('app:v2');
    await until(w, (x) => canary(x).stepIndex === 3);
    expect(neosetEventCanSkip(w.neoset)).toBe('generation already decided');
    const generation = w.neoset.metadata.generation;
    command(w, 'promote');
    expect(w.neoset.metadata.generation).toBe(generation);
    expect(neosetEventCanSkip(w.neoset)).toBeNull();
    await tick(w);
    expect(canary(w).request).toBeUndefined();
    expect(neosetEventCanSkip(w.neoset)).toBe('generation already decided');
  });
});

describe('the last step is judged too (§4.11)', () => {
  it('currentRevision does not advance before the last step has passed its analysis; a failure there sends every pod back', async () => {
    const prometheus = { address: 'http://prometheus:9090', query: 'error_rate', successCondition: 'result < 0.05' };
    const w = await settled({ image: 'app:v1', updateStrategy: { canary: { steps: [{ partition: 0 }], analysis: { prometheus } } } });
    const stable = w.neoset.status!.currentRevision;
    w.setImage('app:v2');
    await until(w, (x) => imagesOfPods(x).every((i) => i === 'app:v2') && x.neoset.status!.currentUpdatePods!.length === 0 && plan(x).analysis !== undefined, 60);
    expect(w.neoset.status!.currentRevision).toBe(stable);
    expect(plan(w).status?.currentRevision ?? w.neoset.status!.currentRevision).toBe(stable);
    await until(w, (x) => x.neoset.status!.phase === 'Failed', 5, { value: 0.5 });
    await until(w, (x) => imagesOfPods(x).every((i) => i === 'app:v1'));
    expect(w.neoset.status!.currentRevision).toBe(stable);
  });
});

export type { WorldObservation };
