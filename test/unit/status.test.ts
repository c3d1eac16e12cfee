// NeoSet status (SPEC §4.6): counts, phase, conditions and their lastTransitionTime, status written
// only when it changed; and requeueAfter (§4.5).
import { describe, expect, it } from 'vitest';
import { plan, settled } from './helpers.ts';
import { World } from './world.ts';

describe('status', () => {
  it('reports every field', async () => {
    const w = await settled({ replicas: 3 });
    w.edit((s) => {
      s.template.spec.containers[0].image = 'nginx:v2';
      s.updateStrategy.partition = 2;
      s.selector = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['b', 'a'] }] };
    });
    await w.run(10, 0);
    await w.reconcile();
    const v1 = w.neoset.status!.currentRevision;
    expect(w.neoset.status).toEqual({
      observedGeneration: 2,
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      updatedReplicas: 1,
      updatedReadyReplicas: 1,
      currentRevision: v1,
      updateRevision: expect.not.stringMatching(v1!),
      collisionCount: 0,
      labelSelector: 'app=web,tier notin (a,b)',
      currentImage: 'nginx:v1',
      targetImage: 'nginx:v2',
      phase: 'Canary',
      currentUpdatePods: [],
      // The lists this status was decided from (the applier's record, snapshot-reader.ts).
      observedResourceVersions: { pods: expect.stringMatching(/^[1-9][0-9]*$/), controllerrevisions: expect.stringMatching(/^[1-9][0-9]*$/) },
      conditions: [
        { type: 'Available', status: 'True', reason: 'EnoughReplicas', message: '3/3 ready', lastTransitionTime: '2025-01-01T00:00:00Z', observedGeneration: 2 },
        { type: 'Progressing', status: 'True', reason: 'Canary', message: '1/3 updated', lastTransitionTime: '2025-01-01T00:00:00Z', observedGeneration: 2 },
        { type: 'Paused', status: 'False', reason: 'NotPaused', message: 'pause=false', lastTransitionTime: '2025-01-01T00:00:00Z', observedGeneration: 2 },
        { type: 'ReadyForUpgrade', status: 'False', reason: 'RolloutInProgress', message: '1/3 updated', lastTransitionTime: expect.any(String), observedGeneration: 2 },
      ],
    });
  });

  it('is null in the plan when nothing changed', async () => {
    const w = await settled({ replicas: 2 });
    expect(plan(w).status).toBeNull();
    w.advance(3600);
    expect(plan(w).status).toBeNull();
  });

  it('keeps lastTransitionTime while a condition keeps its status, and sets it when the status flips', async () => {
    const w = await settled({ replicas: 2 });
    const progressing = () => w.neoset.status!.conditions!.find((c) => c.type === 'Progressing')!;
    const paused = () => w.neoset.status!.conditions!.find((c) => c.type === 'Paused')!;
    expect(progressing()).toMatchObject({ status: 'False', lastTransitionTime: '2025-01-01T00:00:00Z' });
    w.advance(60);
    w.setImage('nginx:v2');
    await w.reconcile();
    expect(progressing()).toMatchObject({ status: 'True', reason: 'RollingOut', lastTransitionTime: '2025-01-01T00:01:00Z' });
    w.advance(60);
    w.edit((s) => void (s.replicas = 3)); // message and generation change, status does not
    await w.reconcile();
    expect(progressing().lastTransitionTime).toBe('2025-01-01T00:01:00Z');
    expect(paused().lastTransitionTime).toBe('2025-01-01T00:00:00Z');
    w.edit((s) => void (s.updateStrategy.pause = true));
    await w.reconcile();
    expect(paused()).toMatchObject({ status: 'True', reason: 'PausedByUser', lastTransitionTime: '2025-01-01T00:02:00Z' });
  });

  it('Available compares available pods with replicas - maxUnavailable', async () => {
    const w = await settled({ replicas: 4, updateStrategy: { maxUnavailable: 1 } });
    w.kubeletUnready('web-0');
    expect(plan(w).status!.conditions![0]).toMatchObject({ status: 'True', message: '3/4 ready' });
    w.kubeletUnready('web-1');
    expect(plan(w).status!.conditions![0]).toMatchObject({ status: 'False', reason: 'NotEnoughReplicas', message: '2/4 ready' });
    expect(plan(w).status!.conditions![3]).toMatchObject({ type: 'ReadyForUpgrade', status: 'False', reason: 'NotAvailable' });
  });

  it('lists the pods being updated, in ordinal order', async () => {
    const w = await settled({ replicas: 12, podManagementPolicy: 'Parallel', updateStrategy: { maxUnavailable: 3 } });
    w.setImage('nginx:v2');
    await w.reconcile();
    // the claim's status named them; the next decision has nothing to add (dead claims cost no write of their own)
    expect(plan(w).status).toBeNull();
    expect(w.neoset.status!.currentUpdatePods).toEqual(['web-9', 'web-10', 'web-11']);
  });
});

describe('phase', () => {
  const phaseAfter = async (w: World) => {
    await w.settle();
    return w.neoset.status!.phase;
  };

  it('Idle before any rollout; RollingOut with partition 0; Canary with partition > 0; Paused; Completed', async () => {
    const w = await settled({ replicas: 2 });
    expect(w.neoset.status!.phase).toBe('Idle');
    w.edit((s) => {
      s.template.spec.containers[0].image = 'nginx:v2';
      s.updateStrategy.pause = true;
    });
    expect(await phaseAfter(w)).toBe('Paused');
    w.edit((s) => {
      s.updateStrategy.pause = false;
      s.updateStrategy.partition = 1;
    });
    await w.reconcile();
    expect(w.neoset.status!.phase).toBe('Canary');
    expect(await phaseAfter(w)).toBe('Canary');
    w.edit((s) => void (s.updateStrategy.partition = 0));
    await w.reconcile();
    expect(w.neoset.status!.phase).toBe('RollingOut');
    expect(await phaseAfter(w)).toBe('Completed');
  });

  it('Failed wins over Paused', async () => {
    const w = await settled({ replicas: 1, updateStrategy: { type: 'InPlaceOnly' } });
    w.edit((s) => {
      s.template.spec.containers[0].env = [{ name: 'A', value: '1' }];
      s.updateStrategy.pause = true;
    });
    expect(plan(w).status!.phase).toBe('Failed');
  });
});

describe('requeueAfter', () => {
  it('is null when nothing time-based is pending', async () => {
    expect(plan(await settled({ replicas: 2 })).requeueAfter).toBeNull();
  });

  it('is the earliest of minReadySeconds expiry, grace end and deadline', async () => {
    const w = await settled({ replicas: 2, minReadySeconds: 100, updateStrategy: { maxUnavailable: 2, inPlaceUpdateStrategy: { gracePeriodSeconds: 40 } } });
    w.advance(1000);
    w.kubeletUnready('web-0');
    w.kubeletSettle(1); // web-0 Ready again now: available in 100 s
    w.setImage('nginx:v2');
    await w.reconcile(); // web-1 starts draining (web-0 is not available: it is rescued too)
    await w.reconcile();
    w.advance(10);
    expect(plan(w).requeueAfter).toBe(30); // web-1 grace ends in 30 s, before web-0's 90 s
  });
});
