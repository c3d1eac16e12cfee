// The reconcile function's HTTP contract (SPEC §2.1), through app.request — no port, no cluster.
// The first cases are answered before any API call (the client throws if one were made); the last
// ones use a fake client whose NeoSet reads fail or wait as the case needs (SPEC §2.0 coalescing).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import type { KubeClient, RequestOptions } from '../../shared/k8s/client.ts';
import { DEFAULT_RESYNC_SOURCE } from '../../shared/events/target.ts';
import { createApp } from './app.ts';

const noApi: KubeClient = {
  request: async () => {
    throw new Error('no API call expected');
  },
};
/** The version's one source (shared/version.ts reads it; read here on its own). */
const NOW = Date.parse('2025-01-01T00:00:05Z');
const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
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
    expect(await res.json()).toEqual({ status: 'ok', function: 'reconcile', version: packageVersion });
  });

  it('serves Prometheus metrics, with neoset_build_info', async () => {
    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('neoset_reconcile_total');
    expect(text).toContain(`neoset_build_info{version="${packageVersion}",function="reconcile",node="${process.versions.node}"} 1`);
  });

  it('answers an empty 200 to an event about a pod that is not a NeoSet pod', async () => {
    const res = await app.request('/', ce('dev.knative.apiserver.resource.update', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'default' } }));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('answers an empty 200 to a resync tick from anything but the configured PingSource, without an API call (SPEC §2.3)', async () => {
    const forged = { method: 'POST', headers: { 'ce-specversion': '1.0', 'ce-id': 'f1', 'ce-source': 'curl', 'ce-type': 'dev.knative.sources.ping', 'content-type': 'application/json' }, body: '{}' };
    const res = await app.request('/', forged);
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

  it('answers 503 when a pod LIST fails while the NeoSet GET is in flight, leaving no rejection unhandled (issue 19: that ended the process)', async () => {
    const { ApiError } = await import('../../shared/k8s/client.ts');
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const template = { metadata: { labels: { app: 'mysql' } }, spec: { containers: [{ name: 'db', image: 'mysql:8.0' }] } };
      const slowGet: KubeClient = {
        request: async <T,>(verb: string, path: string): Promise<T> => {
          if (path.endsWith('/pods')) throw new ApiError(verb, path, 500, 'InternalError', 'etcd is down');
          if (path.endsWith('/controllerrevisions')) return { items: [] } as T;
          await new Promise((r) => setTimeout(r, 30)); // the NeoSet GET: the pod LIST has failed meanwhile
          return { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', metadata: { name: 'mysql', namespace: 'default', uid: 'u1', resourceVersion: '5', generation: 1 }, spec: { replicas: 1, selector: { matchLabels: { app: 'mysql' } }, template } } as T;
        },
      };
      const res = await createApp({ client: slowGet, logger: pino({ level: 'silent' }), recheck: () => {} }).request('/', ce('dev.knative.apiserver.resource.add', { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', metadata: { name: 'mysql', namespace: 'default' } }));
      expect(res.status).toBe(503);
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });

  it('answers 503 too when naming the event\'s NeoSets fails transiently (a resync tick\'s LIST), 500 for a bug', async () => {
    const { ApiError } = await import('../../shared/k8s/client.ts');
    const tick = { method: 'POST', headers: { 'ce-specversion': '1.0', 'ce-id': 't1', 'ce-source': DEFAULT_RESYNC_SOURCE, 'ce-type': 'dev.knative.sources.ping', 'content-type': 'application/json' }, body: '{}' };
    const overloaded: KubeClient = { request: async () => { throw new ApiError('GET', '/apis/neo.io/v1alpha1/neosets', 429, 'TooManyRequests', 'slow down'); } };
    expect((await createApp({ client: overloaded, logger: pino({ level: 'silent' }) }).request('/', tick)).status).toBe(503);
    const refused: KubeClient = { request: async () => { throw new ApiError('GET', '/apis/neo.io/v1alpha1/neosets', 403, 'Forbidden', 'no'); } };
    expect((await createApp({ client: refused, logger: pino({ level: 'silent' }) }).request('/', tick)).status).toBe(500);
  });

  it('a resync tick answers 200 even when a NeoSet fails (it waits for the next tick), while that NeoSet\'s own event answers 503', async () => {
    const { ApiError } = await import('../../shared/k8s/client.ts');
    const tick = { method: 'POST', headers: { 'ce-specversion': '1.0', 'ce-id': 't2', 'ce-source': DEFAULT_RESYNC_SOURCE, 'ce-type': 'dev.knative.sources.ping', 'content-type': 'application/json' }, body: '{}' };
    const reads: string[] = [];
    const client: KubeClient = {
      request: async <T,>(verb: string, path: string): Promise<T> => {
        if (path === '/apis/neo.io/v1alpha1/neosets') return { items: ['a', 'flaky', 'b'].map((name) => ({ metadata: { namespace: 'default', name } })) } as T;
        if (path.endsWith('/pods') || path.endsWith('/controllerrevisions')) return { items: [] } as T;
        reads.push(path);
        if (path.endsWith('/neosets/flaky')) throw new ApiError(verb, path, 503, 'ServiceUnavailable', 'etcd leader changed');
        throw new ApiError(verb, path, 404, 'NotFound', 'gone');
      },
    };
    const app = createApp({ client, logger: pino({ level: 'silent' }), recheck: () => {} });
    const res = await app.request('/', tick);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    // Each NeoSet read from the watch cache; one it does not hold (404) from etcd as well.
    expect([...new Set(reads)].sort()).toEqual(['a', 'b', 'flaky'].map((n) => `/apis/neo.io/v1alpha1/namespaces/default/neosets/${n}`));
    const own = await app.request('/', ce('dev.knative.apiserver.resource.update', { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', metadata: { name: 'flaky', namespace: 'default' } }));
    expect(own.status).toBe(503);
  });

  it('events arriving during a reconcile share one follow-up, whose transient failure answers each of them 503', async () => {
    const { ApiError } = await import('../../shared/k8s/client.ts');
    const podEvent = (i: number) => {
      const r = ce('dev.knative.apiserver.resource.update', { apiVersion: 'v1', kind: 'Pod', metadata: { name: `db-${i}`, namespace: 'default', labels: { 'neoset.neo.io/name': 'db' } } });
      return { ...r, headers: { ...r.headers, 'ce-id': `p${i}` } };
    };
    let release!: () => void;
    const firstRunHeld = new Promise<void>((r) => (release = r));
    let neosetReads = 0;
    const client: KubeClient = {
      request: async <T,>(verb: string, path: string, opts?: RequestOptions): Promise<T> => {
        if (path.endsWith('/pods') || path.endsWith('/controllerrevisions')) return { items: [] } as T;
        // A run reads the NeoSet from the watch cache first (counted), and from etcd when the cache has none.
        if (opts?.query?.resourceVersion === '0') neosetReads++;
        // Run 1 finds the NeoSet gone (200), once the test lets it go; the follow-up meets an overloaded API server (503).
        if (neosetReads === 1) {
          await firstRunHeld;
          throw new ApiError(verb, path, 404, 'NotFound', 'gone');
        }
        throw new ApiError(verb, path, 429, 'TooManyRequests', 'slow down');
      },
    };
    const covered: { eventId: string; arrivedAt: number; startedAt: number }[] = [];
    const app = createApp({ client, logger: pino({ level: 'silent' }), recheck: () => {}, onCovered: (c) => covered.push(c) });
    const first = app.request('/', podEvent(0));
    await new Promise((r) => setTimeout(r, 50));
    const rest = [1, 2, 3, 4].map((i) => app.request('/', podEvent(i)));
    await new Promise((r) => setTimeout(r, 50));
    release();
    expect((await first).status).toBe(200);
    expect((await Promise.all(rest)).map((r) => r.status)).toEqual([503, 503, 503, 503]);
    expect(neosetReads).toBe(2);
    // p1..p4 are answered by one run, which started after each of them arrived.
    const byId = Object.fromEntries(covered.map((c) => [c.eventId, c]));
    const followUp = new Set(['p1', 'p2', 'p3', 'p4'].map((id) => byId[id].startedAt));
    expect(followUp.size).toBe(1);
    expect(byId.p0.startedAt).toBeLessThan([...followUp][0]);
    for (const c of covered) expect(c.startedAt).toBeGreaterThan(c.arrivedAt);
  });

  it('lists the pods not older than the newest Pod of the events a run covers, without ever asking for that version (snapshot-reader.ts)', async () => {
    const podEvent = (i: number, resourceVersion: string) => {
      const r = ce('dev.knative.apiserver.resource.update', { apiVersion: 'v1', kind: 'Pod', metadata: { name: `db-${i}`, namespace: 'default', resourceVersion, labels: { 'neoset.neo.io/name': 'db' } } });
      return { ...r, headers: { ...r.headers, 'ce-id': `p${i}` } };
    };
    let release!: () => void;
    const firstRunHeld = new Promise<void>((r) => (release = r));
    const listedAt: unknown[] = [];
    let reads = 0;
    const client: KubeClient = {
      request: async <T,>(verb: string, path: string, opts?: { query?: Record<string, unknown> }): Promise<T> => {
        if (verb !== 'GET') return {} as T; // the writes a NeoSet of no replicas leads to (its status)
        if (path.endsWith('/pods')) listedAt.push(opts?.query?.resourceVersion);
        // The watch cache is at 9500; a consistent list (no resourceVersion) at etcd's present. Either is
        // newer than the lists the status records: kept, not listed again.
        if (path.endsWith('/pods') || path.endsWith('/controllerrevisions')) return { metadata: { resourceVersion: opts?.query?.resourceVersion === undefined ? '20000' : '9500' }, items: [] } as T;
        if (++reads === 1) await firstRunHeld;
        const template = { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'mysql:8.0' }] } };
        const status = { observedResourceVersions: { pods: '1', controllerrevisions: '1' } };
        return { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', metadata: { name: 'db', namespace: 'default', uid: 'u1', resourceVersion: '100', generation: 1 }, spec: { replicas: 0, selector: { matchLabels: { app: 'db' } }, template }, status } as T;
      },
    };
    const app = createApp({ client, logger: pino({ level: 'silent' }), recheck: () => {} });
    const first = app.request('/', podEvent(0, '150'));
    await new Promise((r) => setTimeout(r, 20));
    // The first run's event (150) is in the cache's list. The follow-up covers the newest of 120, 9000
    // and 10000 (compared as numbers: as strings 9000 would win), which the cache has not shown: a
    // consistent list — never one asked not to be older than 10000, which anyone can write in an event.
    const rest = [podEvent(1, '120'), podEvent(2, '9000'), podEvent(3, '10000')].map((e) => app.request('/', e));
    await new Promise((r) => setTimeout(r, 20));
    release();
    await first;
    await Promise.all(rest);
    expect(listedAt).toEqual(['0', '0', undefined]);
    // A replayed or hand-written event's resourceVersion that is not one (KEP-5504): not asked for.
    listedAt.length = 0;
    expect((await app.request('/', podEvent(5, 'abc'))).status).toBe(200);
    expect(listedAt).toEqual(['0']);
  });

  it("answers an event only once its run's Events are posted (they no longer hold the NeoSet's slot)", async () => {
    let releaseEvents!: () => void;
    const eventsHeld = new Promise<void>((r) => (releaseEvents = r));
    const posted: string[] = [];
    const template = { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'mysql:8.0' }] } };
    const client: KubeClient = {
      request: async <T,>(verb: string, path: string, opts?: { body?: unknown }): Promise<T> => {
        if (verb === 'POST' && path.endsWith('/events')) {
          await eventsHeld;
          posted.push(path);
          return {} as T;
        }
        if (verb !== 'GET') return { metadata: { resourceVersion: '200', ...(opts?.body as { metadata?: object })?.metadata } } as T;
        if (path.endsWith('/pods') || path.endsWith('/controllerrevisions')) return { metadata: { resourceVersion: '5' }, items: [] } as T;
        const status = { observedResourceVersions: { pods: '1', controllerrevisions: '1' } };
        return { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', metadata: { name: 'db', namespace: 'default', uid: 'u1', resourceVersion: '100', generation: 1 }, spec: { replicas: 1, selector: { matchLabels: { app: 'db' } }, template }, status } as T;
      },
    };
    const app = createApp({ client, logger: pino({ level: 'silent' }), recheck: () => {} });
    let answered = false;
    const neosetEvent = ce('dev.knative.apiserver.resource.update', { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', metadata: { name: 'db', namespace: 'default' } });
    const res = Promise.resolve(app.request('/', neosetEvent)).then((r) => ((answered = true), r));
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false); // its pod and revision are created; the Event about them is still in flight
    releaseEvents();
    expect((await res).status).toBe(200);
    expect(posted.length).toBeGreaterThan(0);
  });
});

describe('events reconcile leaves alone (shared/core/event-relevance.ts)', () => {
  const owner = { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'web', uid: 'u1', controller: true };
  const pod = (annotations: Record<string, string>, conditions: { type: string; status: string }[], extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-1', namespace: 'default', labels: { 'neoset.neo.io/name': 'web' }, ownerReferences: [owner], annotations, ...extra },
    spec: { containers: [{ name: 'app', image: 'nginx:2' }] },
    status: { phase: 'Running', conditions },
  });
  const state = { 'neoset.neo.io/inplace-update-state': JSON.stringify({ revision: 'web-2', phase: 'Updating', drainStartedAt: '2025-01-01T00:00:00Z' }) };
  const gateOpen = [{ type: 'InPlaceUpdateReady', status: 'True' }, { type: 'ContainersReady', status: 'True' }, { type: 'Ready', status: 'False' }];

  it('an update in flight, or a gate just opened whose Ready the kubelet has yet to set: 200, no API call', async () => {
    for (const p of [pod(state, []), pod({}, gateOpen)]) {
      const res = await app.request('/', ce('dev.knative.apiserver.resource.update', p));
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('');
    }
  });

  it('everything else is reconciled: Ready, deleting, crashed containers, no owner, a delete event', async () => {
    const { podEventCanSkip: reconcileCanSkip } = await import('../../shared/core/event-relevance.ts');
    expect(reconcileCanSkip(pod(state, []) as never, NOW)).toBe('in-place update in flight');
    expect(reconcileCanSkip(pod({}, gateOpen) as never, NOW)).toBe('gate open, Ready pending');
    expect(reconcileCanSkip(pod({}, [{ type: 'InPlaceUpdateReady', status: 'True' }, { type: 'Ready', status: 'True' }]) as never, NOW)).toBeNull();
    expect(reconcileCanSkip(pod({}, [{ type: 'InPlaceUpdateReady', status: 'True' }, { type: 'ContainersReady', status: 'False' }, { type: 'Ready', status: 'False' }]) as never, NOW)).toBeNull();
    expect(reconcileCanSkip(pod(state, [], { deletionTimestamp: '2025-01-01T00:00:00Z' }) as never, NOW)).toBeNull();
    expect(reconcileCanSkip(pod(state, [], { ownerReferences: [] }) as never, NOW)).toBeNull();
    // §4.9: a resize that cannot be done fails the rollout, from this very event.
    const refused = { 'neoset.neo.io/inplace-update-state': JSON.stringify({ revision: 'web-2', phase: 'Updating', drainStartedAt: '2025-01-01T00:00:00Z', resizeRefused: 'node didn\'t have enough allocatable resources' }) };
    expect(reconcileCanSkip(pod(refused, []) as never, NOW)).toBeNull();
    expect(reconcileCanSkip(pod(state, [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' } as never]) as never, NOW)).toBeNull();
    expect(reconcileCanSkip(pod(state, [{ type: 'PodResizePending', status: 'True', reason: 'Deferred' } as never]) as never, NOW)).toBe('in-place update in flight');
    const failed = pod(state, []);
    failed.status.phase = 'Failed';
    expect(reconcileCanSkip(failed as never, NOW)).toBeNull();
    // Reference mode and deletes carry no object: reconciled (the noApi client makes that an error).
    const res = await app.request('/', ce('dev.knative.apiserver.resource.delete', pod(state, [])));
    expect(res.status).not.toBe(200);
  });
});

describe('NeoSet events reconcile leaves alone', () => {
  const neoset = (generation: number, observed?: number) => ({
    apiVersion: 'neo.io/v1alpha1',
    kind: 'NeoSet',
    metadata: { name: 'web', namespace: 'default', generation },
    ...(observed !== undefined ? { status: { observedGeneration: observed } } : {}),
  });

  it('an update whose generation is already decided (a status write\'s echo): 200, no API call', async () => {
    const res = await app.request('/', ce('dev.knative.apiserver.resource.update', neoset(3, 3)));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('a new generation, a NeoSet never decided on, or an add is reconciled (the noApi client makes that an error)', async () => {
    for (const [type, data] of [
      ['update', neoset(4, 3)],
      ['update', neoset(1)],
      ['add', neoset(3, 3)],
    ] as const) {
      const res = await app.request('/', ce(`dev.knative.apiserver.resource.${type}`, data));
      expect(res.status, `${type} ${JSON.stringify(data.metadata)}`).toBe(500);
    }
  });
});
