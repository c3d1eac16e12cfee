// The fast tick's protocol (SPEC §2.4, fast-tick.ts) against an in-memory store of PingSources that
// answers as the API server does (404, 409 on create, a delete's resourceVersion precondition). On the
// real API server and Eventing: test/integration/knative-eventing.test.ts.
import { describe, expect, it } from 'vitest';
import { ApiError, type KubeClient } from './client.ts';
import { createFastTick, NEED_EVERY_MS, NEEDED_AT, RETIRE_AFTER_MS, STAMP_RETRY_MS } from './fast-tick.ts';

const RESYNC = '/apis/sources.knative.dev/v1/namespaces/neoset-system/pingsources/neoset-resync';
const FAST = '/apis/sources.knative.dev/v1/namespaces/neoset-system/pingsources/neoset-rollout-tick';
const SINK = { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'neoset' } };

interface Stored {
  metadata: { name: string; resourceVersion: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

function store() {
  let rv = 100;
  let serverMs = Date.parse('2026-12-07T12:00:00Z');
  const objects = new Map<string, Stored>([[RESYNC, { metadata: { name: 'neoset-resync', resourceVersion: String(rv) }, spec: { schedule: '*/10 * * * *', sink: SINK } }]]);
  const calls: string[] = [];
  const fail = (verb: string, path: string, status: number) => new ApiError(verb, path, status, String(status), 'test');
  const answer = async (verb: string, path: string, opts: Parameters<KubeClient['request']>[2] = {}): Promise<unknown> => {
      calls.push(`${verb} ${path.split('/').pop()}`);
      opts.date?.(new Date(serverMs).toUTCString());
      if (verb === 'POST') {
        const body = opts.body as Stored;
        const at = `${path}/${body.metadata.name}`;
        if (objects.has(at)) throw fail(verb, path, 409);
        objects.set(at, { ...body, metadata: { ...body.metadata, resourceVersion: String(++rv) } });
        return objects.get(at);
      }
      const o = objects.get(path);
      if (!o) throw fail(verb, path, 404);
      if (verb === 'GET') return structuredClone(o);
      if (verb === 'PATCH') {
        const annotations = (opts.body as { metadata: { annotations: Record<string, string> } }).metadata.annotations;
        o.metadata = { ...o.metadata, annotations: { ...o.metadata.annotations, ...annotations }, resourceVersion: String(++rv) };
        return o;
      }
      if (verb === 'DELETE') {
        const wanted = (opts.body as { preconditions?: { resourceVersion?: string } }).preconditions?.resourceVersion;
        if (wanted !== undefined && wanted !== o.metadata.resourceVersion) throw fail(verb, path, 409);
        objects.delete(path);
        return {};
      }
      throw new Error(`unexpected ${verb}`);
  };
  const client = { request: answer } as KubeClient;
  return { client, objects, calls, advance: (ms: number) => void (serverMs += ms), fast: () => objects.get(FAST) };
}

function tick(s: ReturnType<typeof store>) {
  let monotonic = 0;
  const fastTick = createFastTick({ client: s.client, fast: { namespace: 'neoset-system', name: 'neoset-rollout-tick' }, resync: { namespace: 'neoset-system', name: 'neoset-resync' }, monotonic: () => monotonic });
  return { fastTick, pass: (ms: number) => void ((monotonic += ms), s.advance(ms)) };
}

describe('the fast tick', () => {
  it('is created on the first need, with the resync PingSource sink, every minute; stamped at most every NEED_EVERY_MS per instance', async () => {
    const s = store();
    const { fastTick, pass } = tick(s);
    await fastTick.need();
    expect(s.fast()?.spec).toEqual({ schedule: '* * * * *', contentType: 'application/json', data: '{}', sink: SINK });
    expect(s.fast()?.metadata.annotations?.[NEEDED_AT]).toBe('2026-12-07T12:00:00.000Z');
    s.calls.length = 0;
    pass(NEED_EVERY_MS - 1);
    await Promise.all([fastTick.need(), fastTick.need()]);
    expect(s.calls).toEqual([]);
    pass(1);
    await Promise.all([fastTick.need(), fastTick.need()]);
    expect(s.calls).toEqual(['PATCH neoset-rollout-tick']);
  });

  it('is kept while stamped within RETIRE_AFTER_MS, deleted after, and a delete on a stale read is refused (something is in flight again)', async () => {
    const s = store();
    const { fastTick, pass } = tick(s);
    await fastTick.need();
    pass(RETIRE_AFTER_MS - 1000);
    expect(await fastTick.retire(await fastTick.read())).toBe('kept');
    pass(1000);
    const before = await fastTick.read();
    // A run of another instance leaves a NeoSet in flight between the read and the delete.
    const other = tick(s).fastTick;
    await other.need();
    expect(await fastTick.retire(before)).toBe('kept');
    expect(s.fast()).toBeDefined();
    pass(RETIRE_AFTER_MS);
    expect(await fastTick.retire(await fastTick.read())).toBe('deleted');
    expect(s.fast()).toBeUndefined();
    expect(await fastTick.retire(await fastTick.read())).toBe('absent');
  });

  it('comes back on the next need after a delete, whatever the instance stamped last', async () => {
    const s = store();
    const { fastTick, pass } = tick(s);
    await fastTick.need();
    pass(RETIRE_AFTER_MS);
    expect(await fastTick.retire(await fastTick.read())).toBe('deleted');
    await fastTick.need();
    expect(s.fast()?.metadata.annotations?.[NEEDED_AT]).toBe(new Date(Date.parse('2026-12-07T12:00:00Z') + RETIRE_AFTER_MS).toISOString());
  });

  it('never throws: a failed stamp is tried again on the next need; an unreadable fast tick is kept', async () => {
    const s = store();
    s.objects.delete(RESYNC); // nothing to copy the sink from
    const { fastTick, pass } = tick(s);
    await expect(fastTick.need()).resolves.toBeUndefined();
    expect(s.fast()).toBeUndefined();
    s.objects.set(RESYNC, { metadata: { name: 'neoset-resync', resourceVersion: '1' }, spec: { sink: SINK } });
    s.calls.length = 0;
    await fastTick.need(); // within STAMP_RETRY_MS of the failure: not tried
    expect(s.calls).toEqual([]);
    pass(STAMP_RETRY_MS);
    await fastTick.need();
    expect(s.fast()).toBeDefined();
    expect(await fastTick.retire(null)).toBe('kept');
  });
});
