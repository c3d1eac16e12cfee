// The seeds' walkthrough (ch.1), end to end on the in-memory world: canary, pause, batches,
// full rollout, rollback, and scale-up during a rollout — all in place (same pod UIDs).
import { beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants } from '../oracle/index.ts';
import { imagesOfPods, plan, revisionsOfPods, settled, steps, uids } from './helpers.ts';
import type { World } from './world.ts';

/** settle() with the invariant checker after every reconcile. */
async function settleChecked(w: World): Promise<void> {
  const rounds = await w.settle(300, (previous, current) => expect(checkInvariants({ ...current, previous })).toEqual([]));
  expect(rounds).toBeGreaterThanOrEqual(0);
}

describe('the walkthrough: 5 replicas, v1 -> v2 by canary and batches, then rollback', () => {
  let w: World;
  let pods: string[];
  let v1 = '';
  let v2 = '';
  beforeAll(async () => {
    w = await settled({ replicas: 5, image: 'mysql:8.0' });
    pods = uids(w);
    v1 = w.neoset.status!.updateRevision!;
  });

  it('starts Idle with every pod on the first revision', async () => {
    expect(w.neoset.status).toMatchObject({ phase: 'Idle', replicas: 5, readyReplicas: 5, updatedReplicas: 5, currentRevision: v1, currentImage: 'mysql:8.0' });
  });

  it('canary, partition 4: only pod 4 is updated; the phase is Canary', async () => {
    w.edit((s) => {
      s.template.spec.containers[0].image = 'mysql:8.1';
      s.updateStrategy.partition = 4;
    });
    const first = plan(w);
    expect(steps(first)).toEqual(['createRevision', 'markDraining:web-4']);
    await settleChecked(w);
    v2 = w.neoset.status!.updateRevision!;
    expect(revisionsOfPods(w)).toEqual([v1, v1, v1, v1, v2]);
    expect(imagesOfPods(w)).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.0', 'mysql:8.0', 'mysql:8.1']);
    expect(w.neoset.status).toMatchObject({ phase: 'Canary', currentRevision: v1, updatedReplicas: 1, currentImage: 'mysql:8.0', targetImage: 'mysql:8.1' });
  });

  it('pause: nothing starts, the phase is Paused', async () => {
    w.edit((s) => {
      s.updateStrategy.pause = true;
      s.updateStrategy.partition = 2;
    });
    expect(steps(plan(w))).toEqual([]);
    await settleChecked(w);
    expect(revisionsOfPods(w)).toEqual([v1, v1, v1, v1, v2]);
    expect(w.neoset.status!.phase).toBe('Paused');
  });

  it('resume with partition 2 and maxUnavailable 2: pods 3 and 2 start together', async () => {
    w.edit((s) => {
      s.updateStrategy.pause = false;
      s.updateStrategy.maxUnavailable = 2;
    });
    expect(steps(plan(w))).toEqual(['markDraining:web-3', 'markDraining:web-2']);
    await settleChecked(w);
    expect(revisionsOfPods(w)).toEqual([v1, v1, v2, v2, v2]);
    expect(w.neoset.status).toMatchObject({ phase: 'Canary', currentRevision: v1 });
  });

  it('partition 0: the rest, then currentRevision advances and the phase is Completed', async () => {
    w.edit((s) => void (s.updateStrategy.partition = 0));
    await settleChecked(w);
    expect(revisionsOfPods(w)).toEqual([v2, v2, v2, v2, v2]);
    expect(w.neoset.status).toMatchObject({ phase: 'Completed', currentRevision: v2, updateRevision: v2, currentImage: 'mysql:8.1', updatedReplicas: 5 });
    expect(w.eventReasons()).toContain('RolloutCompleted');
  });

  it('rollback to revision 1: the old revision is renumbered 3 and pods are patched back in place', async () => {
    w.rollbackTo(1);
    const first = plan(w);
    expect(steps(first)).toEqual(['recordEvent:RollbackDetected', 'renumberRevision', 'markDraining:web-4', 'markDraining:web-3']);
    expect(first.actions[1]).toMatchObject({ kind: 'renumberRevision', number: 3 });
    await settleChecked(w);
    expect(revisionsOfPods(w)).toEqual([v1, v1, v1, v1, v1]);
    expect(w.revisions.get(v1)!.revision).toBe(3);
    expect(w.neoset.status).toMatchObject({ phase: 'Completed', currentRevision: v1, updateRevision: v1, currentImage: 'mysql:8.0' });
  });

  it('never recreated a pod: same UIDs from start to end', async () => {
    expect(uids(w)).toEqual(pods);
  });
});

describe('scale-up during a rollout uses the stable revision (SPEC §4.3, seed pain 3)', () => {
  it('pods 4,3 on v2, pause, scale 5 -> 8: pods 5,6,7 are created on v1; after resume with partition 0 they are updated in place', async () => {
    const w = await settled({ replicas: 5 });
    const v1 = w.neoset.status!.updateRevision!;
    w.edit((s) => {
      s.template.spec.containers[0].image = 'nginx:v2';
      s.updateStrategy.partition = 3;
    });
    await settleChecked(w);
    const v2 = w.neoset.status!.updateRevision!;
    expect(revisionsOfPods(w)).toEqual([v1, v1, v1, v2, v2]);

    w.edit((s) => {
      s.updateStrategy.pause = true;
      s.replicas = 8;
    });
    const create = plan(w).actions.find((a) => a.kind === 'createPod');
    expect(create).toMatchObject({ pod: { metadata: { name: 'web-5', labels: { 'controller-revision-hash': v1 } } } });
    await settleChecked(w);
    expect(revisionsOfPods(w)).toEqual([v1, v1, v1, v2, v2, v1, v1, v1]);
    expect(imagesOfPods(w).slice(5)).toEqual(['nginx:v1', 'nginx:v1', 'nginx:v1']);
    const scaledUp = [5, 6, 7].map((i) => w.pod(i)!.metadata.uid);

    w.edit((s) => {
      s.updateStrategy.pause = false;
      s.updateStrategy.partition = 0;
    });
    await settleChecked(w);
    expect(revisionsOfPods(w)).toEqual(Array(8).fill(v2));
    expect([5, 6, 7].map((i) => w.pod(i)!.metadata.uid)).toEqual(scaledUp);
    expect(w.neoset.status).toMatchObject({ phase: 'Completed', currentRevision: v2, replicas: 8 });
  });

  it('without pause, a scale-up mid-rollout still creates the new pod on currentRevision', async () => {
    const w = await settled({ replicas: 2 });
    const v1 = w.neoset.status!.updateRevision!;
    w.edit((s) => {
      s.template.spec.containers[0].image = 'nginx:v2';
      s.replicas = 3;
    });
    const created = plan(w).actions.find((a) => a.kind === 'createPod');
    expect(created).toMatchObject({ pod: { metadata: { name: 'web-2', labels: { 'controller-revision-hash': v1 } } } });
  });
});
