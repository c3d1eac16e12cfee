// Bodies are bounded before they are read (SPEC §2.3), twice: each one by bodyLimit (hono), and all
// those one instance holds at once by a shared budget of bytes and of requests. The worst case of an
// instance is then budget x (what a parsed body costs), a number that can be checked against its
// memory limit, instead of (bodies in flight) x (largest body), which has no bound.
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';

/**
 * A body with a Content-Length (and no Transfer-Encoding) as Node's parser will hold it: its length
 * is known before a byte is read. Asked of the headers only — touching `c.req.raw.body` makes
 * @hono/node-server build a whole web Request and a ReadableStream over the socket, which a body read
 * by `c.req.text()` alone skips (its direct read): about a fifth of an event's CPU (bench/events.ts).
 */
function declaredLength(c: Context): number | null {
  const declared = c.req.header('content-length');
  if (declared === undefined || c.req.header('transfer-encoding') !== undefined) return null;
  const n = Number(declared);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/**
 * hono's bodyLimit, refusing a body declared over `maxSize` from its Content-Length without touching
 * the body (see declaredLength); a chunked body is counted by hono's as it arrives.
 */
export function boundedBody(opts: { maxSize: number; onError: (c: Context) => Response | Promise<Response> }): MiddlewareHandler {
  const counted = bodyLimit(opts);
  return async (c, next) => {
    const declared = declaredLength(c);
    if (declared === null) return counted(c, next);
    if (declared > opts.maxSize) return opts.onError(c);
    await next();
  };
}

export interface BodyBudgetOptions {
  /** The bytes of bodies in flight at once. */
  budgetBytes: number;
  /** The largest body read (what bodyLimit refuses past): a body declared larger reserves nothing. */
  maxBodyBytes: number;
  /** Requests in flight at once, whatever their size; unset: no bound but the bytes. */
  maxRequests?: number;
  /** The answer when there is no room. */
  onBusy: (c: Context, inFlight: { bytes: number; requests: number }) => Response | Promise<Response>;
}

/** A chunked body that ran past the budget while it was read: answered with onBusy. */
class OverBudgetError extends Error {}

/**
 * Charges a body's bytes to the budget before they are read: its Content-Length at once, or, for a
 * body of unknown length (chunked), each chunk as it arrives — a chunked body that would pass the
 * budget stops being read. Released when the answer is made. Goes before boundedBody, which then refuses
 * a body declared over the limit without reading it (with a Content-Length, Node's parser holds the
 * body to that length; chunked, bodyLimit counts the bytes as they arrive and stops past the limit).
 */
export function bodyBudget(opts: BodyBudgetOptions): MiddlewareHandler {
  let bytes = 0;
  let requests = 0;
  return async (c, next) => {
    if (opts.maxRequests !== undefined && requests >= opts.maxRequests) return opts.onBusy(c, { bytes, requests });
    let held = 0;
    const take = (n: number) => {
      if (bytes + n > opts.budgetBytes) return false;
      bytes += n;
      held += n;
      return true;
    };
    const declared = declaredLength(c);
    // Chunked: only then is the body touched as a stream (declaredLength).
    const stream = declared === null ? c.req.raw.body : null;
    if (declared !== null) {
      // A body declared over the limit is refused by bodyLimit without being read: nothing to reserve.
      if (declared <= opts.maxBodyBytes && !take(declared)) return opts.onBusy(c, { bytes, requests });
    } else if (stream !== null) {
      const raw = c.req.raw;
      const counted = stream.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          // Past maxBodyBytes the bytes are bodyLimit's to refuse (413): a body is charged that much at most.
          transform: (chunk, out) => (take(Math.min(chunk.byteLength, Math.max(0, opts.maxBodyBytes - held))) ? out.enqueue(chunk) : out.error(new OverBudgetError())),
        }),
      );
      c.req.raw = new Request(raw, { body: counted, duplex: 'half' } as RequestInit);
    }
    requests += 1;
    try {
      await next();
      // The handler's read failed on the budget: hono has answered through onError; answer busy instead.
      if (c.error instanceof OverBudgetError) c.res = await opts.onBusy(c, { bytes, requests });
    } finally {
      bytes -= held;
      requests -= 1;
    }
  };
}
