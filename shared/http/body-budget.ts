// Bodies are bounded as they are read (SPEC §2.3), twice: each one by a largest size, and all those
// one instance holds at once by a shared budget of bytes and of requests. The worst case of an
// instance is then budget x (what a parsed body costs), a number that can be checked against its
// memory limit, instead of (bodies in flight) x (largest body), which has no bound. What a request
// holds is what has arrived of it (counted-body.ts); how long it may take to arrive is serve.ts's.
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { readCountedBody } from './counted-body.ts';

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

/** The length of each body bodyBudget read (Infinity: it stopped past maxBodyBytes), for boundedBody. */
const bodyLengths = new WeakMap<Context, number>();

/**
 * Refuses a body over `maxSize`: one bodyBudget found so as it read it, or one declared so by its
 * Content-Length (unread, see declaredLength). Without bodyBudget before it, a chunked body is
 * counted by hono's bodyLimit as the handler reads it.
 */
export function boundedBody(opts: { maxSize: number; onError: (c: Context) => Response | Promise<Response> }): MiddlewareHandler {
  const counted = bodyLimit(opts);
  return async (c, next) => {
    const length = bodyLengths.get(c) ?? declaredLength(c);
    if (length === null) return counted(c, next);
    if (length > opts.maxSize) return opts.onError(c);
    await next();
  };
}

export interface BodyBudgetOptions {
  /** The bytes of bodies held at once: read so far, or read and not yet answered. */
  budgetBytes: number;
  /** The largest body read: reading stops past it, and boundedBody answers 413. */
  maxBodyBytes: number;
  /** Requests whose body has arrived and is not answered yet; unset: no bound but the bytes. */
  maxRequests?: number;
  /** The answer when there is no room. */
  onBusy: (c: Context, inFlight: { bytes: number; requests: number }) => Response | Promise<Response>;
}

/**
 * Reads each body under a budget shared by the bodies one instance holds, charging its bytes as they
 * arrive (counted-body.ts) — never its declared Content-Length, which a client that sends one byte
 * of it would hold at no cost (issue 34; SPEC §2.5 "slow or incomplete requests hold no budget").
 * A body that would pass the budget stops being read and is answered onBusy with Connection: close;
 * one that does not arrive in time is dropped by the server's requestTimeout (serve.ts), and its
 * bytes released. A request counts against maxRequests only once its body has arrived: a slow
 * sender holds no request slot either. Bytes and slot are released when the answer is made.
 * Goes before boundedBody, which answers a body found past maxBodyBytes (declared or read) with 413.
 */
export function bodyBudget(opts: BodyBudgetOptions): MiddlewareHandler {
  let bytes = 0;
  let requests = 0;
  const full = () => opts.maxRequests !== undefined && requests >= opts.maxRequests;
  return async (c, next) => {
    // At the bound already: refused before a byte is read.
    if (full()) return opts.onBusy(c, { bytes, requests });
    const declared = declaredLength(c);
    // Declared over the limit: boundedBody refuses it unread.
    if (declared !== null && declared > opts.maxBodyBytes) return next();
    let held = 0;
    const charge = (n: number) => {
      if (bytes + n > opts.budgetBytes) return false;
      bytes += n;
      held += n;
      return true;
    };
    try {
      const read = await readCountedBody(c, opts.maxBodyBytes, charge);
      if ('refused' in read) {
        // The rest of the body is left unread on the connection: a client must not send on it again.
        c.header('Connection', 'close');
        if (read.refused === 'over-budget') return await opts.onBusy(c, { bytes, requests });
        bodyLengths.set(c, Infinity);
        return await next();
      }
      bodyLengths.set(c, read.length);
      if (full()) return await opts.onBusy(c, { bytes, requests });
      requests += 1;
      try {
        await next();
      } finally {
        requests -= 1;
      }
    } finally {
      bytes -= held;
    }
  };
}
