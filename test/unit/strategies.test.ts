// Update strategies and the budget (SPEC §4.4): InPlaceIfPossible, InPlaceOnly, ReCreate, OnDelete;
// maxUnavailable batches; pods already unavailable are rescued first, outside the budget.
import { describe, expect, it } from 'vitest';
import { resolveMaxUnavailable } from '../../shared/core/update/budget.ts';
import { NeoSetSpec } from '../../shared/api/neoset.ts';
import { chain, imagesOfPods, plan, revisionsOfPods, settled, steps, uids } from './helpers.ts';
import { World } from './world.ts';
import { podInPlaceState } from '../../shared/core/pods/in-place-state.ts';

const state = (w: World, i: number) => podInPlaceState(w.pod(i)!);

const withEnv = (value: string) => (s: Parameters<Parameters<World['edit']>[0]>[0]) => {
  s.template.spec.containers[0].env = [{ name: 'MODE', value }];
};

describe('InPlaceIfPossible', () => {
  it('a change beyond images: drains, then deletes the pod; it comes back on updateRevision', async () => {
    const w = await settled({ replicas: 2 });
    const before = w.pod(1)!.metadata.uid;
    w.edit(withEnv('a'));
    // drain with gate False, then delete: one invocation (no grace period, §2.0)
    expect(chain(plan(w))).toEqual(['createRevision', 'markDraining:web-1', 'deletePod:web-1']);
    await w.reconcile();
    w.kubeletSettle(1);
    const v2 = w.neoset.status!.updateRevision;
    expect(plan(w).actions[0]).toMatchObject({ kind: 'createPod', pod: { metadata: { name: 'web-1', labels: { 'controller-revision-hash': v2 } } } });
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    expect(revisionsOfPods(w)).toEqual([v2, v2]);
    expect(w.pod(1)!.metadata.uid).not.toBe(before);
  });

  it('an image-only change is done in place (same pod)', async () => {
    const w = await settled({ replicas: 2 });
    const before = uids(w);
    w.setImage('nginx:v2');
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    expect(uids(w)).toEqual(before);
    expect(imagesOfPods(w)).toEqual(['nginx:v2', 'nginx:v2']);
  });
});

describe('InPlaceOnly', () => {
  it('a change beyond images: no action on any pod, phase Failed, and the reason names what differs', async () => {
    const w = await settled({ replicas: 2, updateStrategy: { type: 'InPlaceOnly' } });
    w.edit(withEnv('a'));
    const p = plan(w);
    expect(steps(p)).toEqual(['createRevision', 'recordEvent:InPlaceOnlyBlocked']); // one Event, not one per pod
    expect(p.actions[1]).toMatchObject({ key: `inplaceonly-blocked/${p.status!.updateRevision}`, event: { type: 'Warning', message: expect.stringContaining('web-1 (and 1 more pods)') } });
    expect(p.status!.phase).toBe('Failed');
    expect(p.status!.conditions!.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'InPlaceOnlyBlocked',
      message: expect.stringContaining('spec.containers[0].env'),
    });
  });

  it('an image-only change goes in place as usual', async () => {
    const w = await settled({ replicas: 2, updateStrategy: { type: 'InPlaceOnly' } });
    w.setImage('nginx:v2');
    expect(steps(plan(w))).toEqual(['createRevision', 'markDraining:web-1']);
  });
});

describe('ReCreate', () => {
  it('drains and deletes even for an image-only change, within the budget, highest ordinal first', async () => {
    const w = await settled({ replicas: 3, updateStrategy: { type: 'ReCreate', maxUnavailable: 2 } });
    const before = uids(w);
    w.setImage('nginx:v2');
    expect(steps(plan(w))).toEqual(['createRevision', 'markDraining:web-2', 'markDraining:web-1']);
    for (let i = 0; i < 3; i++) await w.reconcile();
    expect(w.pod(2)!.metadata.deletionTimestamp).toBeDefined();
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    expect(imagesOfPods(w)).toEqual(['nginx:v2', 'nginx:v2', 'nginx:v2']);
    expect(uids(w).some((u) => before.includes(u))).toBe(false);
  });
});

describe('OnDelete', () => {
  it('never touches a pod; a pod the user deletes comes back on updateRevision', async () => {
    const w = await settled({ replicas: 2, updateStrategy: { type: 'OnDelete' } });
    const v1 = w.neoset.status!.currentRevision;
    w.setImage('nginx:v2');
    expect(steps(plan(w))).toEqual(['createRevision']);
    await w.settle();
    expect(imagesOfPods(w)).toEqual(['nginx:v1', 'nginx:v1']);
    expect(w.neoset.status!.phase).toBe('RollingOut');
    w.userDelete('web-0');
    await w.settle();
    const v2 = w.neoset.status!.updateRevision;
    expect(revisionsOfPods(w)).toEqual([v2, v1]);
  });
});

describe('the budget: maxUnavailable', () => {
  const spec = (replicas: number, maxUnavailable: number | string) =>
    NeoSetSpec.parse({ replicas, selector: {}, template: { spec: { containers: [{ name: 'a', image: 'x' }] } }, updateStrategy: { maxUnavailable } });

  it('is an integer, or a percentage of replicas rounded up, at least 1', async () => {
    expect(resolveMaxUnavailable(spec(10, 3))).toBe(3);
    expect(resolveMaxUnavailable(spec(10, '25%'))).toBe(3);
    expect(resolveMaxUnavailable(spec(10, '1%'))).toBe(1);
    expect(resolveMaxUnavailable(spec(0, '50%'))).toBe(1);
    expect(resolveMaxUnavailable(spec(4, 0))).toBe(1);
  });

  it('a batch is what the budget leaves: maxUnavailable minus the pods already unavailable', async () => {
    const w = await settled({ replicas: 5, updateStrategy: { maxUnavailable: 3 } });
    w.kubeletUnready('web-0'); // unavailable and not on updateRevision, but below... partition 0: a rescue
    w.edit((s) => void (s.updateStrategy.partition = 1));
    w.setImage('nginx:v2');
    // web-0 is below partition (not a candidate) but unavailable: it takes one of the 3
    expect(steps(plan(w))).toEqual(['createRevision', 'markDraining:web-4', 'markDraining:web-3']);
  });

  it('minReadySeconds: a pod Ready for less than minReadySeconds is unavailable, and requeueAfter says when it will not be', async () => {
    const w = await settled({ replicas: 2, minReadySeconds: 30 });
    w.advance(100);
    w.setImage('nginx:v2');
    await w.run(8, 0); // web-1 updated in place and Ready again, at this very moment
    expect(w.imageOf(1)).toBe('nginx:v2');
    const p = plan(w);
    expect(p.actions).toEqual([]);
    expect(p.requeueAfter).toBe(30);
    w.advance(29);
    expect(plan(w).actions).toEqual([]);
    w.advance(1);
    expect(steps(plan(w))).toEqual(['markDraining:web-0']);
  });
});

describe('rescue: a pod already unavailable is updated first, outside the budget (SPEC §4.4)', () => {
  it('a crashlooping rollout is rescued by rolling back, without anyone deleting pods', async () => {
    const w = await settled({ replicas: 4, updateStrategy: { maxUnavailable: 1 } });
    const v1 = w.neoset.status!.currentRevision;
    w.setImage('nginx:crash');
    await w.run(8, 0);
    expect(w.imageOf(3)).toBe('nginx:crash'); // stuck: crashlooping, the budget is used up
    expect(imagesOfPods(w).slice(0, 3)).toEqual(['nginx:v1', 'nginx:v1', 'nginx:v1']);
    w.kubeletUnready('web-1'); // and another pod has trouble too
    w.rollbackTo(1);
    const p = plan(w);
    // both unavailable pods start at once, although maxUnavailable is 1
    expect(steps(p)).toEqual(['recordEvent:RollbackDetected', 'renumberRevision', 'markDraining:web-3']);
    expect(p.actions[2]).toMatchObject({ state: { revision: v1 } });
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    expect(imagesOfPods(w)).toEqual(['nginx:v1', 'nginx:v1', 'nginx:v1', 'nginx:v1']);
    expect(w.neoset.status).toMatchObject({ phase: 'Completed', currentRevision: v1 });
  });

  it('rolling back: every pod stuck on the abandoned revision is taken at once, outside the budget', async () => {
    // ReCreate: the broken pods are new pods on the broken revision, with no update in flight.
    const w = await settled({ replicas: 4, podManagementPolicy: 'Parallel', updateStrategy: { type: 'ReCreate', maxUnavailable: 2 } });
    w.setImage('nginx:crash');
    await w.run(10, 0);
    expect(imagesOfPods(w)).toEqual(['nginx:v1', 'nginx:v1', 'nginx:crash', 'nginx:crash']);
    expect([2, 3].map((i) => state(w, i))).toEqual([null, null]);
    w.rollbackTo(1); // revision 1 again: the crash revision is abandoned
    w.kubeletUnready('web-1'); // and a pod on the stable revision has trouble: it waits
    const p = plan(w);
    expect(steps(p).filter((s) => s.startsWith('markDraining'))).toEqual(['markDraining:web-3', 'markDraining:web-2']);
    expect(p.actions.find((a) => a.kind === 'markDraining')).toMatchObject({ event: { message: expect.stringContaining('rescue') } });
  });

  it('fixing forward: pods stuck on the broken revision are rescued toward the new one', async () => {
    const w = await settled({ replicas: 3, podManagementPolicy: 'Parallel', updateStrategy: { maxUnavailable: 1 } });
    w.setImage('nginx:crash');
    await w.run(8, 0);
    expect(imagesOfPods(w)).toEqual(['nginx:v1', 'nginx:v1', 'nginx:crash']);
    w.setImage('nginx:v3');
    const p = plan(w);
    expect(steps(p)).toEqual(['createRevision', 'markDraining:web-2']);
    await w.reconcile();
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    expect(imagesOfPods(w)).toEqual(['nginx:v3', 'nginx:v3', 'nginx:v3']);
  });
});

describe('nothing else bypasses the budget (SPEC §4.4 Rescue [revised])', () => {
  it('a Pending pod just created on currentRevision during a rollout waits for the budget', async () => {
    const w = await settled({ replicas: 5, updateStrategy: { maxUnavailable: 1 } });
    w.setImage('nginx:v2');
    await w.reconcile(); // web-4 starts: the budget is spent
    w.userDelete('web-1');
    w.kubeletSync('web-1'); // gone
    await w.reconcile(); // recreated on the stable revision, Pending
    const stable = w.neoset.status!.currentRevision;
    expect(w.revisionOf(1)).toBe(stable);
    expect(w.pod(1)!.status!.phase).toBe('Pending');
    expect(steps(plan(w))).not.toContain('markDraining:web-1');
  });

  it('Ready pods inside minReadySeconds are unavailable: they are not all drained at once', async () => {
    // The report: minReadySeconds 3, maxUnavailable 2, three pods Ready for less than 3 s.
    const w = new World({ replicas: 3, podManagementPolicy: 'Parallel', minReadySeconds: 3, updateStrategy: { maxUnavailable: 2 } });
    w.kubeletSettle(0);
    await w.run(3, 0); // created, running, Ready — for 0 s
    expect(w.pod(2)!.status!.conditions!.find((c) => c.type === 'Ready')?.status).toBe('True');
    w.setImage('nginx:v2');
    expect(steps(plan(w)).filter((s) => s.startsWith('markDraining'))).toEqual([]);
    w.advance(3);
    expect(steps(plan(w)).filter((s) => s.startsWith('markDraining'))).toEqual(['markDraining:web-2', 'markDraining:web-1']);
  });

  it('pods a node reboot made unready while the rollout is Failed do not get the broken image', async () => {
    const w = await settled({ replicas: 3, updateStrategy: { maxUnavailable: 1, inPlaceUpdateStrategy: { timeoutSeconds: 30 } } });
    w.setImage('nginx:crash');
    await w.run(8, 0);
    w.advance(31);
    await w.reconcile();
    expect(w.neoset.status!.phase).toBe('Failed');
    w.kubeletUnready('web-0');
    w.kubeletUnready('web-1');
    expect(steps(plan(w)).filter((s) => s.startsWith('markDraining'))).toEqual([]);
  });

  it('nothing at all starts while paused, rescues included', async () => {
    const w = await settled({ replicas: 3, podManagementPolicy: 'Parallel', updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } });
    w.setImage('nginx:crash');
    await w.run(8, 0);
    w.edit((s) => void (s.updateStrategy.pause = true));
    w.rollbackTo(1); // web-2 now stuck on an abandoned revision: a rescue, but paused
    expect(steps(plan(w)).filter((s) => s.startsWith('markDraining'))).toEqual([]);
    w.edit((s) => void (s.updateStrategy.pause = false));
    expect(steps(plan(w)).filter((s) => s.startsWith('markDraining'))).toEqual(['markDraining:web-2']);
  });
});
