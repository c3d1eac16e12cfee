// Update hooks (SPEC §4.10): the label handshake with a hook owner, the budget slot a waiting pod
// holds, HookTimeout, and the CloudEvent of each state change.
import { describe, expect, it } from 'vitest';
import { LABEL_LIFECYCLE_STATE } from '../../shared/api/names.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { chain } from './helpers.ts';
import { stateOf, World } from './world.ts';

const BLOCKER = { 'mysql.neo.io/serving': 'true' };
const lifecycle = (timeoutSeconds = 600) => ({ preUpdate: { labelsHandler: BLOCKER, timeoutSeconds }, postUpdate: { labelsHandler: BLOCKER, timeoutSeconds } });
const stateLabel = (p: Pod | undefined) => p?.metadata.labels?.[LABEL_LIFECYCLE_STATE];
const guard = (w: World, i: number, on: boolean) =>
  w.changePod(`web-${i}`, (p) => {
    if (on) p.metadata.labels = { ...p.metadata.labels, ...BLOCKER };
    else delete p.metadata.labels!['mysql.neo.io/serving'];
  });

async function guarded(replicas = 3, maxUnavailable = 1, timeoutSeconds = 600): Promise<World> {
  const w = new World({ replicas, updateStrategy: { maxUnavailable }, lifecycle: lifecycle(timeoutSeconds) } as never);
  if ((await w.settle()) < 0) throw new Error('did not settle');
  for (let i = 0; i < replicas; i++) guard(w, i, true);
  return w;
}

describe('update hooks (§4.10)', () => {
  it('creates pods Normal; an update asks the owner first and waits, holding a budget slot', async () => {
    const w = await guarded();
    expect([0, 1, 2].map((i) => stateLabel(w.pod(i)))).toEqual(['Normal', 'Normal', 'Normal']);
    w.setImage('nginx:v2');
    const r = await w.reconcile();
    expect(chain(r.plan).filter((s) => s.includes('web-'))).toEqual(['setLifecycle:web-2']);
    expect(stateLabel(w.pod(2))).toBe('PreparingUpdate');
    expect(w.neoset.status!.currentUpdatePods).toEqual(['web-2']);
    await w.run(3);
    // Still waiting for the owner: nothing drained, and the slot is held (maxUnavailable 1).
    expect(stateOf(w.pod(2))).toBeNull();
    expect([0, 1].map((i) => stateLabel(w.pod(i)))).toEqual(['Normal', 'Normal']);
    expect(w.lifecycleEvents.map((e) => `${e.pod.metadata?.name}:${e.state}`)).toEqual(['web-2:PreparingUpdate']);
  });

  it('the owner lets go: Updating -> updated in place -> Updated, waits to re-join, then Normal; events in order', async () => {
    const w = await guarded();
    w.setImage('nginx:v2');
    await w.reconcile();
    guard(w, 2, false);
    const r = await w.reconcile();
    // The owner's "go": Updating, then the drain and the patch, chained in one invocation (§2.0).
    expect(chain(r.plan).filter((s) => s.includes('web-2'))).toEqual(['setLifecycle:web-2', 'markDraining:web-2', 'patchImages:web-2']);
    await w.run(6);
    expect(stateLabel(w.pod(2))).toBe('Updated');
    expect(stateLabel(w.pod(1))).toBe('Normal'); // web-2 holds the one slot until it re-joins
    guard(w, 2, true);
    await w.run(2);
    expect(stateLabel(w.pod(2))).toBe('Normal');
    expect(stateLabel(w.pod(1))).toBe('PreparingUpdate');
    expect(w.lifecycleEvents.filter((e) => e.pod.metadata?.name === 'web-2').map((e) => e.state)).toEqual(['PreparingUpdate', 'Updating', 'Updated', 'Normal']);
    // Everyone answers at once from here on.
    for (const i of [0, 1]) guard(w, i, false);
    for (let round = 0; round < 40 && w.neoset.status?.phase !== 'Completed'; round++) {
      for (const i of [0, 1]) guard(w, i, stateLabel(w.pod(i)) !== 'PreparingUpdate');
      await w.run(1);
    }
    expect(w.neoset.status!.phase).toBe('Completed');
    expect([0, 1, 2].map((i) => stateLabel(w.pod(i)))).toEqual(['Normal', 'Normal', 'Normal']);
  });

  it('an owner that never answers: Failed with HookTimeout naming the pod and the hook', async () => {
    const w = await guarded(3, 1, 30);
    w.setImage('nginx:v2');
    await w.reconcile();
    w.advance(31);
    await w.reconcile();
    const progressing = w.neoset.status!.conditions!.find((c) => c.type === 'Progressing')!;
    expect(w.neoset.status!.phase).toBe('Failed');
    expect(progressing).toMatchObject({ status: 'False', reason: 'HookTimeout' });
    expect(progressing.message).toContain('pod web-2: preUpdate hook not answered within 30s (the pod still carries mysql.neo.io/serving=true)');
  });

  it('a rollback while waiting gives the pod back (Normal), nothing drained', async () => {
    const w = await guarded();
    w.setImage('nginx:v2');
    await w.reconcile();
    w.setImage('nginx:v1');
    await w.run(3);
    expect(stateLabel(w.pod(2))).toBe('Normal');
    expect(w.neoset.status!.phase).toBe('Completed');
  });
});
