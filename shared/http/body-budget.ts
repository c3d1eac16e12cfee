// Bodies are bounded before they are read (SPEC §2.3), twice: each one by bodyLimit (hono), and all
// those one instance holds at once by a shared budget of bytes and of requests. The worst case of an
// instance is then budget x (what a parsed body costs), a number that can be checked against its
// memory limit, instead of (bodies in flight) x (largest body), which has no bound.
import type { Context, MiddlewareHandler } from 'hono';

export interface BodyBudgetOptions {
  /** The bytes of bodies in flight at once. */
  budgetBytes: number;
  /** The largest body read (what bodyLimit refuses past): a chunked body reserves this much. */
  maxBodyBytes: number;
  /** Requests in flight at once, whatever their size; unset: no bound but the bytes. */
  maxRequests?: number;
  /** The answer when there is no room (the body unread). */
  onBusy: (c: Context, inFlight: { bytes: number; requests: number }) => Response | Promise<Response>;
}

/**
 * Reserves a body's bytes before it is read: its Content-Length, or the whole maxBodyBytes for a
 * chunked body (its size is known only once read). Released when the answer is made. Goes before
 * bodyLimit, which then refuses a body declared over the limit without reading it (with a
 * Content-Length, Node's parser holds the body to that length; chunked, bodyLimit counts the bytes as
 * they arrive and stops reading past the limit).
 */
export function bodyBudget(opts: BodyBudgetOptions): MiddlewareHandler {
  let bytes = 0;
  let requests = 0;
  return async (c, next) => {
    const declared = Number(c.req.header('content-length'));
    const chunked = c.req.header('transfer-encoding') !== undefined || !Number.isSafeInteger(declared) || declared < 0;
    // A body declared over the limit is refused by bodyLimit without being read: nothing to reserve.
    const reserved = chunked ? opts.maxBodyBytes : declared > opts.maxBodyBytes ? 0 : declared;
    if (bytes + reserved > opts.budgetBytes || (opts.maxRequests !== undefined && requests >= opts.maxRequests)) {
      return opts.onBusy(c, { bytes, requests });
    }
    bytes += reserved;
    requests += 1;
    try {
      await next();
    } finally {
      bytes -= reserved;
      requests -= 1;
    }
  };
}
