// Forged events are cheap (issue 19, point 7), on the real API server: a Pod event whose
// metadata.resourceVersion is one the API server will never reach (999999999999) once made each run of
// its NeoSet wait ~3 s for the watch cache, then the API server's 504. Now the reader never asks for an
// event's version: the event is answered in well under a second, and the NeoSet is still reconciled.
// The same for a NeoSet event's version, which the reader compares with the NeoSet in the watch cache
// (a cached NeoSet older than it is read from etcd, never asked for at that version).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createApp as createReconcile } from '../../functions/reconcile/app.ts';
import { resourceEvent, toBinaryRequest } from '../../dev/bridge/pump.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { applyNeoSet, patchNeoSet, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, paths, podLabelSelector, startStack, type Stack } from '../e2e/stack.ts';

const NAME = 'forged';

describe('forged events', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ prefix: 'forged' });
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 2 }));
    await untilStatus(stack, NAME, '2 ready pods', (n, pods) => n.status?.readyReplicas === 2 && pods.length === 2);
    await stack.pump.stop(); // from here on, only the events this test sends reach a function
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('a Pod event with resourceVersion 999999999999 is answered in < 1 s, and its NeoSet reconciled', async () => {
    await patchNeoSet(stack, NAME, { spec: { replicas: 3 } });
    const reconcile = createReconcile({ client: createKubeClient(stack.kc), logger: pino({ level: 'silent' }), recheck: () => {} });
    const pod = stack.observer.pods(NAME)[0];
    const forged = { ...pod, kind: 'Pod', apiVersion: 'v1', metadata: { ...pod.metadata, resourceVersion: '999999999999' } };
    const event = resourceEvent(stack.kc.getCurrentCluster()!.server, 'ADDED', forged as never);
    const began = performance.now();
    const res = await reconcile.fetch(toBinaryRequest('http://in-process/', event));
    const ms = performance.now() - began;
    console.log(JSON.stringify({ 'forged Pod event answered in (ms)': Math.round(ms) }));
    expect(res.status).toBe(200);
    expect(ms).toBeLessThan(1000);
    // The event is answered after the run it led to: the third pod is there already.
    const pods = await stack.client.request<{ items: unknown[] }>('GET', paths.pods(stack.namespace), { query: { labelSelector: podLabelSelector(NAME) } });
    expect(pods.items).toHaveLength(3);
  });

  it('a NeoSet event with resourceVersion 999999999999 is answered in < 1 s, and the NeoSet as etcd has it is reconciled', async () => {
    await patchNeoSet(stack, NAME, { spec: { replicas: 4 } });
    const reconcile = createReconcile({ client: createKubeClient(stack.kc), logger: pino({ level: 'silent' }), recheck: () => {} });
    const neoset = await stack.client.request<{ metadata: Record<string, unknown> }>('GET', paths.neoset(stack.namespace, NAME));
    const forged = { ...neoset, metadata: { ...neoset.metadata, resourceVersion: '999999999999' } };
    const event = resourceEvent(stack.kc.getCurrentCluster()!.server, 'MODIFIED', forged as never);
    const began = performance.now();
    const res = await reconcile.fetch(toBinaryRequest('http://in-process/', event));
    const ms = performance.now() - began;
    console.log(JSON.stringify({ 'forged NeoSet event answered in (ms)': Math.round(ms) }));
    expect(res.status).toBe(200);
    expect(ms).toBeLessThan(1000);
    // Decided on the NeoSet as etcd has it: its status says it saw replicas 4 (whether pod 3 is created
    // yet is OrderedReady's call).
    const after = await stack.client.request<{ metadata: { generation: number }; status?: { observedGeneration?: number } }>('GET', paths.neoset(stack.namespace, NAME));
    expect(after.status?.observedGeneration).toBe(after.metadata.generation);
  });
});
