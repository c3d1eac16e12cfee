// Issue 24 point 2: a pod whose in-place update is done (§4.4 step 3) and which is available no longer
// counts as in its update, though its state annotation waits for the readiness function's finish write:
// the next pod starts in the decision that sees it Ready, and the done pod leaves currentUpdatePods in
// that same claim write. Not before: a gate open on the restart with the probe not yet passed, Ready
// inside minReadySeconds, or a Ready older than the gate's opening (a kubelet not caught up) all keep
// the pod in its update; so does a done pod the rollout now sends to another revision.
import { describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_STATE, CONDITION_INPLACE_READY, LABEL_LIFECYCLE_STATE } from '../../shared/api/names.ts';
import { decide } from '../../shared/core/decide.ts';
import { podEventCanSkip } from '../../shared/core/event-relevance.ts';
import { podInPlaceState } from '../../shared/core/pods/in-place-state.ts';
import { finishInPlaceUpdate } from '../../shared/core/readiness/readiness.ts';
import type { Plan } from '../../shared/core/plan.ts';
import { rfc3339 } from '../../shared/core/time.ts';
import { plan, settled, steps } from './helpers.ts';
import type { World } from './world.ts';

const readyOf = (w: World, name: string) => w.pods.get(name)!.status!.conditions!.find((c) => c.type === 'Ready')!;
const hasState = (w: World, name: string) => w.pods.get(name)!.metadata.annotations?.[ANNOTATION_INPLACE_STATE] !== undefined;
/** A Pod event's decision: the readiness duties (the finish) are the readiness function's (§2.2). */
const onPodEvent = (w: World): Plan => decide(w.snapshot(), new Date(w.now), 'reconcile');
const drains = (p: Plan) => steps(p).filter((s) => s.startsWith('markDraining'));

/** 3 pods, maxUnavailable 1, a rollout to v2 whose first pod (web-2) is patched, restarted on v2 and its gate opened; its probe not yet passed. */
async function gateOpen(spec: Parameters<typeof settled>[0] = {}): Promise<World> {
  const w = await settled({ replicas: 3, updateStrategy: { maxUnavailable: 1 }, ...spec });
  w.setImage('nginx:v2');
  await w.reconcile(); // web-2: drain + image patch, chained (no grace period)
  expect(hasState(w, 'web-2')).toBe(true);
  w.kubeletSync('web-2'); // restarted on v2, not ready
  w.advance(1);
  await w.reconcile({ duties: 'all' }); // the gate opens on the restart
  expect(w.pods.get('web-2')!.status!.conditions!.find((c) => c.type === CONDITION_INPLACE_READY)?.status).toBe('True');
  return w;
}

describe('a pod done and available before the finish write (issue 24)', () => {
  it('frees its budget slot at once: the next pod starts, and the done pod leaves currentUpdatePods in the same claim', async () => {
    const w = await gateOpen();
    // Gate open, probe not passed: still in its update — nothing starts, it stays claimed.
    expect(drains(onPodEvent(w))).toEqual([]);
    expect(w.neoset.status!.currentUpdatePods).toEqual(['web-2']);
    w.advance(1);
    w.kubeletSync('web-2'); // probe passes: Ready at once (its gate is open)
    expect(readyOf(w, 'web-2').status).toBe('True');
    expect(hasState(w, 'web-2')).toBe(true);
    const next = onPodEvent(w);
    expect(steps(next)).toEqual(['markDraining:web-1']);
    expect(next.claim).toBe(true);
    expect(next.status).toMatchObject({ currentUpdatePods: ['web-1'], updatedReplicas: 1, updatedReadyReplicas: 1 });
    // A NeoSet event (or tick) carries the finish too, in the same plan.
    expect(steps(plan(w))).toEqual(['finishInPlaceUpdate:web-2', 'markDraining:web-1']);
  });

  it('with minReadySeconds, from the Ready transition: inside it the slot stays taken; the decision looks again when it ends', async () => {
    const w = await gateOpen({ minReadySeconds: 10 });
    w.kubeletSync('web-2');
    expect(readyOf(w, 'web-2').status).toBe('True');
    const inside = onPodEvent(w);
    expect(drains(inside)).toEqual([]);
    expect(inside.requeueAfter).toBe(10);
    w.advance(10);
    expect(drains(onPodEvent(w))).toEqual(['markDraining:web-1']);
  });

  it('a Ready older than the gate opening (a kubelet that has not recomputed it) is not the new containers’ Ready: the slot stays taken', async () => {
    const w = await gateOpen();
    w.advance(1);
    w.kubeletSync('web-2');
    const gate = w.pods.get('web-2')!.status!.conditions!.find((c) => c.type === CONDITION_INPLACE_READY)!;
    w.changePod('web-2', (pod) => {
      const ready = pod.status!.conditions!.find((c) => c.type === 'Ready')!;
      ready.lastTransitionTime = rfc3339(Date.parse(gate.lastTransitionTime!) - 1000);
    });
    expect(drains(onPodEvent(w))).toEqual([]);
    // The finish write still comes (it is the readiness function's rule, unchanged), and then the pod counts.
    expect(steps(plan(w))).toEqual(['finishInPlaceUpdate:web-2']);
  });

  it('a done pod the rollout now sends to another revision stays in its update: re-targeted, and nothing else starts', async () => {
    const w = await gateOpen();
    w.kubeletSync('web-2'); // done and available toward v2
    w.setImage('nginx:v3');
    const p = onPodEvent(w);
    expect(steps(p).filter((s) => s !== 'createRevision')).toEqual(['markDraining:web-2']);
    expect(p.status!.currentUpdatePods).toEqual(['web-2']);
  });

  it('OrderedReady: a done pod with its state still on it is Ready for the next ordinal; with the probe pending it is not', async () => {
    const w = await gateOpen({ podManagementPolicy: 'OrderedReady' });
    w.edit((s) => void (s.replicas = 4));
    expect(steps(onPodEvent(w)).filter((s) => s.startsWith('createPod'))).toEqual([]);
    w.kubeletSync('web-2');
    expect(steps(onPodEvent(w)).filter((s) => s.startsWith('createPod'))).toEqual(['createPod:web-3']);
  });

  it('a canary step completes on a done and available pod, its state still on it', async () => {
    const w = await gateOpen({ updateStrategy: { maxUnavailable: 1, canary: { steps: [{ partition: 2 }, { pause: {} }, { partition: 0 }] } } });
    expect(onPodEvent(w).status?.canary?.stepIndex ?? w.neoset.status!.canary!.stepIndex).toBe(0);
    w.kubeletSync('web-2');
    expect(hasState(w, 'web-2')).toBe(true);
    expect(onPodEvent(w).status).toMatchObject({ canary: { stepIndex: 1 }, phase: 'Paused', currentUpdatePods: [] });
  });

  it('the reconcile function does not skip the Pod event that shows the pod done and Ready; it skips the one with the probe pending', async () => {
    const w = await gateOpen();
    expect(podEventCanSkip(w.pods.get('web-2')!, w.now)).toBe('in-place update in flight');
    w.kubeletSync('web-2');
    expect(podEventCanSkip(w.pods.get('web-2')!, w.now)).toBeNull();
  });

  it("it skips the finish write's own event (the finish found the pod Ready and stamped the gate), not a Ready after it, nor an edit later on", async () => {
    const w = await gateOpen();
    w.kubeletSync('web-2');
    expect(podEventCanSkip(w.pods.get('web-2')!, w.now)).toBeNull(); // the Ready event: decided on
    await w.reconcile({ duties: 'all' }); // readiness's finish (and the next pod's start)
    const finished = w.pods.get('web-2')!;
    expect(hasState(w, 'web-2')).toBe(false);
    const gate = finished.status!.conditions!.find((c) => c.type === CONDITION_INPLACE_READY)!;
    expect(gate).toMatchObject({ reason: 'InPlaceUpdateDone', lastProbeTime: rfc3339(w.now) });
    expect(podEventCanSkip(finished, w.now)).toBe('update finished on a Ready pod, decided on');
    // The probe fails and passes again a second later: that Ready frees a slot, it is reconciled.
    const recovered = structuredClone(finished);
    recovered.status!.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime = rfc3339(w.now + 1000);
    expect(podEventCanSkip(recovered, w.now + 1000)).toBeNull();
    // A label edit a minute later: past the finish's moment, reconciled as any Pod event.
    expect(podEventCanSkip(finished, w.now + 60_000)).toBeNull();
    // With update hooks (§4.10) the finish moves the lifecycle on (Updating -> Updated), and the write
    // of Normal that follows frees the budget slot: both reconciled.
    for (const state of ['Updating', 'Normal']) {
      const hooked = structuredClone(finished);
      hooked.metadata.labels = { ...hooked.metadata.labels, [LABEL_LIFECYCLE_STATE]: state };
      expect(podEventCanSkip(hooked, w.now), state).toBeNull();
    }
  });

  it('a finish that opens the gate itself (the pod not Ready yet) stamps nothing: the Ready that follows is reconciled', async () => {
    const w = await settled({ replicas: 3, updateStrategy: { maxUnavailable: 1 } });
    w.setImage('nginx:v2');
    await w.reconcile();
    w.kubeletSync('web-2'); // restarted on v2, its containers ready; the gate still closed
    const pod = w.pods.get('web-2')!;
    const finish = finishInPlaceUpdate(pod, podInPlaceState(pod)!, w.now, false);
    expect(finish).toMatchObject({ kind: 'finishInPlaceUpdate', gate: { status: 'True', reason: 'InPlaceUpdateDone' } });
    expect((finish as { gate: { lastProbeTime?: string } }).gate.lastProbeTime).toBeUndefined();
  });
});
