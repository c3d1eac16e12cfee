import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BadEventError, DEFAULT_RESYNC_SOURCE, fastTickFromEnv, parseEvent, plainBinaryEvent, resyncSourceFromEnv, sdkEvent, tickSourcesFromEnv } from './target.ts';

const pod = (labels?: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mysql-4', namespace: 'default', labels } });
const binary = (type: string, data: unknown, extra: Record<string, string> = {}) => ({
  headers: {
    'ce-specversion': '1.0',
    'ce-id': 'e1',
    'ce-source': 'https://10.96.0.1:443',
    'ce-type': type,
    'ce-subject': '/apis/v1/namespaces/default/pods/mysql-4',
    'content-type': 'application/json',
    ...extra,
  },
  body: JSON.stringify(data),
});

describe('parseEvent', () => {
  it('maps a Resource-mode Pod event to its NeoSet through the label', () => {
    const { headers, body } = binary('dev.knative.apiserver.resource.update', pod({ 'neoset.neo.io/name': 'mysql' }));
    expect(parseEvent(headers, body)).toEqual({
      id: 'e1',
      type: 'dev.knative.apiserver.resource.update',
      target: { kind: 'pod', namespace: 'default', name: 'mysql-4', neoset: 'mysql' },
      // the object may stand in for a read where every write it leads to is conditional on it (§2.0)
      object: pod({ 'neoset.neo.io/name': 'mysql' }),
    });
    const deleted = binary('dev.knative.apiserver.resource.delete', pod({ 'neoset.neo.io/name': 'mysql' }));
    expect(parseEvent(deleted.headers, deleted.body).object).toBeNull();
  });

  it('ignores a Pod without the NeoSet label', () => {
    const { headers, body } = binary('dev.knative.apiserver.resource.add', pod());
    expect(parseEvent(headers, body).target.kind).toBe('ignore');
  });

  it('takes a Reference-mode event (the NeoSet is looked up later)', () => {
    const { headers, body } = binary('dev.knative.apiserver.ref.delete', { apiVersion: 'v1', kind: 'Pod', name: 'mysql-4', namespace: 'default' });
    expect(parseEvent(headers, body).target).toEqual({ kind: 'pod', namespace: 'default', name: 'mysql-4', neoset: null });
  });

  it('names the NeoSet of a NeoSet event', () => {
    const { headers, body } = binary('dev.knative.apiserver.resource.add', { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', metadata: { name: 'mysql', namespace: 'db' } });
    expect(parseEvent(headers, body).target).toEqual({ kind: 'neoset', namespace: 'db', name: 'mysql' });
  });

  const tick = (source: string) => JSON.stringify({ specversion: '1.0', id: 't1', source, type: 'dev.knative.sources.ping', datacontenttype: 'application/json', data: {} });
  const structured = { 'content-type': 'application/cloudevents+json' };

  it('takes a structured-mode tick of the PingSource knative/eventing.yaml creates as "every NeoSet"', () => {
    expect(DEFAULT_RESYNC_SOURCE).toBe('/apis/v1/namespaces/neoset-system/pingsources/neoset-resync');
    expect(parseEvent(structured, tick(DEFAULT_RESYNC_SOURCE)).target).toEqual({ kind: 'all' });
  });

  it('ignores a tick from any other source (SPEC §2.3), saying whose, at most 120 characters of it', () => {
    const other = parseEvent(structured, tick('/apis/v1/namespaces/tenant/pingsources/neoset-resync')).target;
    expect(other).toEqual({ kind: 'ignore', reason: 'resync tick from "/apis/v1/namespaces/tenant/pingsources/neoset-resync", not the configured PingSource /apis/v1/namespaces/neoset-system/pingsources/neoset-resync (NEOSET_RESYNC_SOURCE, NEOSET_FAST_TICK)' });
    const long = parseEvent(structured, tick(`/${'x'.repeat(5000)}`)).target;
    expect(long.kind === 'ignore' && long.reason.length).toBeLessThan(300);
  });

  it('takes the ticks of the PingSource NEOSET_RESYNC_SOURCE names instead', () => {
    const mine = '/apis/v1/namespaces/ops/pingsources/resync';
    expect(resyncSourceFromEnv({ NEOSET_RESYNC_SOURCE: ` ${mine} ` })).toBe(mine);
    expect(resyncSourceFromEnv({ NEOSET_RESYNC_SOURCE: '' })).toBe(DEFAULT_RESYNC_SOURCE);
    expect(parseEvent(structured, tick(mine), { resyncSource: mine }).target).toEqual({ kind: 'all' });
    expect(parseEvent(structured, tick(DEFAULT_RESYNC_SOURCE), { resyncSource: mine }).target.kind).toBe('ignore');
  });

  it('takes the fast tick NEOSET_FAST_TICK names, beside the resync PingSource, in its namespace (SPEC §2.4)', () => {
    expect(fastTickFromEnv({})).toBeNull();
    expect(fastTickFromEnv({ NEOSET_FAST_TICK: 'neoset-rollout-tick' })).toEqual({ fast: { namespace: 'neoset-system', name: 'neoset-rollout-tick' }, resync: { namespace: 'neoset-system', name: 'neoset-resync' } });
    const env = { NEOSET_FAST_TICK: 'fast', NEOSET_RESYNC_SOURCE: '/apis/v1/namespaces/ops/pingsources/resync' };
    expect(tickSourcesFromEnv(env)).toEqual(['/apis/v1/namespaces/ops/pingsources/resync', '/apis/v1/namespaces/ops/pingsources/fast']);
    const sources = tickSourcesFromEnv(env);
    expect(parseEvent(structured, tick('/apis/v1/namespaces/ops/pingsources/fast'), { resyncSource: sources }).target).toEqual({ kind: 'all' });
    expect(parseEvent(structured, tick('/apis/v1/namespaces/neoset-system/pingsources/fast'), { resyncSource: sources }).target.kind).toBe('ignore');
  });

  it.each([
    [{ NEOSET_FAST_TICK: 'Not_A_Name' }, /is no PingSource name/],
    [{ NEOSET_FAST_TICK: 'neoset-resync' }, /names the resync PingSource itself/],
    [{ NEOSET_FAST_TICK: 'fast', NEOSET_RESYNC_SOURCE: 'https://example.com/x' }, /names no PingSource/],
  ])('refuses a fast tick that cannot be one: %j', (env, error) => {
    expect(() => fastTickFromEnv(env)).toThrow(error);
  });

  it.each([
    ['missing ce-type', () => { const e = binary('x', {}); delete (e.headers as Record<string, string>)['ce-type']; return e; }, /not a valid CloudEvent/],
    ['an unknown type', () => binary('com.example.other', {}), /unsupported event type "com.example.other"/],
    ['data that is not an object', () => binary('dev.knative.apiserver.resource.add', [1, 2]), /data: not a Kubernetes object/],
    ['a resource without metadata.name', () => binary('dev.knative.apiserver.resource.add', { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'x' } }), /data\.metadata\.name/],
    ['a ref without namespace', () => binary('dev.knative.apiserver.ref.add', { apiVersion: 'v1', kind: 'Pod', name: 'p' }), /data\.namespace/],
    ['non-JSON data', () => ({ ...binary('dev.knative.apiserver.resource.add', {}), body: '{nope' }), /data|CloudEvent/],
  ])('rejects %s with a BadEventError naming the problem', (_, make, message) => {
    const { headers, body } = make();
    expect(() => parseEvent(headers, body)).toThrow(BadEventError);
    expect(() => parseEvent(headers, body)).toThrow(message);
  });
});

describe('the fast path for plain binary events', () => {
  const dir = new URL('../../examples/events/', import.meta.url).pathname;
  const recorded = readdirSync(dir)
    .filter((f) => f.endsWith('.headers'))
    .map((f) => {
      const headers: Record<string, string> = {};
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      return { name: f, headers, body: readFileSync(join(dir, f.replace('.headers', '.data.json')), 'utf8') };
    });

  it('reads every event the real Broker delivered (examples/events) as the SDK does', () => {
    expect(recorded.length).toBeGreaterThan(4);
    for (const { name, headers, body } of recorded) {
      const fast = plainBinaryEvent(headers, body);
      expect(fast, name).not.toBeNull();
      const sdk = sdkEvent(headers, body);
      expect(fast, name).toEqual({ id: sdk.id, type: sdk.type, source: sdk.source, data: sdk.data });
    }
  });

  it('takes only what the SDK takes, with the same attributes; the rest is for the SDK to judge', () => {
    const { headers, body } = binary('dev.knative.apiserver.resource.update', pod({ 'neoset.neo.io/name': 'mysql' }));
    const variants: [string, Record<string, string | undefined>, string?][] = [
      ['as is', {}],
      ['a Knative time', { 'ce-time': '2026-12-01T14:39:11.136616652Z' }],
      ['no such day', { 'ce-time': '2026-02-30T10:00:00Z' }],
      ['hour 25', { 'ce-time': '2026-02-03T25:00:00Z' }],
      ['an offset', { 'ce-time': '2026-02-03T10:00:00+01:00' }],
      ['not a time', { 'ce-time': 'yesterday' }],
      ['no id', { 'ce-id': undefined }],
      ['empty id', { 'ce-id': '' }],
      ['empty subject', { 'ce-subject': '' }],
      ['no type', { 'ce-type': undefined }],
      ['no source', { 'ce-source': undefined }],
      ['a path source', { 'ce-source': '/apis/v1/namespaces/neoset-system/pingsources/neoset-resync' }],
      ['an IPv6 source', { 'ce-source': 'https://[fd00::1]:443' }],
      ['a source with a space', { 'ce-source': 'https://a b' }],
      ['an escape in the source', { 'ce-source': '/a%zz' }],
      ['specversion 0.3', { 'ce-specversion': '0.3' }],
      ['no specversion', { 'ce-specversion': undefined }],
      ['a charset', { 'content-type': 'application/json; charset=utf-8' }],
      ['structured', { 'content-type': 'application/cloudevents+json' }],
      ['a bad extension name', { 'ce-bad_name': 'x' }],
      ['an extension', { 'ce-knativearrivaltime': '2026-12-01T14:39:11Z' }],
      ['a dataschema', { 'ce-dataschema': 'https://example.com/s' }],
      ['not JSON', {}, '{not json'],
      ['a JSON string', {}, '"text"'],
    ];
    for (const [what, change, changedBody] of variants) {
      const h = Object.fromEntries(Object.entries({ ...headers, ...change }).filter(([, v]) => v !== undefined)) as Record<string, string>;
      const b = changedBody ?? body;
      const fast = plainBinaryEvent(h, b);
      let sdk: ReturnType<typeof sdkEvent> | Error;
      try {
        sdk = sdkEvent(h, b);
      } catch (err) {
        sdk = err as Error;
      }
      if (fast === null) continue; // the SDK's verdict, whatever it is
      expect(sdk, what).not.toBeInstanceOf(Error);
      const e = sdk as ReturnType<typeof sdkEvent>;
      expect(fast, what).toEqual({ id: e.id, type: e.type, source: e.source, data: e.data });
    }
    // The plain cases do take the fast path.
    expect(plainBinaryEvent(headers, body)).not.toBeNull();
    expect(plainBinaryEvent({ ...headers, 'ce-time': '2026-12-01T14:39:11.136616652Z', 'ce-knativearrivaltime': 'x' }, body)).not.toBeNull();
  });
});
