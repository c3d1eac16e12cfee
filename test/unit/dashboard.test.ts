// The dashboard's hono app without a cluster (app.request, STYLE §1): who may talk to it, what its
// buttons write and answer, and what the page is told about a NeoSet mid-rollout.
import { describe, expect, it } from 'vitest';
import { dashboardApp, MAX_STREAMS } from '../../bin/neoset/dashboard/app.ts';
import { ownHost } from '../../bin/neoset/dashboard/guard.ts';
import type { Store } from '../../bin/neoset/dashboard/store.ts';
import { detail, summaries } from '../../bin/neoset/dashboard/view.ts';
import type { EventObject, PodObject, RevisionObject } from '../../bin/neoset/dashboard/wire.ts';
import type { KubeClient, RequestOptions } from '../../shared/k8s/client.ts';
import { neoset, revision } from './plugin-fixtures.ts';

const HOST = '127.0.0.1:3100';
const ORIGIN = `http://${HOST}`;
const TOKEN = 'kA3d0V5mT9qWcYxZ1bN7eR2uI8oP4sLgHjFfDvBn6aQ';
/** What this dashboard's own page sends with every request: its Host and the cookie of the run. */
const OURS = { host: HOST, cookie: `neoset-dashboard-3100=${TOKEN}` };

function pod(ordinal: number, rev: string, extra: { ready?: boolean; annotations?: Record<string, string>; labels?: Record<string, string>; restarts?: number } = {}): PodObject {
  return {
    metadata: {
      name: `mysql-${ordinal}`,
      namespace: 'db',
      labels: { 'neoset.neo.io/name': 'mysql', 'controller-revision-hash': rev, ...extra.labels },
      annotations: extra.annotations,
      ownerReferences: [{ kind: 'NeoSet', uid: 'uid-1', controller: true }],
    },
    spec: { containers: [{ name: 'main', image: rev === 'mysql-rev2' ? 'mysql:8.1' : 'mysql:8.0' }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: extra.ready === false ? 'False' : 'True' }],
      containerStatuses: [{ name: 'main', ready: extra.ready !== false, restartCount: extra.restarts ?? 0 }],
    },
  };
}

const midRollout = neoset({
  updateStrategy: { partition: 3, maxUnavailable: 1 },
  status: { phase: 'Canary', currentRevision: 'mysql-rev1', updateRevision: 'mysql-rev2', currentUpdatePods: ['mysql-3'], replicas: 5, readyReplicas: 4, updatedReplicas: 1 },
});
const inDb = (r: ReturnType<typeof revision>, creationTimestamp: string): RevisionObject => ({ ...r, metadata: { ...r.metadata, namespace: 'db', creationTimestamp } });
const revisions = [inDb(revision(1, 'mysql:8.0', 'first'), '2025-01-01T00:00:00Z'), inDb(revision(2, 'mysql:8.1'), '2025-01-02T00:00:00Z')];
const updating = JSON.stringify({ revision: 'mysql-rev2', phase: 'Updating', generation: 2, drainStartedAt: '2025-01-02T00:00:00Z' });
const pods = [
  pod(4, 'mysql-rev2', { restarts: 1 }),
  pod(0, 'mysql-rev1'),
  pod(1, 'mysql-rev1'),
  pod(2, 'mysql-rev1', { labels: { 'neoset.neo.io/lifecycle-state': 'PreparingUpdate' } }),
  pod(3, 'mysql-rev2', { ready: false, annotations: { 'neoset.neo.io/inplace-update-state': updating } }),
];
const event = (name: string, kind: string, object: string, at: string): EventObject => ({
  metadata: { name, namespace: 'db' },
  involvedObject: { kind, name: object, namespace: 'db' },
  type: 'Normal',
  reason: name,
  message: name,
  lastTimestamp: at,
});
const events = [event('InPlaceUpdateStarted', 'NeoSet', 'mysql', '2025-01-02T00:00:02Z'), event('Scheduled', 'Pod', 'mysql-3', '2025-01-02T00:00:01Z'), event('Other', 'Pod', 'mysql-extra-0', '2025-01-02T00:00:03Z')];

function fakeStore(): Store {
  return {
    ready: Promise.resolve(),
    neosets: () => [midRollout],
    pods: () => pods,
    revisions: () => revisions,
    events: () => events,
    problems: () => [],
    subscribe: () => () => {},
    stop: () => {},
  };
}

/** An API server holding one NeoSet: GET answers it, PATCH is recorded (409 when `conflict`). */
function fakeClient(opts: { conflict?: boolean } = {}) {
  const patches: RequestOptions[] = [];
  const client: KubeClient = {
    async request<T>(verb: string, _path: string, o: RequestOptions = {}) {
      if (verb === 'GET') return structuredClone(midRollout) as T;
      if (opts.conflict) {
        const { ApiError } = await import('../../shared/k8s/client.ts');
        throw new ApiError(verb, _path, 409, 'Conflict', 'the object has been modified');
      }
      patches.push(o);
      return {} as T;
    },
  };
  return { client, patches };
}

function app(opts: { readOnly?: boolean; conflict?: boolean; namespace?: string } = {}) {
  const { client, patches } = fakeClient(opts);
  const a = dashboardApp({
    store: fakeStore(),
    cluster: { client, namespace: 'db' },
    namespace: 'namespace' in opts ? opts.namespace : 'db',
    readOnly: opts.readOnly ?? false,
    isOwnHost: ownHost('127.0.0.1', () => 3100),
    token: TOKEN,
    port: () => 3100,
    closing: new AbortController().signal,
  });
  return { app: a, patches };
}

/** An answer of the app: {error} or {message}, or the page state. */
const json = async (res: Response) => (await res.json()) as { error?: string; message?: string; actions: { id: string; confirm: string }[] };

const post = (path: string, headers: Record<string, string> = { ...OURS, origin: ORIGIN, 'content-type': 'application/json' }, body = '{}') =>
  new Request(`http://${HOST}${path}`, { method: 'POST', headers, body });

describe('who may talk to the dashboard', () => {
  it('serves the page to its own Host, unframeable and loading only its own files', async () => {
    const res = await app().app.request('/', { headers: OURS });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await res.text()).toContain('<script type="module" src="/app.js"></script>');
  });

  it.each(['evil.example:3100', 'evil.example', '127.0.0.1:3101', ''])('refuses the Host %j (DNS rebinding)', async (host) => {
    const res = await app().app.request('/api/state', { headers: host ? { host } : {} });
    expect(res.status).toBe(403);
    expect((await json(res)).error).toMatch(/^refused: Host/);
  });

  it('refuses a write from another origin, without an origin, or not as JSON', async () => {
    const { app: a, patches } = app();
    const cross = await a.request(post('/api/neosets/db/mysql/pause', { ...OURS, origin: 'http://evil.example', 'content-type': 'application/json' }));
    expect(cross.status).toBe(403);
    expect(await cross.json()).toEqual({ error: `refused: a write from origin "http://evil.example", not this dashboard's page` });
    expect((await a.request(post('/api/neosets/db/mysql/pause', { ...OURS, 'content-type': 'application/json' }))).status).toBe(403);
    expect((await a.request(post('/api/neosets/db/mysql/pause', { ...OURS, origin: ORIGIN, 'content-type': 'text/plain' }))).status).toBe(415);
    expect(patches).toEqual([]);
  });

  it('knows its own names: loopback names when listening on loopback; IP literals, never DNS names, when on every address', () => {
    const loopback = ownHost('127.0.0.1', () => 3100);
    expect(['127.0.0.1:3100', 'localhost:3100', '[::1]:3100'].map(loopback)).toEqual([true, true, true]);
    expect(['192.168.1.5:3100', 'example.com:3100', 'localhost'].map(loopback)).toEqual([false, false, false]);
    const any = ownHost('0.0.0.0', () => 80);
    expect(['192.168.1.5', '10.0.0.1:80', 'localhost', 'attacker.example', '[fe80::1]'].map(any)).toEqual([true, true, true, false, true]);
    const one = ownHost('192.168.1.5', () => 3100);
    expect(['192.168.1.5:3100', '127.0.0.1:3100'].map(one)).toEqual([true, false]);
  });
});

describe("this run's token (SPEC §2.3)", () => {
  const page = () => new Request(`http://${HOST}/`, { headers: { host: HOST } });
  const withCookie = (value: string, name = 'neoset-dashboard-3100') => ({ host: HOST, cookie: `${name}=${value}` });
  const requests: [string, (headers: Record<string, string>) => Request][] = [
    ['the page', (h) => new Request(`http://${HOST}/`, { headers: h })],
    ['a page file', (h) => new Request(`http://${HOST}/app.js`, { headers: h })],
    ['the state', (h) => new Request(`http://${HOST}/api/state`, { headers: h })],
    ['the live stream', (h) => new Request(`http://${HOST}/api/stream`, { headers: h })],
    ['a button', (h) => post('/api/neosets/db/mysql/pause', { origin: ORIGIN, 'content-type': 'application/json', ...h })],
  ];
  const wrong: [string, Record<string, string>][] = [
    ['no token', { host: HOST }],
    ['a wrong cookie', withCookie(`${TOKEN.slice(0, -1)}x`)],
    ['a cookie of the right value for another port', withCookie(TOKEN, 'neoset-dashboard-3101')],
    ['an empty cookie', withCookie('')],
    ['a wrong bearer token', { host: HOST, authorization: 'Bearer nope' }],
    ['the token as a Basic password', { host: HOST, authorization: `Basic ${TOKEN}` }],
  ];

  it.each(requests)('%s: refused (401) without the token, with a wrong one or with another port\'s cookie; nothing written', async (what, request) => {
    for (const [, headers] of wrong) {
      const { app: a, patches } = app();
      const res = await a.request(request(headers));
      expect(res.status, `${what} with ${JSON.stringify(headers)}`).toBe(401);
      if (what === 'the page' || what === 'a page file') {
        expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
        expect(await res.text()).toMatch(/open the URL `kubectl neoset dashboard` printed \(it ends in \?token=/);
      } else {
        expect((await json(res)).error).toMatch(/^refused: this dashboard's token is missing or wrong/);
      }
      expect(patches).toEqual([]);
    }
  });

  it('the report\'s forged write (Origin equal to the Host, JSON, no token) is refused and writes nothing', async () => {
    const { app: a, patches } = app();
    const res = await a.request(post('/api/neosets/db/mysql/pause', { host: HOST, origin: ORIGIN, 'content-type': 'application/json' }));
    expect(res.status).toBe(401);
    expect(patches).toEqual([]);
  });

  it('the printed URL answers the page and sets an HttpOnly, SameSite=Strict cookie named for the port, not to be cached', async () => {
    const res = await app().app.request(new Request(`http://${HOST}/?token=${TOKEN}`, { headers: { host: HOST } }));
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toBe(`neoset-dashboard-3100=${TOKEN}; Path=/; HttpOnly; SameSite=Strict`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    // No Referer carries it anywhere.
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await res.text()).toContain('<script type="module" src="/app.js"></script>');
    // The same for a script asking for the state with it.
    const state = await app().app.request(new Request(`http://${HOST}/api/state?neoset=db%2Fmysql&token=${TOKEN}`, { headers: { host: HOST } }));
    expect(state.status).toBe(200);
    expect(state.headers.get('set-cookie')).toMatch(/^neoset-dashboard-3100=/);
  });

  it('a wrong token in the URL sets no cookie', async () => {
    const res = await app().app.request(new Request(`http://${HOST}/?token=${TOKEN}x`, { headers: { host: HOST } }));
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
  });

  it('with the cookie (or the token as a bearer header, for scripts): the page, its files and the state', async () => {
    const a = app().app;
    for (const path of ['/', '/app.js', '/api/state']) {
      expect((await a.request(path, { headers: OURS })).status, path).toBe(200);
      expect((await a.request(path, { headers: { host: HOST, authorization: `Bearer ${TOKEN}` } })).status, path).toBe(200);
    }
    // A stale cookie of an earlier run on this port does not spoil a good header.
    expect((await a.request('/api/state', { headers: { ...withCookie('old'), authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect((await a.request(page())).status).toBe(401);
  });

  it('a write needs the Origin of this server too: the cookie goes along from any port of 127.0.0.1 (the same site)', async () => {
    const { app: a, patches } = app();
    for (const origin of ['http://127.0.0.1:8080', 'http://localhost:3100', 'https://127.0.0.1:3100', 'null', `${ORIGIN}/`]) {
      const res = await a.request(post('/api/neosets/db/mysql/pause', { ...OURS, origin, 'content-type': 'application/json' }));
      expect(res.status, origin).toBe(403);
    }
    expect(patches).toEqual([]);
    expect((await a.request(post('/api/neosets/db/mysql/pause'))).status).toBe(200);
  });

  it(`at most ${MAX_STREAMS} live streams at once; a closed one frees its place`, async () => {
    const a = app().app;
    const open: Response[] = [];
    for (let i = 0; i < MAX_STREAMS; i++) open.push(await a.request('/api/stream', { headers: OURS }));
    expect(open.map((r) => r.status)).toEqual(Array(MAX_STREAMS).fill(200));
    const over = await a.request('/api/stream', { headers: OURS });
    expect(over.status).toBe(503);
    expect(over.headers.get('retry-after')).toBe('5');
    expect((await json(over)).error).toMatch(/live streams are open already/);
    await open.pop()!.body!.cancel();
    await expect.poll(async () => {
      const again = await a.request('/api/stream', { headers: OURS });
      if (again.status === 200) open.push(again);
      return again.status;
    }).toBe(200);
    await Promise.all(open.map((r) => r.body!.cancel()));
  });
});

describe('the buttons', () => {
  it('pause writes what the CLI writes, conditional on the resourceVersion read, and answers its message', async () => {
    const { app: a, patches } = app();
    const res = await a.request(post('/api/neosets/db/mysql/pause'));
    expect(await res.json()).toEqual({ message: 'neoset.neo.io/mysql paused' });
    expect(patches).toEqual([{ patch: 'merge', body: { metadata: { resourceVersion: '42' }, spec: { updateStrategy: { pause: true } } } }]);
  });

  it('promote lowers the partition by one batch; resume of a running rollout says it is not paused', async () => {
    const { app: a, patches } = app();
    expect(await (await a.request(post('/api/neosets/db/mysql/promote'))).json()).toEqual({ message: 'neoset.neo.io/mysql promoted: partition 3 -> 2' });
    expect(await (await a.request(post('/api/neosets/db/mysql/resume'))).json()).toEqual({ message: 'neoset.neo.io/mysql is not paused' });
    expect(patches).toHaveLength(1);
  });

  it('a lost race is 409 with the CLI message; a missing revision 404; a bad body 400', async () => {
    const conflict = await app({ conflict: true }).app.request(post('/api/neosets/db/mysql/pause'));
    expect(conflict.status).toBe(409);
    expect((await json(conflict)).error).toBe('neoset.neo.io/mysql was changed by someone else while this command ran; nothing was written: run it again');
    const bad = await app().app.request(post('/api/neosets/db/mysql/undo', undefined, '{"revision": "one"}'));
    expect(bad.status).toBe(400);
    expect((await json(bad)).error).toMatch(/^invalid request body at revision: /);
  });

  it('refuses every write when read-only, an unknown action, and a namespace it does not show', async () => {
    const ro = app({ readOnly: true });
    expect((await ro.app.request(post('/api/neosets/db/mysql/pause'))).status).toBe(403);
    expect((await json(await ro.app.request('/api/state', { headers: OURS }))).actions).toEqual([]);
    expect((await app().app.request(post('/api/neosets/db/mysql/explode'))).status).toBe(404);
    const other = await app().app.request(post('/api/neosets/prod/mysql/pause'));
    expect(other.status).toBe(404);
    expect((await json(other)).error).toBe('namespace "prod" is not shown by this dashboard (it shows "db")');
  });

  it('the page is told every button with its confirmation, abort and retry (SPEC 4.11) included', async () => {
    const state = await json(await app().app.request('/api/state', { headers: OURS }));
    expect(state.actions.map((a) => a.id)).toEqual(['promote', 'promote-full', 'pause', 'resume', 'abort', 'retry', 'undo']);
    expect(state.actions.every((a) => a.confirm.length > 0)).toBe(true);
  });
});

describe('what the page is told', () => {
  const d = detail({ neosets: [midRollout], pods, revisions, events }, 'db', 'mysql')!;

  it('pods by ordinal, each with its revision, colour, readiness, in-place phase, hook state and restarts', () => {
    expect(d.pods.map((p) => [p.name, p.revisionNumber, p.colour, p.ready, p.inPlace ?? '', p.hook ?? '', p.restarts, p.updating])).toEqual([
      ['mysql-0', 1, 0, true, '', '', 0, false],
      ['mysql-1', 1, 0, true, '', '', 0, false],
      ['mysql-2', 1, 0, true, '', 'PreparingUpdate', 0, false],
      ['mysql-3', 2, 1, false, 'Updating', '', 0, true],
      ['mysql-4', 2, 1, true, '', '', 1, false],
    ]);
    expect(d).toMatchObject({ partition: 3, phase: 'Canary', currentImage: '', paused: false });
  });

  it('revision history newest first, with roles, change-causes and what undo goes back to', () => {
    expect(d.revisions.map((r) => [r.revision, r.images, r.changeCause, r.current, r.update, r.undoDefault])).toEqual([
      [2, 'main=mysql:8.1', undefined, false, true, false],
      [1, 'main=mysql:8.0', 'first', true, false, true],
    ]);
  });

  it("recent Events of the NeoSet and its pods only (not a namesake's pods), newest first", () => {
    expect(d.events.map((e) => [e.reason, e.object])).toEqual([
      ['InPlaceUpdateStarted', 'neoset/mysql'],
      ['Scheduled', 'pod/mysql-3'],
    ]);
  });

  it('the canary step once the controller reports one (SPEC §4.11), and nothing before', () => {
    expect(summaries([midRollout])[0].canaryStep).toBeUndefined();
    const withCanary = { ...midRollout, spec: { ...midRollout.spec, updateStrategy: { ...midRollout.spec.updateStrategy, canary: { steps: [{}, {}, {}] } } }, status: { ...midRollout.status, canary: { stepIndex: 1 } } };
    expect(summaries([withCanary])[0].canaryStep).toBe('step 2 of 3');
  });
});
