// One pod's in-place update (SPEC §4.4 steps 1-5, §4.5), one write per decision.
import { describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_STATE, CONDITION_INPLACE_READY } from '../../shared/api/names.ts';
import { finishInPlaceUpdate, podReadiness } from '../../shared/core/readiness/readiness.ts';
import { parseInPlaceState } from '../../shared/core/pods/in-place-state.ts';
import type { InPlaceState } from '../../shared/api/inplace-state.ts';
import type { Action } from '../../shared/core/plan.ts';
import { chain, plan, settled, steps } from './helpers.ts';
import type { World } from './world.ts';

const state = (w: World, i: number): InPlaceState | null => parseInPlaceState(w.pod(i)?.metadata.annotations?.[ANNOTATION_INPLACE_STATE]);
const gate = (w: World, i: number) => w.pod(i)?.status?.conditions?.find((c) => c.type === CONDITION_INPLACE_READY);

/** One replica on v1, settled, then the template moves to v2 and the revision is created. */
async function oneReplicaUpdating(spec: Parameters<typeof settled>[0] = {}): Promise<{ w: World; v1: string; v2: string }> {
  const w = await settled({ replicas: 1, ...spec });
  const v1 = w.neoset.status!.currentRevision!;
  w.setImage('nginx:v2');
  return { w, v1, v2: '' };
}

/** The one pod write a decision starts with (its chained continuation aside, §2.0), revisions aside. */
function only(w: World): Action {
  const actions = plan(w).actions.filter((a) => a.kind !== 'createRevision' && !('pod' in a && 'chained' in a.pod && a.pod.chained));
  expect(actions).toHaveLength(1);
  return actions[0];
}

describe('in-place update of one pod', () => {
  it('walks Draining + gate False -> grace -> patchImages -> done -> finish + gate True, one write per step', async () => {
    const { w, v1 } = await oneReplicaUpdating({ updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: 10 } } });
    const start = w.now;
    const r1 = await w.reconcile();
    const v2 = r1.plan.status!.updateRevision!;
    expect(steps(r1.plan)).toEqual(['createRevision', 'markDraining:web-0']);
    expect(r1.plan.actions[1]).toMatchObject({
      kind: 'markDraining',
      state: { revision: v2, phase: 'Draining', drainStartedAt: '2025-01-01T00:00:00Z' },
    });
    expect(r1.plan.status!.currentUpdatePods).toEqual(['web-0']); // claimed (§2.0)
    // 1, in the same write (pods/status): the gate False, from which the grace period counts.
    expect(chain(r1.plan)).toEqual(['createRevision', 'markDraining:web-0']);
    expect(r1.plan.actions[1]).toMatchObject({ gate: { status: 'False', reason: 'InPlaceUpdateDraining', lastTransitionTime: '2025-01-01T00:00:00Z' } });
    w.kubeletSettle(1);
    expect(w.pod(0)!.status!.conditions!.find((c) => c.type === 'Ready')!.status).toBe('False');

    // 2: the grace period holds the patch back and says when to look again
    w.advance(4);
    const waiting = plan(w);
    expect(waiting.actions).toEqual([]);
    expect(waiting.requeueAfter).toBe(6);
    expect(waiting.status?.currentUpdatePods ?? w.neoset.status!.currentUpdatePods).toEqual(['web-0']);
    w.advance(6);
    const before = w.pod(0)!.status!.containerStatuses![0];
    const patch = only(w);
    expect(patch).toEqual({
      kind: 'patchImages',
      pod: expect.objectContaining({ name: 'web-0' }),
      images: { app: 'nginx:v2' },
      revision: v2,
      state: {
        revision: v2,
        phase: 'Updating',
        drainStartedAt: '2025-01-01T00:00:00Z',
        readiness: 'Probe',
        startedAt: '2025-01-01T00:00:10Z',
        targetImages: { app: 'nginx:v2' },
        previousImageIDs: { app: before.imageID },
        previousContainerIDs: { app: before.containerID },
      },
      event: expect.objectContaining({ reason: 'InPlaceUpdateStarted' }),
    });
    await w.reconcile();
    expect(w.revisionOf(0)).toBe(v2);
    expect(gate(w, 0)).toMatchObject({ status: 'False', lastTransitionTime: '2025-01-01T00:00:00Z' });

    // 3a: nothing until the kubelet restarted the container on the new image; then the gate opens
    // before its probe passes — the state stays, the deadline with it (requeue at startedAt + 600 s)
    expect(plan(w).actions).toEqual([]);
    expect(plan(w).requeueAfter).toBe(600);
    w.kubeletSync('web-0'); // restarted on v2, not ready yet
    w.advance(2);
    const opened = { kind: 'setInPlaceReady', status: 'True', reason: 'InPlaceUpdateRestarted', lastTransitionTime: '2025-01-01T00:00:12Z' };
    expect(only(w)).toMatchObject(opened);
    expect(chain(plan(w))).toEqual(['setInPlaceReady:web-0']);
    expect(plan(w).requeueAfter).toBe(598);
    expect(podReadiness(w.pod(0)!, w.now)).toEqual(plan(w).actions);
    await w.reconcile();
    expect(state(w, 0)).toMatchObject({ phase: 'Updating', revision: v2 });
    expect(gate(w, 0)).toMatchObject({ status: 'True', reason: 'InPlaceUpdateRestarted' });
    // ...and the pod counts as in its update: not Ready (the kubelet's Ready waits for the probe),
    // not updated, still claimed
    expect(w.pod(0)!.status!.conditions!.find((c) => c.type === 'Ready')!.status).toBe('False');
    expect(plan(w).actions).toEqual([]);
    expect(w.neoset.status).toMatchObject({ updatedReplicas: 0, currentUpdatePods: ['web-0'] });
    w.kubeletSync('web-0'); // probe passes: the pod is Ready at once, its gate already open
    expect(w.pod(0)!.status!.conditions!.find((c) => c.type === 'Ready')!.status).toBe('True');
    w.advance(3);
    // Done and available (Ready on the new image, after its gate opened): it no longer counts as in its
    // update, before the finish write — updated, not claimed, the rollout complete in this decision
    const done = plan(w);
    expect(done.status).toMatchObject({ phase: 'Completed', currentRevision: v2, updatedReplicas: 1, updatedReadyReplicas: 1, currentUpdatePods: [] });
    expect(steps(done)).toEqual(['finishInPlaceUpdate:web-0', 'recordEvent:RolloutCompleted']);
    // 3b, 4: done -> the state goes, and the gate is told done (its transition time kept) in the same
    // write — exactly what the readiness function decides from the pod; no Event per pod (the gate's
    // message says it)
    expect(done.actions[0]).toMatchObject({
      kind: 'finishInPlaceUpdate',
      revision: v2,
      durationSeconds: 15,
      gate: { status: 'True', reason: 'InPlaceUpdateDone', message: `update to ${v2} done in 15s`, lastTransitionTime: '2025-01-01T00:00:12Z' },
    });
    expect(done.actions[0]).not.toHaveProperty('event');
    expect(podReadiness(w.pod(0)!, w.now)).toEqual(done.actions.slice(0, 1));
    await w.reconcile();
    expect(state(w, 0)).toBeNull();
    expect(gate(w, 0)).toMatchObject({ status: 'True', reason: 'InPlaceUpdateDone', lastTransitionTime: '2025-01-01T00:00:12Z' });
    expect(w.neoset.status).toMatchObject({ phase: 'Completed', currentRevision: v2, updatedReplicas: 1 });
    expect(plan(w)).toMatchObject({ actions: [], status: null });
    expect(v1).not.toBe(v2);
    expect(w.now - start).toBe(15_000);
  });

  it('the gate waits for every changed container to run its new image, restarted; a ready old container opens nothing', async () => {
    const w = await settled({ replicas: 1 });
    w.edit((s) => {
      s.template.spec.containers = [s.template.spec.containers[0], { ...s.template.spec.containers[0], name: 'side' }];
    });
    await w.settle();
    w.edit((s) => void s.template.spec.containers.forEach((c) => (c.image = 'nginx:v2')));
    await w.reconcile(); // drain + patch
    const cs = (name: string) => w.pod(0)!.status!.containerStatuses!.find((c) => c.name === name)!;
    w.kubeletSync('web-0'); // both restarted on v2
    const restartedOn = { ...cs('side') };
    // the side container still reports its old image: no gate
    Object.assign(cs('side'), { image: 'docker.io/library/nginx:v1' });
    expect(podReadiness(w.pod(0)!, w.now)).toEqual([]);
    // the new image but the old imageID and containerID: not restarted, no gate
    Object.assign(cs('side'), { image: restartedOn.image, imageID: state(w, 0)!.previousImageIDs!.side, containerID: state(w, 0)!.previousContainerIDs!.side });
    expect(podReadiness(w.pod(0)!, w.now)).toEqual([]);
    // restarted, but not started yet (ContainerCreating): no gate
    Object.assign(cs('side'), { ...restartedOn, started: false, state: { waiting: { reason: 'ContainerCreating' } } });
    expect(podReadiness(w.pod(0)!, w.now)).toEqual([]);
    Object.assign(cs('side'), restartedOn);
    expect(steps(podReadiness(w.pod(0)!, w.now))).toEqual(['setInPlaceReady:web-0']);
  });

  it('a container that never becomes ready behind an open gate still fails by timeoutSeconds', async () => {
    const { w } = await oneReplicaUpdating({ updateStrategy: { inPlaceUpdateStrategy: { timeoutSeconds: 60 } } });
    await w.reconcile(); // drain + patch
    w.kubeletSync('web-0'); // restarted on v2
    await w.reconcile(); // the gate opens
    expect(gate(w, 0)).toMatchObject({ status: 'True', reason: 'InPlaceUpdateRestarted' });
    w.changePod('web-0', (pod) => void (pod.status!.containerStatuses![0].ready = false)); // its probe never passes
    w.advance(59);
    expect(plan(w)).toMatchObject({ actions: [], requeueAfter: 1 });
    w.advance(1);
    const p = plan(w);
    expect(steps(p)).toEqual(['recordEvent:ProgressDeadlineExceeded']);
    expect(p.status).toMatchObject({ phase: 'Failed', updatedReplicas: 0 });
  });

  it('the gate: a Draining pod whose gate was reopened (by hand, or a state NeoSet 0.1 wrote apart) is drained again, the grace counted anew', async () => {
    const { w } = await oneReplicaUpdating({ updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: 5 } } });
    await w.reconcile(); // state and gate False in one write
    expect(state(w, 0)?.phase).toBe('Draining');
    expect(gate(w, 0)?.status).toBe('False');
    w.changePod('web-0', (pod) => void (pod.status!.conditions!.find((c) => c.type === CONDITION_INPLACE_READY)!.status = 'True'));
    w.advance(10);
    expect(only(w)).toMatchObject({ kind: 'setInPlaceReady', status: 'False', lastTransitionTime: '2025-01-01T00:00:10Z' });
    await w.reconcile();
    expect(plan(w).requeueAfter).toBe(5);
  });

  it('the gate: a finish on a pod not yet running leaves the gate closed; it opens once the pod runs', async () => {
    const { w } = await oneReplicaUpdating();
    await w.reconcile(); // drain + gate False, then the patch: one invocation (no grace period)
    w.kubeletSettle(2);
    const done = podReadiness(w.pod(0)!, w.now)[0];
    expect(done).toMatchObject({ kind: 'finishInPlaceUpdate', gate: { status: 'True' } });
    w.changePod('web-0', (pod) => {
      const [c] = pod.status!.containerStatuses!;
      c.started = false;
      c.state = { waiting: { reason: 'ContainerCreating' } };
    });
    expect(finishInPlaceUpdate(w.pod(0)!, state(w, 0)!, w.now, true)).not.toHaveProperty('gate');
  });

  it('a new pod gets its gate once Running with containers started, without waiting for Ready', async () => {
    const w = await settled({ replicas: 1 });
    w.edit((s) => void (s.replicas = 2));
    await w.reconcile(); // createPod web-1
    expect(gate(w, 1)).toBeUndefined();
    expect(plan(w).actions).toEqual([]); // Pending: nothing to open yet
    w.kubeletSync('web-1'); // Running, containers started, not ready
    expect(only(w)).toMatchObject({ kind: 'setInPlaceReady', pod: { name: 'web-1' }, status: 'True', reason: 'PodStarted' });
    expect(steps(podReadiness(w.pod(1)!, w.now))).toEqual(['setInPlaceReady:web-1']);
    expect(podReadiness(w.pod(0)!, w.now)).toEqual([]);
  });

  it('readiness Ready waits for ContainersReady, not the pod Ready condition our gate holds False', async () => {
    const { w } = await oneReplicaUpdating({ updateStrategy: { inPlaceUpdateStrategy: { readiness: 'Ready' } } });
    for (let i = 0; i < 3; i++) await w.reconcile();
    w.kubeletSettle(2);
    const condition = (type: string) => w.pod(0)!.status!.conditions!.find((c) => c.type === type)!;
    expect(condition('Ready').status).toBe('False');
    expect(condition('ContainersReady').status).toBe('True');
    expect(only(w).kind).toBe('finishInPlaceUpdate');
    // restarted but ContainersReady False: the gate opens, the update is not done
    condition('ContainersReady').status = 'False';
    expect(only(w)).toMatchObject({ kind: 'setInPlaceReady', status: 'True', reason: 'InPlaceUpdateRestarted' });
    await w.reconcile();
    expect(plan(w).actions).toEqual([]);
  });

  it('done compares the normalized image and a new imageID — or a new containerID when the digest is the same', async () => {
    const { w } = await oneReplicaUpdating();
    for (let i = 0; i < 3; i++) await w.reconcile();
    const cs = () => w.pod(0)!.status!.containerStatuses![0];
    const before = { ...cs() };
    // the kubelet reports the target, normalized, with the same digest (a retag) but a new container
    Object.assign(cs(), { image: 'docker.io/library/nginx:v2', ready: true, containerID: 'containerd://new' });
    expect(only(w).kind).toBe('finishInPlaceUpdate');
    // still the old container: not done
    Object.assign(cs(), { containerID: before.containerID });
    expect(plan(w).actions).toEqual([]);
    // a different image: not done
    Object.assign(cs(), { image: 'docker.io/library/nginx:v3', imageID: 'sha256:other', containerID: 'containerd://new' });
    expect(plan(w).actions).toEqual([]);
  });

  it('timeout: not done within timeoutSeconds -> Failed, Progressing=False ProgressDeadlineExceeded, one keyed Warning', async () => {
    const w = await settled({ replicas: 2, updateStrategy: { inPlaceUpdateStrategy: { timeoutSeconds: 60 } } });
    w.setImage('nginx:crash');
    await w.run(6, 0);
    const stuck = state(w, 1)!;
    expect(stuck.phase).toBe('Updating');
    w.advance(61);
    const p = plan(w);
    expect(steps(p)).toEqual(['recordEvent:ProgressDeadlineExceeded']);
    expect(p.actions[0]).toMatchObject({ key: `deadline-exceeded/web-1/${stuck.startedAt}`, event: { type: 'Warning' } });
    expect(p.status!.phase).toBe('Failed');
    expect(p.status!.conditions!.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: expect.stringContaining('web-1'),
    });
    // pod 0 does not start: no new batch while Failed (and the budget is used anyway)
    await w.reconcile();
    expect(state(w, 0)).toBeNull();
  });

  it('the deadline restarts when pause is toggled (the user retries), not on a scale or a promote', async () => {
    const w = await settled({ replicas: 2, updateStrategy: { inPlaceUpdateStrategy: { timeoutSeconds: 60 } } });
    w.setImage('nginx:crash');
    await w.run(6, 0);
    w.advance(120);
    expect(plan(w).status?.phase ?? w.neoset.status!.phase).toBe('Failed');
    await w.reconcile();
    // An HPA or `kubectl scale` changes the generation, not the deadline: still Failed.
    w.edit((s) => void (s.replicas = 3));
    await w.reconcile();
    w.advance(1);
    w.edit((s) => void (s.updateStrategy.partition = 1));
    expect(steps(plan(w))).not.toContain('restartDeadline:web-1');
    expect(plan(w).status!.phase).toBe('Failed');
    // Toggling pause, each edge seen by a decision, restarts it.
    w.edit((s) => void (s.updateStrategy.partition = 0));
    w.edit((s) => void (s.updateStrategy.pause = true));
    await w.reconcile();
    w.advance(1);
    const restart = plan(w).actions.find((a) => a.kind === 'restartDeadline');
    expect(restart).toMatchObject({
      kind: 'restartDeadline',
      pod: { name: 'web-1' },
      state: { phase: 'Updating', startedAt: '2025-01-01T00:02:02Z' },
      event: { reason: 'InPlaceUpdateDeadlineRestarted' },
    });
    await w.reconcile();
    w.edit((s) => void (s.updateStrategy.pause = false));
    const r = await w.reconcile();
    expect(r.plan.status?.phase).not.toBe('Failed');
  });

  it('a new updateRevision re-targets a pod mid-update from its current state (rollback of a stuck pod)', async () => {
    const w = await settled({ replicas: 1 });
    const v1 = w.neoset.status!.currentRevision!;
    w.setImage('nginx:crash');
    await w.settle(20);
    const stuck = state(w, 0)!;
    expect(stuck.phase).toBe('Updating');
    w.rollbackTo(1);
    const p = plan(w);
    expect(steps(p)).toEqual(['recordEvent:RollbackDetected', 'renumberRevision', 'markDraining:web-0']);
    expect(p.actions[2]).toMatchObject({ state: { revision: v1, phase: 'Draining', drainStartedAt: stuck.drainStartedAt } });
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    expect(w.imageOf(0)).toBe('nginx:v1');
    expect(w.neoset.status).toMatchObject({ phase: 'Completed', currentRevision: v1 });
  });

  it('a drain the rollout no longer wants (partition raised) is abandoned before any change', async () => {
    const { w } = await oneReplicaUpdating({ updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: 5 } } });
    await w.reconcile(); // markDraining, gate False; the grace period holds the patch back
    w.edit((s) => void (s.updateStrategy.partition = 1));
    const abort = only(w);
    // and the gate opens again, in the same write
    expect(abort).toMatchObject({ kind: 'finishInPlaceUpdate', aborted: true, event: { reason: 'UpdateAborted' }, gate: { status: 'True', reason: 'InPlaceUpdateAborted' } });
    expect(chain(plan(w))).toEqual(['finishInPlaceUpdate:web-0']);
    await w.reconcile();
    expect(gate(w, 0)?.status).toBe('True');
  });

  it('pause lets an update in flight finish but starts no new one', async () => {
    const w = await settled({ replicas: 2 });
    w.setImage('nginx:v2');
    await w.reconcile(); // markDraining web-1
    w.edit((s) => void (s.updateStrategy.pause = true));
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    expect([w.imageOf(0), w.imageOf(1)]).toEqual(['nginx:v1', 'nginx:v2']);
    expect(w.neoset.status!.phase).toBe('Paused');
  });

  it('template labels and annotations travel with the in-place patch; identity labels never move', async () => {
    const w = await settled({ replicas: 1 });
    w.edit((s) => {
      s.template.metadata = { labels: { app: 'web', tier: 'gold' }, annotations: { note: 'v2' } };
      s.template.spec.containers[0].image = 'nginx:v2';
    });
    expect(plan(w).actions.find((a) => a.kind === 'patchImages')).toMatchObject({ labels: { tier: 'gold' }, annotations: { note: 'v2' } });
    await w.reconcile(); // drain, gate False, patch: one invocation
    w.edit((s) => {
      s.template.metadata = { labels: { app: 'web' } };
      s.template.spec.containers[0].image = 'nginx:v3';
    });
    await w.settle();
    await w.reconcile();
    for (let i = 0; i < 2; i++) await w.reconcile();
    expect(w.pod(0)!.metadata.labels).toMatchObject({ app: 'web', 'neoset.neo.io/pod-name': 'web-0' });
    expect(w.pod(0)!.metadata.labels?.tier).toBeUndefined();
    expect(w.pod(0)!.metadata.annotations?.note).toBeUndefined();
  });
});
