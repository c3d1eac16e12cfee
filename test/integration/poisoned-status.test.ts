// A status can't freeze a NeoSet (issue 34, point 1; SPEC §2.5), on the real API server. Anyone with
// `patch neosets/status` (the rollout-operator role, `kubectl edit --subresource=status`) could write
// status.observedResourceVersions, which the reader used as floors unchecked: "x" or a version past
// uint64 made every list of the NeoSet's children fail (400) before decide(), so no status write could
// ever repair it; a version the API server never reaches made every read wait ~3 s for its 504.
// Now the CRD refuses what is not a version, and the reader takes a record newer than the NeoSet that
// holds it for what it is — not a floor (shared/k8s/resource-version.ts floorFrom).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createApp as createReconcile } from '../../functions/reconcile/app.ts';
import { resourceEvent, toBinaryRequest } from '../../dev/bridge/pump.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { applyNeoSet, imageOf, setImage, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, paths, startStack, type Stack } from '../e2e/stack.ts';

const NAME = 'till';

describe('a poisoned status', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ prefix: 'poisoned' });
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 2 }));
    await untilStatus(stack, NAME, '2 ready pods', (n, pods) => n.status?.readyReplicas === 2 && pods.length === 2);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("is refused by the CRD when a recorded version is not one (the issue's patch), and the NeoSet still rolls", async () => {
    const patch = JSON.stringify({ status: { observedResourceVersions: { controllerrevisions: 'x', pods: '99999999999999999999' } } });
    const r = await stack.kubectl(['patch', 'neoset', NAME, '--subresource=status', '--type=merge', '-p', patch]);
    console.log(JSON.stringify({ 'kubectl patch --subresource=status': r.code, stderr: r.stderr.trim() }));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('status.observedResourceVersions.controllerrevisions');
    expect(r.stderr).toContain('status.observedResourceVersions.pods');
    await setImage(stack, NAME, 'mysql:8.1');
    await untilStatus(stack, NAME, 'rolled to 8.1', (n, pods) => n.status?.updatedReplicas === 2 && pods.every((p) => imageOf(p) === 'mysql:8.1'), 30_000);
  });

  it('a recorded version the API server never served is no floor: a run is not held by it, and the next status write repairs it', async () => {
    // 19 digits: allowed by the CRD, past anything etcd will reach; 3 s of the watch cache's wait and a 504 per list before.
    const forged = '9223372036854775807';
    await stack.pump.stop(); // only the event this test sends reaches a function
    const poison = JSON.stringify({ status: { observedResourceVersions: { controllerrevisions: forged, pods: forged } } });
    const p = await stack.kubectl(['patch', 'neoset', NAME, '--subresource=status', '--type=merge', '-p', poison]);
    expect(p.code, p.stderr).toBe(0);
    await setImage(stack, NAME, 'mysql:8.2');
    const reconcile = createReconcile({ client: createKubeClient(stack.kc), logger: pino({ level: 'silent' }), recheck: () => {} });
    const neoset = await stack.client.request<Record<string, unknown>>('GET', paths.neoset(stack.namespace, NAME));
    const event = resourceEvent(stack.kc.getCurrentCluster()!.server, 'MODIFIED', neoset as never);
    const began = performance.now();
    const res = await reconcile.fetch(toBinaryRequest('http://in-process/', event));
    const ms = performance.now() - began;
    console.log(JSON.stringify({ 'a run of the poisoned NeoSet (ms)': Math.round(ms) }));
    expect(res.status).toBe(200);
    expect(ms).toBeLessThan(1000);
    const after = await stack.client.request<{ status?: { observedResourceVersions?: Record<string, string> } }>('GET', paths.neoset(stack.namespace, NAME));
    console.log(JSON.stringify({ 'observedResourceVersions after the run': after.status?.observedResourceVersions }));
    expect(after.status?.observedResourceVersions?.pods).not.toBe(forged);
    expect(after.status?.observedResourceVersions?.controllerrevisions).not.toBe(forged);
  });
});
