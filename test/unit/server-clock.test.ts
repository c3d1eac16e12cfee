// SPEC §2.3 "one clock": a run's `now` is the API server's, read from its responses' Date as a lower
// bound carried forward by the monotonic clock (shared/k8s/server-clock.ts), whatever the node's wall
// clock says; the real client hands each response's Date to the clock, error answers included.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { canary } from '../../bin/neoset/commands/canary.ts';
import type { Cluster } from '../../bin/neoset/cluster.ts';
import { neoset } from './plugin-fixtures.ts';
import { createApp as createReadiness } from '../../functions/readiness/app.ts';
import { API_VERSION, CONDITION_INPLACE_READY, KIND, LABEL_NEOSET_NAME } from '../../shared/api/names.ts';
import { createKubeClient, type KubeClient, type RequestOptions } from '../../shared/k8s/client.ts';
import { offsetReporter, serverClock } from '../../shared/k8s/server-clock.ts';
import { registry } from '../../shared/metrics/registry.ts';

const SERVER = Date.parse('2026-12-01T12:00:00Z');

/** An API whose every answer carries `date()` as its Date header (or none). */
function answering(date: () => string | undefined): KubeClient {
  return {
    request: async <T,>(_verb: string, _path: string, opts: RequestOptions = {}) => {
      const d = date();
      if (d !== undefined) opts.date?.(d);
      return {} as T;
    },
  };
}

describe('serverClock (SPEC §2.3)', () => {
  it("decides on the server's Date carried forward by the monotonic clock, not on a wall clock 60 s ahead", async () => {
    let mono = 1_000;
    let server = SERVER + 400; // the server's true time; its Date is truncated to the second
    const clock = serverClock(answering(() => new Date(server).toUTCString()), { wall: () => server + 60_000, monotonic: () => mono });
    expect(clock.now().getTime(), 'no Date seen yet: the wall clock stands in').toBe(SERVER + 60_400);
    await clock.client.request('GET', '/api/v1/pods');
    expect(clock.now().getTime(), 'the Date, never above the server\'s true time').toBe(SERVER);
    mono += 2_500;
    server += 2_500;
    expect(clock.now().getTime(), 'carried by the monotonic clock').toBe(SERVER + 2_500);
    await clock.client.request('GET', '/api/v1/pods'); // Date 12:00:02: a looser bound than the one held
    expect(clock.now().getTime()).toBe(SERVER + 2_500);
    mono += 700;
    server += 700; // 12:00:03.6
    await clock.client.request('GET', '/api/v1/pods'); // Date 12:00:03: tighter than 12:00:03.2 held
    expect(clock.now().getTime()).toBe(SERVER + 3_200);
    expect(clock.now().getTime()).toBeLessThanOrEqual(server);
    expect(clock.offsetSeconds()).toBeCloseTo(60.4, 5);
    expect(await registry.getSingleMetricAsString('neoset_clock_offset_seconds')).toMatch(/^neoset_clock_offset_seconds 60\.4/m);
  });

  it('ignores a Date it cannot read, and keeps the caller\'s own date callback', async () => {
    const told: string[] = [];
    const clock = serverClock(answering(() => 'not a date'), { wall: () => SERVER, monotonic: () => 0 });
    await clock.client.request('GET', '/x', { date: (d) => told.push(d) });
    expect(told).toEqual(['not a date']);
    expect(clock.now().getTime()).toBe(SERVER);
    expect(clock.offsetSeconds()).toBeNull();
  });

  it('logs a large offset at most once per period', () => {
    let mono = 0;
    const warned: number[] = [];
    const report = offsetReporter((o) => warned.push(o), 2, 60_000, () => mono);
    report(null);
    report(1.5);
    report(-61);
    mono += 30_000;
    report(61);
    mono += 31_000;
    report(62);
    expect(warned).toEqual([-61, 62]);
  });
});

describe('createKubeClient hands the Date to the clock', () => {
  let server: http.Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? (server.closeAllConnections(), server.close(() => r())) : r())));

  it('of a success and of an error answer', async () => {
    server = http.createServer((req, res) => {
      res.setHeader('Date', req.url === '/ok' ? 'Tue, 01 Dec 2026 12:00:00 GMT' : 'Tue, 01 Dec 2026 12:00:05 GMT');
      res.writeHead(req.url === '/ok' ? 200 : 404, { 'Content-Type': 'application/json' });
      res.end(req.url === '/ok' ? '{}' : '{"kind":"Status","reason":"NotFound","message":"gone"}');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const dates: string[] = [];
    const client = createKubeClient(kc);
    await client.request('GET', '/ok', { date: (d) => dates.push(d) });
    await client.request('GET', '/missing', { date: (d) => dates.push(d) }).catch(() => undefined);
    expect(dates).toEqual(['Tue, 01 Dec 2026 12:00:00 GMT', 'Tue, 01 Dec 2026 12:00:05 GMT']);
  });
});

describe('readiness stamps what it writes on the API server\'s clock', () => {
  it("a gate opened by an instance whose clock is 120 s ahead carries the GET's Date", async () => {
    const server = '2025-01-01T00:01:00Z';
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-0',
        namespace: 'default',
        uid: 'uid-web-0',
        resourceVersion: '500',
        labels: { [LABEL_NEOSET_NAME]: 'web' },
        ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: 'web', uid: 'uid-web', controller: true }],
      },
      spec: { containers: [{ name: 'main', image: 'nginx:1.0' }], readinessGates: [{ conditionType: CONDITION_INPLACE_READY }] },
      status: { phase: 'Running', conditions: [], containerStatuses: [{ name: 'main', image: 'nginx:1.0', imageID: 'sha256:a', ready: true, started: true, restartCount: 0, state: { running: {} } }] },
    };
    const written: unknown[] = [];
    const client: KubeClient = {
      request: async <T,>(verb: string, _path: string, opts: RequestOptions = {}) => {
        opts.date?.(new Date(server).toUTCString());
        if (verb !== 'GET') written.push(opts.body);
        return (verb === 'GET' ? structuredClone(pod) : { metadata: { uid: 'uid-web-0', resourceVersion: '501' } }) as T;
      },
    };
    const skewed = () => new Date(Date.parse(server) + 120_000);
    const res = await createReadiness({ client, now: skewed, logger: pino({ level: 'silent' }) }).request(
      new Request('http://readiness/', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': '1', 'ce-source': 's', 'ce-type': 'dev.knative.apiserver.resource.update' },
        body: JSON.stringify(pod),
      }),
    );
    expect(res.status).toBe(200);
    expect(JSON.stringify(written)).toContain(`"lastTransitionTime":"${server}"`);
    expect(JSON.stringify(written)).not.toContain('00:03:00');
  });
});

describe("the plugin's canary commands stamp on the API server's clock", () => {
  it("promote's stepStartedAt is the GET's Date, not the laptop's clock", async () => {
    const server = '2025-01-01T10:05:00Z';
    const steps = [{ partition: 4 }, { pause: { duration: '10m' } }, { partition: 0 }];
    const current = neoset({ updateStrategy: { canary: { steps } }, status: { observedGeneration: 2, updateRevision: 'mysql-b', currentRevision: 'mysql-a', phase: 'Canary', canary: { revision: 'mysql-b', stepIndex: 0, stepStartedAt: '2025-01-01T10:00:00Z' } } });
    const written: unknown[] = [];
    const client: KubeClient = {
      request: async <T,>(verb: string, _path: string, opts: RequestOptions = {}) => {
        opts.date?.(new Date(server).toUTCString());
        if (verb !== 'GET') written.push(opts.body);
        return structuredClone(current) as T;
      },
    };
    await canary({ client, namespace: 'default' } as Cluster, current.metadata.name, 'promote');
    expect(written).toMatchObject([{ status: { canary: { stepIndex: 1, stepStartedAt: server } } }]);
  });
});
