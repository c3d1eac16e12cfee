// The event bridge's delivery model (SPEC §2.0): as a Knative Broker's dispatcher, concurrent and
// bounded by the subscriber's containerConcurrency, with the Trigger's retry policy — tested without
// a cluster (the pump's watches point nowhere; resync ticks are the events).
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { backoffMs, BROKER_DELIVERY, CONTAINER_CONCURRENCY, deliver, isRetryable, parseIsoDuration, type DeliverySpec, type FetchLike } from '../../dev/bridge/delivery.ts';
import { createLimiter } from '../../dev/bridge/limiter.ts';
import { goJson } from '../../dev/bridge/go-json.ts';
import { resourceEvent, startPump, toBinaryRequest, type Sink } from '../../dev/bridge/pump.ts';
import { sinksFromTriggers } from '../../dev/bridge/triggers.ts';
import { DEFAULT_RESYNC_SOURCE } from '../../shared/events/target.ts';
import type { Manifest } from '../../dev/manifests.ts';

const KNATIVE = new URL('../../knative/', import.meta.url).pathname;
const manifests = ['eventing.yaml', 'reconcile.yaml', 'readiness.yaml'].flatMap((f) =>
  parseAllDocuments(readFileSync(`${KNATIVE}${f}`, 'utf8')).map((d) => d.toJS() as Manifest),
);
const fast: DeliverySpec = { retry: 3, backoffPolicy: 'exponential', backoffDelayMs: 1, timeoutMs: 200 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** deliver() against an in-process target answering `answers` in turn; no real waiting. */
async function deliverTo(answers: (Response | Error | 'hang')[], spec = fast) {
  let calls = 0;
  const waits: number[] = [];
  const target: FetchLike = () => {
    const a = answers[Math.min(calls++, answers.length - 1)];
    if (a === 'hang') return new Promise<Response>(() => {});
    if (a instanceof Error) throw a;
    return a.clone();
  };
  const result = await deliver({
    target,
    spec,
    request: () => new Request('http://in-process/', { method: 'POST', body: '{}' }),
    slot: (attempt) => attempt(),
    sleep: async (ms) => (waits.push(ms), true),
  });
  return { ...result, calls, waits };
}

describe('delivery policy (knative/eventing pkg/kncloudevents/retries.go)', () => {
  it('exponential backoff waits backoffDelay·2^n before retry n+1; linear backoffDelay·n', () => {
    const exp: DeliverySpec = { ...BROKER_DELIVERY };
    expect([0, 1, 2, 3, 4].map((i) => backoffMs(exp, i))).toEqual([500, 1000, 2000, 4000, 8000]);
    expect([0, 1, 2].map((i) => backoffMs({ ...exp, backoffPolicy: 'linear' }, i))).toEqual([0, 500, 1000]);
  });

  it('SelectiveRetry: 5xx, 404, 408, 409, 429 are retried; other 4xx and 3xx are not', () => {
    for (const s of [500, 502, 503, 504, 404, 408, 409, 429]) expect(isRetryable(s), String(s)).toBe(true);
    for (const s of [400, 401, 403, 410, 422, 301, 304]) expect(isRetryable(s), String(s)).toBe(false);
  });

  it('parses the ISO 8601 durations of a delivery spec', () => {
    expect(parseIsoDuration('PT0.5S')).toBe(500);
    expect(parseIsoDuration('PT1S')).toBe(1000);
    expect(parseIsoDuration('PT2M')).toBe(120_000);
    expect(parseIsoDuration('P1DT1H')).toBe(90_000_000);
    expect(() => parseIsoDuration('PT')).toThrow(/ISO 8601/);
    expect(() => parseIsoDuration('500ms')).toThrow(/ISO 8601/);
  });

  it('an empty 2xx is delivered at once', async () => {
    const r = await deliverTo([new Response(null, { status: 200 })]);
    expect(r).toMatchObject({ outcome: 'delivered', attempts: 1, calls: 1, waits: [] });
  });

  it('a 503 is retried with backoff until it succeeds', async () => {
    const r = await deliverTo([new Response('{"error":"x"}', { status: 503 }), new Response('', { status: 503 }), new Response(null, { status: 202 })]);
    expect(r).toMatchObject({ outcome: 'delivered', attempts: 3, waits: [1, 2] });
  });

  it('a 400 is rejected without a retry; a 429 is retried', async () => {
    expect(await deliverTo([new Response('{"error":"bad"}', { status: 400 })])).toMatchObject({ outcome: 'rejected', calls: 1 });
    expect(await deliverTo([new Response(null, { status: 429 }), new Response(null, { status: 200 })])).toMatchObject({ outcome: 'delivered', calls: 2 });
  });

  it('gives up after 1 + retry attempts', async () => {
    const r = await deliverTo([new Response(null, { status: 500 })]);
    expect(r).toMatchObject({ outcome: 'failed', attempts: 4, calls: 4, waits: [1, 2, 4] });
  });

  it('a network error and a timeout are retried', async () => {
    expect(await deliverTo([new Error('ECONNREFUSED'), new Response(null, { status: 200 })])).toMatchObject({ outcome: 'delivered', calls: 2 });
    const t = await deliverTo(['hang', new Response(null, { status: 200 })], { ...fast, timeoutMs: 20 });
    expect(t).toMatchObject({ outcome: 'delivered', calls: 2 });
  });

  it('a non-empty 2xx body that is not a CloudEvent is a failed delivery (the broker filter answers 502); a CloudEvent reply is not', async () => {
    const r = await deliverTo([new Response('ok', { status: 200 })], { ...fast, retry: 1 });
    expect(r).toMatchObject({ outcome: 'failed', calls: 2, last: { status: 502 } });
    const reply = new Response('{}', { status: 200, headers: { 'ce-specversion': '1.0', 'ce-id': '1', 'ce-type': 't', 'ce-source': 's', 'content-type': 'application/json' } });
    expect(await deliverTo([reply])).toMatchObject({ outcome: 'delivered', calls: 1 });
  });
});

describe('limiter (containerConcurrency)', () => {
  it('runs at most `limit` tasks at once, starting them in the order they came', async () => {
    const limiter = createLimiter(3);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        limiter.run(async () => {
          started.push(i);
          most = Math.max(most, ++running);
          await sleep(5);
          running--;
        }),
      ),
    );
    expect(most).toBe(3);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(limiter.active + limiter.waiting).toBe(0);
  });

  it('frees the slot of a task that throws', async () => {
    const limiter = createLimiter(1);
    await expect(limiter.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await limiter.run(async () => 7)).toBe(7);
  });
});

describe('the Triggers of knative/eventing.yaml', () => {
  const sinks = sinksFromTriggers(manifests, { 'neoset-reconcile': 'http://reconcile/', 'neoset-readiness': 'http://readiness/' });

  it('become one sink each, with their filter, delivery and the Service\'s timeout and containerConcurrency', () => {
    const pods = sinks.find((s) => s.target === 'http://reconcile/' && s.kinds[0] === 'Pod')!;
    expect(sinks.map((s) => [s.target, s.kinds, s.source])).toEqual([
      ['http://reconcile/', ['NeoSet'], undefined],
      ['http://reconcile/', ['Pod'], undefined],
      // Each tick's Trigger on its PingSource: the slow one, and the fast one reconcile makes (SPEC §2.4).
      ['http://reconcile/', ['ping'], '/apis/v1/namespaces/neoset-system/pingsources/neoset-resync'],
      ['http://reconcile/', ['ping'], '/apis/v1/namespaces/neoset-system/pingsources/neoset-rollout-tick'],
      ['http://readiness/', ['Pod'], undefined],
    ]);
    expect(pods.delivery).toEqual({ retry: 5, backoffPolicy: 'exponential', backoffDelayMs: 500, timeoutMs: 60_000 });
    expect(sinks.find((s) => s.kinds[0] === 'ping')!.delivery).toMatchObject({ retry: 2, backoffDelayMs: 1000 });
    expect(sinks.find((s) => s.target === 'http://readiness/')!.delivery!.timeoutMs).toBe(30_000);
    expect(sinks.map((s) => s.parallelism)).toEqual([50, 50, 50, 50, 50]);
  });

  it('the pump\'s defaults are the Broker\'s delivery and the Services\' containerConcurrency', () => {
    const broker = manifests.find((m) => m.kind === 'Broker')!;
    const d = (broker.spec as { delivery: { retry: number; backoffPolicy: string; backoffDelay: string } }).delivery;
    expect({ retry: d.retry, backoffPolicy: d.backoffPolicy, backoffDelayMs: parseIsoDuration(d.backoffDelay) }).toEqual({
      retry: BROKER_DELIVERY.retry,
      backoffPolicy: BROKER_DELIVERY.backoffPolicy,
      backoffDelayMs: BROKER_DELIVERY.backoffDelayMs,
    });
    expect(CONTAINER_CONCURRENCY).toBe(sinks[0].parallelism);
  });
});

// No API server: the watches fail quietly and retry; resync ticks are the events delivered.
const nowhere = () => {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:9' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
};

describe('the pump delivers as the Broker does', () => {
  it('concurrently, at most `parallelism` in flight per subscriber, retrying 503s, until idle', async () => {
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const target: FetchLike = async () => {
      calls++;
      most = Math.max(most, ++inFlight);
      await sleep(10);
      inFlight--;
      return new Response(null, { status: calls % 5 === 0 ? 503 : 200 });
    };
    const pump = startPump({ kubeConfig: nowhere(), sinks: [{ target, kinds: ['ping'] }], resyncMs: 0, parallelism: 8, delivery: fast });
    try {
      for (let i = 0; i < 40; i++) pump.tick();
      await pump.idle();
      expect(most).toBe(8);
      expect(pump.stats.maxInFlight).toBe(8);
      expect(pump.stats.delivered).toBe(40);
      expect(pump.stats.retries).toBe(calls - 40);
      expect(pump.stats.retries).toBeGreaterThan(0);
    } finally {
      await pump.stop();
    }
  });

  it('two Triggers of one subscriber share its limit; copies multiply deliveries', async () => {
    let inFlight = 0;
    let most = 0;
    const target: FetchLike = async () => {
      most = Math.max(most, ++inFlight);
      await sleep(5);
      inFlight--;
      return new Response(null, { status: 200 });
    };
    const pump = startPump({
      kubeConfig: nowhere(),
      sinks: [
        { target, kinds: ['ping'], parallelism: 3 },
        { target, kinds: ['ping'], parallelism: 3 },
      ],
      resyncMs: 0,
      copies: 2,
      shuffleWindowMs: 5,
    });
    try {
      for (let i = 0; i < 10; i++) pump.tick();
      await sleep(10);
      await pump.idle();
      expect(most).toBe(3);
      expect(pump.stats.delivered).toBe(40);
    } finally {
      await pump.stop();
    }
  });

  it('stop ends an attempt in flight at once: a subscriber that does not answer holds no stop (dev/cluster/shutdown.ts)', async () => {
    let answered = 0;
    // An in-process target cannot be aborted; its answer, were it to come, is no longer awaited.
    const target: FetchLike = () => new Promise<Response>((resolve) => setTimeout(() => (answered++, resolve(new Response(null, { status: 200 }))), 30_000).unref());
    const pump = startPump({ kubeConfig: nowhere(), sinks: [{ target, kinds: ['ping'] }], resyncMs: 0, delivery: { ...fast, timeoutMs: 60_000 } });
    pump.tick();
    await sleep(20);
    const began = Date.now();
    await pump.stop();
    expect(Date.now() - began).toBeLessThan(1000);
    expect(pump.stats).toMatchObject({ delivered: 0, failed: 1, retries: 0 });
    expect(answered).toBe(0);
  });

  it('stop cuts the backoff short', async () => {
    const target: FetchLike = async () => new Response(null, { status: 503 });
    const pump = startPump({ kubeConfig: nowhere(), sinks: [{ target, kinds: ['ping'] }], resyncMs: 0, delivery: { ...fast, backoffDelayMs: 60_000 } });
    pump.tick();
    await sleep(20);
    const began = Date.now();
    await pump.stop();
    expect(Date.now() - began).toBeLessThan(1000);
    expect(pump.stats).toMatchObject({ delivered: 0, failed: 1 });
  });

  it('sends resync ticks with the source of the PingSource reconcile takes ticks from (SPEC §2.3): knative/eventing.yaml\'s, or the one named', async () => {
    const sources: (string | null)[] = [];
    const target: FetchLike = (req) => {
      sources.push(req.headers.get('ce-source'));
      return new Response(null, { status: 200 });
    };
    const ping = manifests.find((m) => m.kind === 'PingSource')!;
    for (const resyncSource of [undefined, '/apis/v1/namespaces/ops/pingsources/resync']) {
      const pump = startPump({ kubeConfig: nowhere(), sinks: [{ target, kinds: ['ping'] }], resyncMs: 0, resyncSource });
      pump.tick();
      await pump.idle();
      await pump.stop();
    }
    expect(sources).toEqual([`/apis/v1/namespaces/${ping.metadata.namespace}/pingsources/${ping.metadata.name}`, '/apis/v1/namespaces/ops/pingsources/resync']);
    expect(sources[0]).toBe(DEFAULT_RESYNC_SOURCE);
  });

  it("delivers a tick only to the sinks whose source filter names its PingSource, as each tick's Trigger filters (SPEC §2.4)", async () => {
    const got: string[] = [];
    const sink = (name: string, source?: string): Sink => ({ target: () => (got.push(name), new Response(null, { status: 200 })), kinds: ['ping'], ...(source ? { source } : {}) });
    const pump = startPump({ kubeConfig: nowhere(), sinks: [sink('slow', DEFAULT_RESYNC_SOURCE), sink('fast', '/apis/v1/namespaces/neoset-system/pingsources/neoset-rollout-tick'), sink('any')], resyncMs: 0 });
    pump.tick();
    await pump.idle();
    await pump.stop();
    expect(got.sort()).toEqual(['any', 'slow']);
  });
});

// What test/integration/knative-contract.test.ts found the real Knative v0.50.0 sending, where the
// bridge sent otherwise.
describe('the bridge sends what the real ApiServerSource and Broker send', () => {
  /** A pump that sends one resync tick to `sinks`, once everything it started is done. */
  const oneTick = async (sinks: Sink[]) => {
    const pump = startPump({ kubeConfig: nowhere(), sinks, resyncMs: 0 });
    try {
      pump.tick();
      await pump.idle();
    } finally {
      await pump.stop();
    }
    return pump;
  };

  it("the body as the adapter's Go encoding/json writes it: keys sorted (integer-like ones too), <, >, &, U+2028/9 escaped", () => {
    const value = { metadata: { name: 'a', annotations: { '10': 'x', '2': 'y', b: '<b> & </b>' } }, apiVersion: 'v1', kind: 'Pod', list: [{ z: 1, a: null }], s: '\u2028\u2029', gone: undefined };
    const text = goJson(value);
    expect(text).toBe('{"apiVersion":"v1","kind":"Pod","list":[{"a":null,"z":1}],"metadata":{"annotations":{"10":"x","2":"y","b":"\\u003cb\\u003e \\u0026 \\u003c/b\\u003e"},"name":"a"},"s":"\\u2028\\u2029"}');
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'n', name: 'p' } };
    return toBinaryRequest('http://x/', resourceEvent('https://10.96.0.1:443', 'ADDED', pod as never))
      .text()
      .then((body) => expect(body).toBe('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n"}}'));
  });

  it("every delivery carries the Broker's knativearrivaltime, Prefer: reply and the Trigger's namespace (Kn-Namespace)", async () => {
    const seen: Headers[] = [];
    const target: FetchLike = (req) => {
      seen.push(req.headers);
      return new Response(null, { status: 202 });
    };
    const sinks = sinksFromTriggers(manifests, { 'neoset-reconcile': target }).filter((s) => s.kinds.includes('ping'));
    const pump = await oneTick(sinks);
    expect(seen).toHaveLength(1);
    expect(Date.parse(seen[0].get('ce-knativearrivaltime')!)).toBeGreaterThan(Date.now() - 5000);
    expect(seen[0].get('prefer')).toBe('reply');
    expect(seen[0].get('kn-namespace')).toBe('neoset-system');
  });

  it("dead-letters what its subscriber did not take, as Knative's channel dispatcher does: the Trigger's sink, the error extensions, no reply asked", async () => {
    const dead: Request[] = [];
    const failing: FetchLike = () => new Response('no such thing', { status: 400 });
    const deadLetter: FetchLike = (req) => {
      dead.push(req);
      return new Response(null, { status: 202 });
    };
    const withSink = manifests.map((m) => (m.kind === 'Trigger' ? { ...m, spec: { ...(m.spec as object), delivery: { retry: 0, deadLetterSink: { ref: { apiVersion: 'v1', kind: 'Service', name: 'sink' } } } } } : m));
    const sinks = sinksFromTriggers(withSink, { 'neoset-reconcile': failing, sink: deadLetter }).filter((s) => s.kinds.includes('ping'));
    expect(sinks[0].deadLetterSink).toBe(deadLetter);
    const pump = await oneTick(sinks);
    expect(pump.stats).toMatchObject({ rejected: 1, deadLettered: 1 });
    const h = dead[0].headers;
    expect([h.get('ce-knativeerrorcode'), h.get('ce-knativeerrordata'), h.get('ce-knativeerrordest'), h.get('ce-type')]).toEqual(['400', Buffer.from('no such thing').toString('base64'), 'http://in-process/', 'dev.knative.sources.ping']);
    expect([h.get('kn-namespace'), h.get('prefer'), h.get('ce-knativebrokerttl')]).toEqual(['neoset-system', null, '255']);
    expect(await dead[0].text()).toBe('{}');
  });
});
