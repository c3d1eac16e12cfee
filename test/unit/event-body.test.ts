// Every event body is bounded before it is read (SPEC §2.3, issue 19 point 6): 413 past
// MAX_EVENT_BYTES — declared by Content-Length (refused unread) or streamed (reading stops at the
// limit) — and the bodies in flight share BODY_BUDGET_BYTES (503, retried), charged as their bytes
// arrive. Through the hono app, and once through a real listener for chunked transfer (slow senders
// on real sockets: slow-clients.test.ts).
import http from 'node:http';
import type { Context } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { BODY_BUDGET_BYTES, MAX_EVENT_BYTES, createEventApp } from '../../shared/http/event-app.ts';
import { startServer, type RunningServer } from '../../shared/http/serve.ts';
import type { ParsedEvent } from '../../shared/events/target.ts';
import { silent } from './admission-review.ts';

const CE_HEADERS = {
  'content-type': 'application/json',
  'ce-id': 'e-1',
  'ce-source': '/apis/v1/namespaces/default/pods',
  'ce-specversion': '1.0',
  'ce-type': 'dev.knative.apiserver.resource.update',
};

/** A Resource-mode Pod of about `bytes` of JSON: many containers with many env vars, as a big real pod is. */
function bigPod(bytes: number) {
  const env: { name: string; value: string }[] = [];
  for (let size = 0; size < bytes - 1000; size += 60) env.push({ name: `VAR_${env.length}`, value: 'v'.repeat(36) });
  const containers = Array.from({ length: 20 }, (_, c) => ({ name: `c${c}`, image: 'registry.example/app:1', env: env.filter((_, i) => i % 20 === c) }));
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'default', labels: { 'neoset.neo.io/name': 'web' } }, spec: { containers } };
}

function recordingApp(hold?: Promise<void>) {
  const handled: ParsedEvent[] = [];
  const app = createEventApp({
    name: 'test',
    logger: silent,
    handle: async (event) => {
      handled.push(event);
      await hold;
      return [];
    },
  });
  return { app, handled };
}

/** A body streamed in 64 KiB chunks that errors once more than `failAfter` bytes have been pulled. */
function streamedBody(failAfter: number) {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled > failAfter) return controller.error(new Error(`read past ${failAfter} bytes: the body is being buffered whole`));
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 }, // pulled only when read
  );
  return { body, pulled: () => pulled };
}

describe('event body limit', () => {
  it('answers 413 (JSON) to a streamed body past the limit, having read no more than the limit and a few chunks', async () => {
    const { app, handled } = recordingApp();
    const stream = streamedBody(MAX_EVENT_BYTES + 1024 * 1024);
    const res = await app.request('/', { method: 'POST', headers: CE_HEADERS, body: stream.body, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: `event body over ${MAX_EVENT_BYTES} bytes` });
    // The streams between the body and the reader may pull a few chunks ahead; never the rest.
    expect(stream.pulled()).toBeLessThanOrEqual(MAX_EVENT_BYTES + 4 * 64 * 1024);
    expect(handled).toEqual([]);
  });

  it('answers 413 to a Content-Length over the limit without reading the body', async () => {
    const { app, handled } = recordingApp();
    const stream = streamedBody(0);
    const res = await app.request('/', {
      method: 'POST',
      headers: { ...CE_HEADERS, 'content-length': String(MAX_EVENT_BYTES + 1) },
      body: stream.body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(stream.pulled()).toBe(0);
    expect(handled).toEqual([]);
  });

  it('handles a legitimate 1.4 MiB Resource-mode Pod event', async () => {
    const { app, handled } = recordingApp();
    const body = JSON.stringify(bigPod(1.4 * 1024 * 1024));
    expect(body.length).toBeGreaterThan(1.39 * 1024 * 1024);
    const res = await app.request('/', { method: 'POST', headers: CE_HEADERS, body });
    expect(res.status).toBe(200);
    expect(handled.map((e) => e.target)).toEqual([{ kind: 'pod', namespace: 'default', name: 'web-0', neoset: 'web' }]);
    expect((handled[0].object as ReturnType<typeof bigPod>).spec.containers).toHaveLength(20);
  });

  it('answers 503 with Retry-After once the bodies in flight would pass the budget, and takes them again once answered', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    const { app } = recordingApp(hold);
    const body = JSON.stringify(bigPod(3.5 * 1024 * 1024));
    const fits = Math.floor(BODY_BUDGET_BYTES / body.length);
    const held = Array.from({ length: fits }, () => app.request('/', { method: 'POST', headers: CE_HEADERS, body }));
    await new Promise((r) => setTimeout(r, 200)); // each is read and waiting in handle()
    const over = await app.request('/', { method: 'POST', headers: CE_HEADERS, body });
    expect(over.status).toBe(503);
    expect(over.headers.get('retry-after')).toBe('1');
    // A small event still fits beside them.
    const small = app.request('/', { method: 'POST', headers: CE_HEADERS, body: JSON.stringify(bigPod(2000)) });
    release();
    expect((await Promise.all([...held, small])).map((r) => r.status)).toEqual(Array(fits + 1).fill(200));
    expect((await app.request('/', { method: 'POST', headers: CE_HEADERS, body })).status).toBe(200);
  }, 30_000); // 16 MiB of bodies made and parsed: 10.5 s in the whole unit project beside a loaded machine
});

describe('event body budget: charged as the bytes arrive', () => {
  it('holds a byte, not 4 MiB, for a body declared 4 MiB of which one byte came: six of them leave room for an event', async () => {
    const { app, handled } = recordingApp();
    const senders: ReadableStreamDefaultController<Uint8Array>[] = [];
    const slow = Array.from({ length: 6 }, () => {
      const body = new ReadableStream<Uint8Array>({ start: (c) => void (senders.push(c), c.enqueue(new Uint8Array([0x7b]))) });
      return app.request('/', { method: 'POST', headers: { ...CE_HEADERS, 'content-length': String(MAX_EVENT_BYTES) }, body, duplex: 'half' } as RequestInit);
    });
    await new Promise((r) => setTimeout(r, 50));
    const res = await app.request('/', { method: 'POST', headers: CE_HEADERS, body: JSON.stringify(bigPod(2000)) });
    expect(res.status).toBe(200);
    // The senders go away: their requests fail (400, to no one), and nothing of them was handled.
    for (const sender of senders) sender.error(new Error('connection reset'));
    expect((await Promise.all(slow)).map((r) => r.status)).toEqual(Array(6).fill(400));
    expect(handled).toHaveLength(1);
  });
});

describe('event body limit on a real listener', () => {
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.close(100);
    running = undefined;
  });

  /** Over node:http, in 64 KiB chunks with Transfer-Encoding: chunked. */
  function postChunked(port: number, chunks: Buffer[], headers: Record<string, string>): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/', method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      // The server may answer 413 and close before the whole body is sent.
      req.on('error', (err) => (/EPIPE|ECONNRESET/.test(String(err)) ? undefined : reject(err)));
      for (const c of chunks) req.write(c);
      req.end();
    });
  }

  it('refuses chunked and Content-Length bodies past the limit, and handles one under it either way', async () => {
    running = await startServer({ app: recordingApp().app, port: 0, hostname: '127.0.0.1', logger: silent });
    const big = Buffer.from(JSON.stringify(bigPod(MAX_EVENT_BYTES + 512 * 1024)));
    const ok = Buffer.from(JSON.stringify(bigPod(1.4 * 1024 * 1024)));
    const split = (b: Buffer) => Array.from({ length: Math.ceil(b.length / 65536) }, (_, i) => b.subarray(i * 65536, (i + 1) * 65536));
    // fetch sends a Buffer with its Content-Length. A 413 says Connection: close (the rest of the body
    // is unread), so the next request opens a new connection rather than hang up on that one.
    const sized = (b: Buffer) => fetch(`http://127.0.0.1:${running!.port}/`, { method: 'POST', headers: CE_HEADERS, body: new Uint8Array(b) }).then((r) => r.status);
    expect((await postChunked(running.port, split(big), CE_HEADERS)).status).toBe(413);
    expect(await sized(big)).toBe(413);
    expect((await postChunked(running.port, split(ok), CE_HEADERS)).status).toBe(200);
    expect(await sized(ok)).toBe(200);
  });
});

describe('long string values of an event', () => {
  it('are cut before the body becomes a string — but NeoSet’s own annotations, in either mode', async () => {
    const { app, handled } = recordingApp();
    const blob = 'e'.repeat(1024 * 1024);
    const state = JSON.stringify({ revision: 'r2', note: 's'.repeat(20 * 1024) });
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-0', namespace: 'default', resourceVersion: '7', annotations: { 'neoset.neo.io/inplace-state': state, 'example.com/blob': blob } },
      spec: { containers: [{ name: 'app', image: 'nginx:1', env: [{ name: 'BLOB', value: blob }] }] },
    };
    const res = await app.request('/', { method: 'POST', headers: CE_HEADERS, body: JSON.stringify(pod) });
    expect(res.status).toBe(200);
    const object = handled[0].object as typeof pod;
    expect(object.metadata.resourceVersion).toBe('7');
    expect(object.metadata.annotations['neoset.neo.io/inplace-state']).toBe(state);
    expect(object.metadata.annotations['example.com/blob']).toBe(`(neoset: ${blob.length} bytes not kept)`);
    expect(object.spec.containers[0].env[0].value).toBe(`(neoset: ${blob.length} bytes not kept)`);
    expect(object.spec.containers[0].image).toBe('nginx:1');

    // Structured mode: the same, the envelope's attributes kept.
    const structured = { specversion: '1.0', id: 'e-2', source: '/apis/v1/namespaces/default/pods', type: 'dev.knative.apiserver.resource.update', datacontenttype: 'application/json', data: pod };
    const again = await app.request('/', { method: 'POST', headers: { 'content-type': 'application/cloudevents+json' }, body: JSON.stringify(structured) });
    expect(again.status).toBe(200);
    expect(handled[1].id).toBe('e-2');
    expect((handled[1].object as typeof pod).metadata.annotations['example.com/blob']).toBe(`(neoset: ${blob.length} bytes not kept)`);
  });

  it("lets go of the body's copies once it is parsed: a run that lasts holds what the parse kept, not the body twice over", async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    let seen: Context | undefined;
    const handled: ParsedEvent[] = [];
    const app = createEventApp({
      name: 'test',
      logger: silent,
      extend: (a) => a.use('/', async (c, next) => ((seen = c), next())),
      handle: async (event) => {
        handled.push(event);
        await hold;
        return [];
      },
    });
    const server = await startServer({ app, port: 0, hostname: '127.0.0.1', logger: silent });
    try {
      const answered = fetch(`http://127.0.0.1:${server.port}/`, { method: 'POST', headers: CE_HEADERS, body: JSON.stringify(bigPod(512 * 1024)) });
      await expect.poll(() => handled.length, { timeout: 20_000 }).toBe(1);
      // While the run goes on: neither @hono/node-server's rawBody nor Hono's body cache holds the body.
      expect((seen!.env as { incoming: { rawBody?: unknown } }).incoming.rawBody).toBeUndefined();
      expect(Object.keys(seen!.req.bodyCache)).toEqual([]);
      release();
      expect((await answered).status).toBe(200);
    } finally {
      release();
      await server.close();
    }
  }, 30_000);
});
