// A request's body read chunk by chunk, each chunk charged (body-budget.ts) as it comes off the
// socket: what a request holds is what has arrived, never what its Content-Length promises. A client
// that declares 4 MiB and sends one byte holds one byte (issue 34: six of them held a 16 MiB budget,
// and every event after was answered 503 for the 300 s of Node's requestTimeout).
import type { IncomingMessage } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';

/** Whether `n` more bytes may be kept; false stops the read (the budget is spent). */
export type Charge = (n: number) => boolean;

/** The body's length once read whole, or why the read stopped (the rest is left unread). */
export type BodyRead = { length: number } | { refused: 'too-large' | 'over-budget' };

/** Chunks gathered up to maxBytes, each charged before it is kept (a class: one per request, on the hot path). */
class Gathered {
  readonly chunks: Buffer[] = [];
  length = 0;
  readonly maxBytes: number;
  readonly charge: Charge;
  constructor(maxBytes: number, charge: Charge) {
    this.maxBytes = maxBytes;
    this.charge = charge;
  }

  /** null: kept; else why the read must stop. */
  add(chunk: Buffer): 'too-large' | 'over-budget' | null {
    this.length += chunk.byteLength;
    if (this.length > this.maxBytes) return 'too-large';
    if (!this.charge(chunk.byteLength)) return 'over-budget';
    this.chunks.push(chunk);
    return null;
  }

  /** The body: its only chunk as it came (most bodies are one), or the chunks joined. */
  body(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.length);
  }
}

/**
 * Node's request stream, when the body is still unread on it (@hono/node-server gives it as
 * env.incoming); undefined under app.request (a web Request, no socket) or once something else reads it.
 */
function unreadIncoming(c: Context): (IncomingMessage & { rawBody?: unknown }) | undefined {
  const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming;
  if (!incoming || typeof incoming.on !== 'function' || incoming.readableDidRead || incoming.listenerCount('data') > 0) return undefined;
  return incoming;
}

/**
 * Off the socket with 'data' events: no web Request or ReadableStream is built (what touching
 * c.req.raw.body costs: about a fifth of an event's CPU, bench/events.ts). The body read is left as
 * incoming.rawBody, which @hono/node-server's c.req.text()/json()/arrayBuffer() take instead of the
 * socket (honojs/node-server#223, made for platforms that read the body before the app).
 */
function fromSocket(incoming: IncomingMessage & { rawBody?: unknown }, maxBytes: number, charge: Charge): Promise<BodyRead> {
  if (incoming.destroyed) return Promise.reject(new Error('the connection closed before the body arrived'));
  const got = new Gathered(maxBytes, charge);
  return new Promise((resolve, reject) => {
    const settle = (done: () => void) => {
      incoming.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
      done();
    };
    const onData = (chunk: Buffer) => {
      const refused = got.add(chunk);
      if (refused === null) return;
      // Nothing more is taken off the socket; the answer says Connection: close.
      incoming.pause();
      settle(() => resolve({ refused }));
    };
    const onEnd = () =>
      settle(() => {
        incoming.rawBody = got.body();
        resolve({ length: got.length });
      });
    // The client went away, or Node's requestTimeout dropped it (serve.ts): the bytes are released by the caller.
    const onGone = (err?: Error) => settle(() => reject(err ?? new Error('the connection closed before the body arrived')));
    incoming.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  });
}

/** A web Request's body (app.request in tests, or a request already made into one), read by its reader. */
async function fromRequest(c: Context, maxBytes: number, charge: Charge): Promise<BodyRead> {
  const raw = c.req.raw;
  if (raw.body === null) return { length: 0 };
  const reader = raw.body.getReader();
  const got = new Gathered(maxBytes, charge);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const refused = got.add(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    if (refused !== null) {
      void reader.cancel().catch(() => undefined);
      return { refused };
    }
  }
  c.req.raw = new Request(raw, { body: new Uint8Array(got.body()) });
  return { length: got.length };
}

/**
 * Reads the request's body whole, charging each chunk as it arrives and stopping past maxBytes or
 * when a charge is refused; the handler then reads it from memory (c.req.text() and the like).
 * Rejects when the connection ends first.
 */
export function readCountedBody(c: Context, maxBytes: number, charge: Charge): Promise<BodyRead> {
  const incoming = unreadIncoming(c);
  return incoming ? fromSocket(incoming, maxBytes, charge) : fromRequest(c, maxBytes, charge);
}

/**
 * The request's body, taken once: the copies the server and Hono keep of it — incoming.rawBody (above)
 * and the request's body cache — are let go, so that a run that lasts (a reconcile with its writes)
 * holds what its parse of the body kept, not the body twice over: a Resource-mode event is a whole
 * object, up to etcd's 1.5 MiB (memory-bounded.test.ts's sweep: 12 MiB of event bodies held by runs).
 * The body is the caller's: a joined one (past a socket's read) is its to release (buffer-release.ts).
 */
export async function takeBody(c: Context): Promise<Buffer> {
  const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming as (IncomingMessage & { rawBody?: unknown }) | undefined;
  // The bytes fromSocket gathered, as they are: c.req.arrayBuffer() would copy them.
  const raw = incoming?.rawBody;
  const body = Buffer.isBuffer(raw) ? raw : Buffer.from(await c.req.arrayBuffer());
  if (incoming) delete incoming.rawBody;
  c.req.bodyCache = {};
  return body;
}
