// The seeds' walkthrough on a real kube-apiserver with the simulated kubelet: canary, pause, batches,
// completion, scale-up mid-rollout on the stable revision, and rollback — every observed state
// checked by the invariant checker (SPEC §7).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, neosetManifest, type Stack } from '../e2e/stack.ts';
import { applyNeoSet, identities, imageOf, patchNeoSet, revisionOf, setImage, setStrategy, settledOn, untilStatus } from '../e2e/helpers.ts';
import { NAME, walkthrough } from '../e2e/walkthrough.ts';
import { paths } from '../../shared/k8s/paths.ts';

walkthrough('single', {});

describe('scale-up mid-rollout and rollback', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ prefix: 'scale-rollback' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('with pods 4 and 3 on v2 and pause, scaling to 8 creates pods 5, 6, 7 on v1', async () => {
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 5, image: 'mysql:8.0' }));
    const v1 = await untilStatus(stack, NAME, '5 ready pods', (n) => n.status?.readyReplicas === 5);
    const stable = v1.status?.currentRevision;
    await setImage(stack, NAME, 'mysql:8.1', { partition: 3 });
    await untilStatus(stack, NAME, 'pods 4 and 3 on v2', (n, pods) => n.status?.updatedReplicas === 2 && pods.slice(3).every((p) => settledOn(p, n.status?.updateRevision)));
    await setStrategy(stack, NAME, { pause: true });
    await patchNeoSet(stack, NAME, { spec: { replicas: 8 } });
    const n = await untilStatus(stack, NAME, '8 ready pods', (n, pods) => n.status?.readyReplicas === 8 && pods.length === 8);
    const pods = stack.observer.pods(NAME);
    expect(pods.slice(5).map(imageOf)).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.0']);
    expect(pods.slice(5).map(revisionOf)).toEqual([stable, stable, stable]);
    expect(n.status?.updatedReplicas).toBe(2);
  });

  it('resuming with partition 0 updates them in place to v2', async () => {
    const ids = identities(stack.observer.pods(NAME));
    await setStrategy(stack, NAME, { pause: false, partition: 0 });
    const n = await untilStatus(stack, NAME, 'all 8 on v2', (n) => n.status?.phase === 'Completed' && n.status?.updatedReplicas === 8 && n.status?.readyReplicas === 8, 90_000);
    expect(identities(stack.observer.pods(NAME))).toEqual(ids);
    expect(n.status?.currentImage).toBe('mysql:8.1');
  });

  it("writing revision 1's template back reuses revision 1 and returns every pod to v1 in place", async () => {
    type Rev = { metadata: { name: string }; revision: number; data: { spec: { template: unknown } } };
    const list = await stack.client.request<{ items: Rev[] }>('GET', paths.revisions(stack.namespace));
    const first = list.items.reduce((a, b) => (a.revision < b.revision ? a : b));
    const ids = identities(stack.observer.pods(NAME));
    await patchNeoSet(stack, NAME, { spec: { template: first.data.spec.template } });
    const n = await untilStatus(stack, NAME, 'rolled back to v1', (n) => n.status?.updateRevision === first.metadata.name && n.status?.phase === 'Completed' && n.status?.updatedReplicas === 8 && n.status?.readyReplicas === 8, 90_000);
    expect(n.status?.currentImage).toBe('mysql:8.0');
    const after = await stack.client.request<{ items: Rev[] }>('GET', paths.revisions(stack.namespace));
    const highest = after.items.reduce((a, b) => (a.revision > b.revision ? a : b));
    expect(highest.metadata.name).toBe(first.metadata.name);
    expect(identities(stack.observer.pods(NAME))).toEqual(ids);
    expect(stack.observer.pods(NAME).map(imageOf)).toEqual(Array(8).fill('mysql:8.0'));
  });

  it('no invariant was violated', () => {
    expect(stack.observer.violations).toEqual([]);
  });
});
