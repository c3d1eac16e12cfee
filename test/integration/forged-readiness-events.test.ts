// Issue 19 point 1 on the real API server: forged Pod events POSTed to the readiness function while a
// pod waits out its drain's grace period (SPEC §2 "Event = hint, never command", §2.0). Each is the
// pod as read from the API server, altered: (a) its state annotation and resourceVersion removed —
// the event of a pod with no update in flight whose gate is closed, which readiness would open; (b) an
// update claimed finished (new image, a different imageID, ready) with the current resourceVersion; (c)
// the same claimed restarted but not ready (what opens the gate before the probe passes).
// Every observed state of the pod is watched (the stack's observer): its gate must stay closed for
// the whole drain and the update must not end before its image was even patched. Then the rollout
// finishes as usual.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp as createReadiness } from '../../functions/readiness/app.ts';
import { ANNOTATION_INPLACE_STATE, CONDITION_INPLACE_READY } from '../../shared/api/names.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { resourceEvent, toBinaryRequest } from '../../dev/bridge/pump.ts';
import type { KubeObject } from '../../shared/k8s/watch.ts';
import { neosetManifest, paths, startStack, type Stack } from '../e2e/stack.ts';
import { applyNeoSet, imageOf, setImage, settledOn, untilStatus } from '../e2e/helpers.ts';

const NAME = 'victim';
const POD = `${NAME}-2`;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ prefix: 'forged' });
});
afterAll(async () => {
  await stack?.stop();
});

const gateOf = (p: Pod) => p.status?.conditions?.find((c) => c.type === CONDITION_INPLACE_READY);
const phaseOf = (p: Pod) => {
  const raw = p.metadata.annotations?.[ANNOTATION_INPLACE_STATE];
  return raw ? (JSON.parse(raw) as { phase: string }).phase : undefined;
};
/** The pod's states observed from `from` on (resourceVersion order: the observer's history is in it). */
const states = (from: Pod) => stack.observer.podHistory.map((h) => h.pod).filter((p) => p.metadata.name === POD && BigInt(p.metadata.resourceVersion!) >= BigInt(from.metadata.resourceVersion!));

describe('forged Pod events to the readiness function (issue 19, point 1)', () => {
  it('neither reopen a draining pod\'s gate nor finish an update that never happened; the rollout then finishes', async () => {
    const readiness = createReadiness({ client: createKubeClient(stack.kc), logger: pino({ level: 'silent' }) });
    const post = async (pod: Pod) => {
      const res = await readiness.fetch(toBinaryRequest('http://readiness.neoset-system/', resourceEvent('https://10.96.0.1:443', 'MODIFIED', pod as unknown as KubeObject)));
      return { status: res.status, body: await res.text() };
    };
    const readPod = () => stack.client.request<Pod>('GET', paths.pod(stack.namespace, POD));

    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3, image: 'mysql:8.0', updateStrategy: { maxUnavailable: 1, inPlaceUpdateStrategy: { gracePeriodSeconds: 30 } } }));
    await untilStatus(stack, NAME, '3 ready pods', (n) => n.status?.readyReplicas === 3);
    await setImage(stack, NAME, 'mysql:8.1');
    const draining = await stack.observer.until(`${POD} draining`, () => {
      const p = stack.observer.pods(NAME).find((p) => p.metadata.name === POD);
      return p && phaseOf(p) === 'Draining' && gateOf(p)?.status === 'False' ? p : undefined;
    });
    const drained = await readPod();
    expect(imageOf(drained)).toBe('mysql:8.0');

    // (a) The pod as read, its state annotation and resourceVersion removed: a running pod with no
    // update in flight and a closed gate — what readiness opens.
    const answers: { status: number; body: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const forged = structuredClone(await readPod());
      delete forged.metadata.annotations![ANNOTATION_INPLACE_STATE];
      delete forged.metadata.resourceVersion;
      answers.push(await post(forged));
      await new Promise((r) => setTimeout(r, 200));
    }

    // (b) The update claimed finished: phase Updating naming the target, the new image in spec and
    // containerStatuses with another imageID, ready — and the current resourceVersion.
    for (let i = 0; i < 3; i++) {
      const real = await readPod();
      const forged = structuredClone(real);
      const state = JSON.parse(real.metadata.annotations![ANNOTATION_INPLACE_STATE]);
      const previous = real.status!.containerStatuses![0].imageID;
      forged.metadata.annotations![ANNOTATION_INPLACE_STATE] = JSON.stringify({
        ...state,
        phase: 'Updating',
        startedAt: state.drainStartedAt,
        targetImages: { main: 'mysql:8.1' },
        previousImageIDs: { main: previous },
      });
      forged.spec.containers[0].image = 'mysql:8.1';
      forged.status!.containerStatuses = forged.status!.containerStatuses!.map((cs) => ({ ...cs, image: 'docker.io/library/mysql:8.1', imageID: 'docker.io/library/mysql@sha256:forged', ready: true }));
      answers.push(await post(forged));
      await new Promise((r) => setTimeout(r, 200));
    }
    // (c) The update claimed restarted on its new image, not ready yet — what opens the gate since
    // issue 24 (the kubelet's Ready then waits for the probe) — with the current resourceVersion.
    for (let i = 0; i < 3; i++) {
      const real = await readPod();
      const forged = structuredClone(real);
      const state = JSON.parse(real.metadata.annotations![ANNOTATION_INPLACE_STATE]);
      const previous = real.status!.containerStatuses![0].imageID;
      forged.metadata.annotations![ANNOTATION_INPLACE_STATE] = JSON.stringify({ ...state, phase: 'Updating', startedAt: state.drainStartedAt, targetImages: { main: 'mysql:8.1' }, previousImageIDs: { main: previous } });
      forged.spec.containers[0].image = 'mysql:8.1';
      forged.status!.containerStatuses = forged.status!.containerStatuses!.map((cs) => ({ ...cs, image: 'docker.io/library/mysql:8.1', imageID: 'docker.io/library/mysql@sha256:forged', ready: false }));
      answers.push(await post(forged));
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(answers).toEqual(Array(11).fill({ status: 200, body: '' }));

    // Still draining, gate closed, image not patched: the forged events changed nothing.
    await new Promise((r) => setTimeout(r, 1000));
    const after = await readPod();
    expect({ phase: phaseOf(after), gate: gateOf(after)?.status, image: imageOf(after) }).toEqual({ phase: 'Draining', gate: 'False', image: 'mysql:8.0' });

    // The rollout finishes as it would have (nothing stuck), each pod through its 30 s grace.
    const n = await untilStatus(stack, NAME, 'all 3 on the new revision', (n, pods) => n.status?.phase === 'Completed' && n.status?.updatedReplicas === 3 && pods.every((p) => settledOn(p, n.status?.updateRevision)), 150_000);
    expect(n.status?.currentImage).toBe('mysql:8.1');

    // Every state of the pod seen from the drain on: the gate never True while its old image is in
    // its spec, and the state annotation never gone before that (no update "finished" unpatched).
    const seen = states(draining);
    expect(seen.length).toBeGreaterThan(0);
    const early = seen.filter((p) => imageOf(p) === 'mysql:8.0');
    expect(early.length).toBeGreaterThan(0);
    expect.soft(early.filter((p) => gateOf(p)?.status === 'True').map((p) => `${p.metadata.resourceVersion}: gate True (${gateOf(p)?.reason})`)).toEqual([]);
    expect.soft(early.filter((p) => phaseOf(p) !== 'Draining').map((p) => `${p.metadata.resourceVersion}: phase ${phaseOf(p) ?? 'none'}`)).toEqual([]);
    expect(stack.observer.violations).toEqual([]);
  }, 240_000);
});
