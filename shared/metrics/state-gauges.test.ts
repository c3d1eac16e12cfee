import { Hono } from 'hono';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ApiError, type KubeClient } from '../k8s/client.ts';
import { createStateGauges, mountStateGauges, READING_MAX_AGE_MS } from './state-gauges.ts';

const neosets = [
  { metadata: { name: 'mysql', namespace: 'db' }, spec: { replicas: 5 }, status: { readyReplicas: 4, updatedReplicas: 2, phase: 'RollingOut', canary: { stepIndex: 2 } } },
  { metadata: { name: 'fresh', namespace: 'default' }, spec: {} },
];

/** What kube-apiserver answers a Table LIST with (the CRD's printer columns, each row's metadata). */
function table(items: typeof neosets) {
  const columns = ['Name', 'Replicas', 'Ready', 'Updated', 'Phase', 'Current', 'Target', 'Age', 'Step'];
  type Item = { metadata: { name: string; namespace: string }; spec: { replicas?: number }; status?: { readyReplicas?: number; updatedReplicas?: number; phase?: string; canary?: { stepIndex?: number } } };
  return {
    kind: 'Table',
    columnDefinitions: columns.map((name) => ({ name })),
    rows: (items as Item[]).map((n) => ({
      // The API server defaults spec.replicas (1) before it is stored.
      cells: [n.metadata.name, n.spec.replicas ?? 1, n.status?.readyReplicas ?? null, n.status?.updatedReplicas ?? null, n.status?.phase ?? null, null, null, '1m', n.status?.canary?.stepIndex ?? null],
      object: { kind: 'PartialObjectMetadata', metadata: n.metadata },
    })),
  };
}

function stubClient(answer: () => Promise<unknown>) {
  const calls: string[] = [];
  const client: KubeClient = {
    request: async <T>(verb: string, path: string) => {
      calls.push(`${verb} ${path}`);
      return (await answer()) as T;
    },
  };
  return { client, calls };
}

describe('state gauges', () => {
  it('reports each NeoSet from one LIST per scrape', async () => {
    const { client, calls } = stubClient(async () => (table(neosets)));
    let now = 0;
    const registry = createStateGauges(client, { clock: () => now });
    const text = await registry.metrics();
    expect(calls).toEqual(['GET /apis/neo.io/v1alpha1/neosets']);
    expect(text).toContain('neoset_replicas{namespace="db",neoset="mysql"} 5');
    expect(text).toContain('neoset_ready_replicas{namespace="db",neoset="mysql"} 4');
    expect(text).toContain('neoset_updated_replicas{namespace="db",neoset="mysql"} 2');
    expect(text).toContain('neoset_phase{namespace="db",neoset="mysql"} 2');
    // No status yet: the spec default, zero counts, no phase series.
    expect(text).toContain('neoset_replicas{namespace="default",neoset="fresh"} 1');
    expect(text).toContain('neoset_ready_replicas{namespace="default",neoset="fresh"} 0');
    expect(text).not.toContain('neoset_phase{namespace="default",neoset="fresh"}');
    // §4.11: the canary step, only for a NeoSet whose status has one.
    expect(text).toContain('neoset_canary_step{namespace="db",neoset="mysql"} 2');
    expect(text).not.toContain('neoset_canary_step{namespace="default",neoset="fresh"}');
    expect(text).toContain('neoset_state_up 1');
    now += READING_MAX_AGE_MS;
    await registry.metrics();
    expect(calls).toHaveLength(2);
  });

  it('serves every scrape within a few seconds of a LIST from it: a flood of scrapes costs one LIST', async () => {
    let answer!: () => void;
    const { client, calls } = stubClient(() => new Promise((resolve) => (answer = () => resolve(table(neosets)))));
    const app = new Hono();
    mountStateGauges(app, client, new Registry());
    const flood = Array.from({ length: 50 }, () => Promise.resolve(app.request('/metrics')).then((res) => res.text()));
    await new Promise((r) => setTimeout(r, 10));
    answer();
    for (const text of await Promise.all(flood)) expect(text).toContain('neoset_replicas{namespace="db",neoset="mysql"} 5');
    expect(await (await app.request('/metrics')).text()).toContain('neoset_state_up 1');
    expect(calls).toHaveLength(1);
  });

  it('keeps at most one LIST in flight: a scrape that gave up on a slow one leaves it to the next scrapes', async () => {
    let answer!: () => void;
    const { client, calls } = stubClient(() => new Promise((resolve) => (answer = () => resolve(table(neosets)))));
    let now = 0;
    const registry = createStateGauges(client, { timeoutMs: 20, clock: () => now });
    expect(await registry.metrics()).toContain('neoset_state_up 0');
    now += 2 * READING_MAX_AGE_MS;
    expect(await registry.metrics()).toContain('neoset_state_up 0');
    expect(calls).toHaveLength(1);
    answer();
    await new Promise((r) => setTimeout(r, 0));
    expect(await registry.metrics()).toContain('neoset_state_up 1');
    expect(calls).toHaveLength(1);
  });

  it('drops a deleted NeoSet on the next scrape', async () => {
    let items = neosets;
    const { client } = stubClient(async () => table(items));
    let now = 0;
    const registry = createStateGauges(client, { clock: () => now });
    expect(await registry.metrics()).toContain('neoset="mysql"');
    items = [];
    now += READING_MAX_AGE_MS;
    expect(await registry.metrics()).not.toContain('neoset="mysql"');
  });

  it('answers without the state gauges when the API cannot be listed', async () => {
    const { client } = stubClient(async () => {
      throw new ApiError('GET', '/apis/neo.io/v1alpha1/neosets', 403, 'Forbidden', 'no');
    });
    const text = await createStateGauges(client).metrics();
    expect(text).toContain('neoset_state_up 0');
    expect(text).not.toMatch(/^neoset_replicas\{/m);
  });

  it('gives up on a LIST that does not answer in time', async () => {
    const { client } = stubClient(() => new Promise(() => {}));
    const text = await createStateGauges(client, { timeoutMs: 20 }).metrics();
    expect(text).toContain('neoset_state_up 0');
  });

  it('serves them on /metrics after the instance metrics', async () => {
    const { client } = stubClient(async () => (table(neosets)));
    const instance = new Registry();
    const app = new Hono();
    mountStateGauges(app, client, instance);
    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('neoset_phase{namespace="db",neoset="mysql"} 2');
  });
});
