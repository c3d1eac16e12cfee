// The NeoSet state gauges (SPEC §4.8, shared/metrics/state-gauges.ts) read from the real
// kube-apiserver as a Table of the CRD's printer columns: each NeoSet's replicas, ready, updated,
// phase and canary step, across namespaces and pages — and none of its spec: a NeoSet with a 1 MiB env
// value costs the scrape its columns and metadata only (what was 150 MiB for 150 of them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { createStateGauges, STATE_PAGE } from '../../shared/metrics/state-gauges.ts';
import { createTestNamespace, kubeConfig, type TestNamespace } from '../cluster/harness.ts';
import { neosetManifest } from '../e2e/stack.ts';

describe('state gauges: a Table of printer columns, paged', () => {
  let a: TestNamespace;
  let b: TestNamespace;
  let client: KubeClient;

  beforeAll(async () => {
    [a, b] = await Promise.all([createTestNamespace('gauges-a'), createTestNamespace('gauges-b')]);
    client = createKubeClient(kubeConfig());
  });
  afterAll(async () => Promise.all([a?.cleanup(), b?.cleanup()]));

  it('reports every NeoSet of every namespace, past one page, without reading their specs', async () => {
    const wide = neosetManifest({ name: 'wide', replicas: 3 }) as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } };
    wide.spec.template.spec.containers[0].env = [{ name: 'BLOB', value: 'e'.repeat(1024 * 1024 - 4096) }];
    await client.request('POST', paths.neosets(a.name), { body: wide });
    const written = await client.request<{ metadata: { resourceVersion: string } }>('GET', paths.neoset(a.name, 'wide'));
    await client.request('PATCH', paths.neosetStatus(a.name, 'wide'), {
      patch: 'merge',
      body: { metadata: { resourceVersion: written.metadata.resourceVersion }, status: { replicas: 3, readyReplicas: 2, updatedReplicas: 1, phase: 'Canary', canary: { revision: 'r2', stepIndex: 1, stepStartedAt: '2026-12-07T00:00:00Z' } } },
    });
    // More NeoSets than a page holds, in the other namespace, without a status.
    const many = STATE_PAGE + 5;
    for (let i = 0; i < many; i += 15) {
      await Promise.all(Array.from({ length: Math.min(15, many - i) }, (_, k) => client.request('POST', paths.neosets(b.name), { body: neosetManifest({ name: `n-${i + k}`, replicas: 2 }) })));
    }
    // Read from the watch cache, a moment behind the writes: the last ones may be seen a scrape later.
    const gauges = createStateGauges(client, { maxAgeMs: 0 });
    let text = '';
    await expect
      .poll(async () => {
        text = await gauges.metrics();
        return text.split('\n').filter((l) => l.startsWith('neoset_replicas{') && l.includes(b.name)).length;
      }, { timeout: 10_000, interval: 200 })
      .toBe(STATE_PAGE + 5);
    expect(text).toMatch(/^neoset_state_up 1$/m);
    const series = (metric: string, ns: string, name: string) => new RegExp(`^${metric}\\{namespace="${ns}",neoset="${name}"\\} (\\S+)$`, 'm').exec(text)?.[1];
    expect(series('neoset_replicas', a.name, 'wide')).toBe('3');
    expect(series('neoset_ready_replicas', a.name, 'wide')).toBe('2');
    expect(series('neoset_updated_replicas', a.name, 'wide')).toBe('1');
    expect(series('neoset_phase', a.name, 'wide')).toBe('1'); // Canary: the enum's second
    expect(series('neoset_canary_step', a.name, 'wide')).toBe('1');
    const inB = text.split('\n').filter((l) => l.startsWith(`neoset_replicas{namespace="${b.name}"`));
    expect(inB).toHaveLength(many);
    expect(series('neoset_replicas', b.name, 'n-0')).toBe('2');
    // No status yet: ready and updated read 0, no phase, no step.
    expect(series('neoset_ready_replicas', b.name, 'n-0')).toBe('0');
    expect(series('neoset_phase', b.name, 'n-0')).toBeUndefined();
    expect(series('neoset_canary_step', b.name, 'n-0')).toBeUndefined();
  }, 120_000);
});
