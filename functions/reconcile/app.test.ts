// The reconcile function's HTTP contract (SPEC §2.1), through app.request — no port, no cluster.
// Every case here is answered before any API call; the client throws if one were made.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { createApp } from './app.ts';

const noApi: KubeClient = {
  request: async () => {
    throw new Error('no API call expected');
  },
};
const app = createApp({ client: noApi, logger: pino({ level: 'silent' }) });
const ce = (type: string, data: unknown) => ({
  method: 'POST',
  headers: { 'ce-specversion': '1.0', 'ce-id': 'x1', 'ce-source': 'https://10.96.0.1:443', 'ce-type': type, 'content-type': 'application/json' },
  body: JSON.stringify(data),
});

describe('reconcile function HTTP contract', () => {
  it('serves /healthz', async () => {
    const res = await app.request('/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', function: 'reconcile' });
  });

  it('serves Prometheus metrics', async () => {
    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('neoset_reconcile_total');
  });

  it('answers an empty 200 to an event about a pod that is not a NeoSet pod', async () => {
    const res = await app.request('/', ce('dev.knative.apiserver.resource.update', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'default' } }));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('answers 400 with a JSON error naming the problem for a malformed event', async () => {
    const res = await app.request('/', ce('dev.knative.apiserver.resource.update', { kind: 'Pod' }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/data\.apiVersion|data\.metadata/);
  });

  it('answers 400 for a body that is not a CloudEvent at all', async () => {
    const res = await app.request('/', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/CloudEvent/);
  });

  it('answers 503 (redeliver) when the API server cannot be reached', async () => {
    const { ApiError } = await import('../../shared/k8s/client.ts');
    const down: KubeClient = { request: async () => { throw new ApiError('GET', '/x', 0, 'ConnectionFailed', 'ECONNREFUSED'); } };
    const res = await createApp({ client: down, logger: pino({ level: 'silent' }) }).request('/', ce('dev.knative.apiserver.resource.update', { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', metadata: { name: 'mysql', namespace: 'default' } }));
    expect(res.status).toBe(503);
  });

  it('answers 503 too when naming the event\'s NeoSets fails transiently (a resync tick\'s LIST), 500 for a bug', async () => {
    const { ApiError } = await import('../../shared/k8s/client.ts');
    const tick = { method: 'POST', headers: { 'ce-specversion': '1.0', 'ce-id': 't1', 'ce-source': '/apis/v1/namespaces/knative-eventing/pingsources/neoset-resync', 'ce-type': 'dev.knative.sources.ping', 'content-type': 'application/json' }, body: '{}' };
    const overloaded: KubeClient = { request: async () => { throw new ApiError('GET', '/apis/neo.io/v1alpha1/neosets', 429, 'TooManyRequests', 'slow down'); } };
    expect((await createApp({ client: overloaded, logger: pino({ level: 'silent' }) }).request('/', tick)).status).toBe(503);
    const refused: KubeClient = { request: async () => { throw new ApiError('GET', '/apis/neo.io/v1alpha1/neosets', 403, 'Forbidden', 'no'); } };
    expect((await createApp({ client: refused, logger: pino({ level: 'silent' }) }).request('/', tick)).status).toBe(500);
  });
});
