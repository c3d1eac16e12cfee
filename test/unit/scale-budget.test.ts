// The scale budget (SPEC §4.12, OpenKruise scaleStrategy.maxUnavailable): under Parallel, pods are
// created only while fewer than maxUnavailable of pods 0..replicas-1 are not Running and Ready.
import { describe, expect, it } from 'vitest';
import { NeoSetSpec, type NeoSetSpecInput } from '../../shared/api/neoset.ts';
import { resolveScaleMaxUnavailable } from '../../shared/core/scaling/scale-budget.ts';
import { plan, settled, steps } from './helpers.ts';
import { World } from './world.ts';

const spec = (input: Partial<NeoSetSpecInput>) =>
  NeoSetSpec.parse({ selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } }, ...input });

describe('resolveScaleMaxUnavailable', () => {
  it('an integer, or a percentage of replicas rounded down (Kruise), at least 1; none under OrderedReady or when absent', () => {
    const parallel = (maxUnavailable: number | string, replicas = 10) => resolveScaleMaxUnavailable(spec({ replicas, podManagementPolicy: 'Parallel', scaleStrategy: { maxUnavailable } }));
    expect([parallel(3), parallel('25%'), parallel('5%'), parallel('100%'), parallel('junk')]).toEqual([3, 2, 1, 10, 1]);
    expect(resolveScaleMaxUnavailable(spec({ replicas: 10, podManagementPolicy: 'Parallel' }))).toBeNull();
    expect(resolveScaleMaxUnavailable(spec({ replicas: 10, scaleStrategy: { maxUnavailable: 3 } }))).toBeNull();
  });
});

describe('a Parallel scale-up with a scale budget', () => {
  it('0 -> 7 with budget 3: the three lowest ordinals, then one more for each that becomes Ready', async () => {
    const w = await settled({ replicas: 0, podManagementPolicy: 'Parallel', scaleStrategy: { maxUnavailable: 3 } });
    w.edit((s) => void (s.replicas = 7));
    expect(steps(plan(w))).toEqual(['createPod:web-0', 'createPod:web-1', 'createPod:web-2']);
    await w.reconcile();
    expect(steps(plan(w))).toEqual([]); // three created, none Ready
    w.kubeletSync('web-1');
    w.kubeletSync('web-1');
    w.kubeletSync('web-1');
    await w.reconcile(); // the gate
    w.kubeletSync('web-1');
    expect(steps(plan(w))).toEqual(['createPod:web-3']);
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    expect([...w.pods.keys()].sort()).toEqual(['web-0', 'web-1', 'web-2', 'web-3', 'web-4', 'web-5', 'web-6']);
  });

  it('a pod that stops being Ready takes a slot; without a budget every missing pod is created at once', async () => {
    const w = await settled({ replicas: 3, podManagementPolicy: 'Parallel', scaleStrategy: { maxUnavailable: 2 } });
    w.kubeletUnready('web-0');
    w.edit((s) => void (s.replicas = 6));
    expect(steps(plan(w))).toEqual(['createPod:web-3']);
    w.edit((s) => void delete s.scaleStrategy);
    expect(steps(plan(w))).toEqual(['createPod:web-3', 'createPod:web-4', 'createPod:web-5']);
  });

  it('scale-down and deleting failed pods are not held back', async () => {
    const w = await settled({ replicas: 4, podManagementPolicy: 'Parallel', scaleStrategy: { maxUnavailable: 1 } });
    w.kubeletUnready('web-0');
    w.kubeletFail('web-1');
    w.edit((s) => void (s.replicas = 3));
    expect(steps(plan(w))).toEqual(['deletePod:web-1', 'deletePod:web-3']);
  });

  it('OrderedReady ignores it (admission refuses it there): one at a time as ever', async () => {
    const w = new World({ replicas: 3, scaleStrategy: { maxUnavailable: 3 } });
    expect(steps(plan(w))).toEqual(['createRevision', 'createPod:web-0']);
  });
});
