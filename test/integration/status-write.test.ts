// A NeoSet's status write (shared/k8s/apply.ts statusPatch) on the real kube-apiserver: a JSON Patch
// of the status alone, conditional on the resourceVersion decided on (SPEC §2.0: every write
// conditional). What the API server must do with it, and a PUT of the whole NeoSet did:
//   - refuse it 409 Conflict when the NeoSet changed since it was read (another writer's status, a
//     user's edit of the spec), writing nothing;
//   - replace the status whole — a field the decision no longer sets is gone, as with a PUT;
//   - leave the spec and metadata as stored (the status subresource), whatever the status says;
//   - answer with the NeoSet, whose long strings the applier does not make (longStrings).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NeoSetStatus } from '../../shared/api/neoset.ts';
import { statusPatch } from '../../shared/k8s/apply.ts';
import { ApiError, createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { POD_LONG_STRINGS } from '../../shared/k8s/pod-trim.ts';
import { createTestNamespace, kubeConfig, type TestNamespace } from '../cluster/harness.ts';
import { neosetManifest } from '../e2e/stack.ts';

interface Stored {
  metadata: { resourceVersion: string; generation: number; annotations?: Record<string, string> };
  spec: { replicas: number; template: { spec: { containers: { env?: { value: string }[] }[] } } };
  status?: Record<string, unknown>;
}

describe('status write: a JSON Patch of the status, conditional on the resourceVersion', () => {
  let ns: TestNamespace;
  let client: KubeClient;
  const get = (name: string) => client.request<Stored>('GET', paths.neoset(ns.name, name));
  const write = (name: string, resourceVersion: string, status: NeoSetStatus) =>
    client.request<Stored>('PATCH', paths.neosetStatus(ns.name, name), { patch: 'json', body: statusPatch(resourceVersion, status), longStrings: POD_LONG_STRINGS });
  const conflictOf = (p: Promise<unknown>) => p.then(() => 'written', (err: unknown) => (err instanceof ApiError ? err.status : String(err)));

  beforeAll(async () => {
    ns = await createTestNamespace('status-write');
    client = createKubeClient(kubeConfig());
  });
  afterAll(async () => ns?.cleanup());

  it('writes the status whole on the resourceVersion read, and nothing else', async () => {
    const manifest = neosetManifest({ name: 'whole', replicas: 2 }) as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } };
    manifest.spec.template.spec.containers[0].env = [{ name: 'BLOB', value: 'e'.repeat(200 * 1024) }];
    await client.request('POST', paths.neosets(ns.name), { body: manifest });
    const read = await get('whole');
    const first = await write('whole', read.metadata.resourceVersion, { replicas: 2, readyReplicas: 1, observedGeneration: read.metadata.generation, phase: 'RollingOut' } as NeoSetStatus);
    // The answer's long value was never made: a stand-in (its length) in its place.
    expect(first.spec.template.spec.containers[0].env?.[0].value).toBe('(neoset: 204800 bytes not kept)');
    const second = await write('whole', first.metadata.resourceVersion, { replicas: 2, observedGeneration: read.metadata.generation, phase: 'Completed' } as NeoSetStatus);
    const stored = await get('whole');
    // Replaced, not merged: readyReplicas, which the second write left out, is gone.
    expect(stored.status).toEqual({ replicas: 2, observedGeneration: read.metadata.generation, phase: 'Completed' });
    expect(stored.metadata.resourceVersion).toBe(second.metadata.resourceVersion);
    expect(stored.spec.replicas).toBe(2);
    expect(stored.spec.template.spec.containers[0].env?.[0].value).toHaveLength(200 * 1024);
  });

  it('is refused 409 Conflict when the NeoSet changed since it was read, writing nothing', async () => {
    await client.request('POST', paths.neosets(ns.name), { body: neosetManifest({ name: 'raced', replicas: 1 }) });
    const read = await get('raced');
    // Another writer's status, then a user's spec edit: each makes the read stale.
    const other = await write('raced', read.metadata.resourceVersion, { replicas: 1, phase: 'RollingOut' } as NeoSetStatus);
    expect(await conflictOf(write('raced', read.metadata.resourceVersion, { replicas: 1, phase: 'Completed' } as NeoSetStatus))).toBe(409);
    await client.request('PATCH', paths.neoset(ns.name, 'raced'), { patch: 'merge', body: { spec: { replicas: 3 } } });
    expect(await conflictOf(write('raced', other.metadata.resourceVersion, { replicas: 3, phase: 'Completed' } as NeoSetStatus))).toBe(409);
    const stored = await get('raced');
    expect(stored.status).toEqual({ replicas: 1, phase: 'RollingOut' });
    expect(stored.spec.replicas).toBe(3);
  });
});
