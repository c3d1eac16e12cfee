// The hono app shape shared by the event-driven functions (reconcile, readiness): POST / takes one
// CloudEvent, GET /healthz and GET /metrics serve the platform. Answers follow SPEC §2.1: an empty
// 2xx (a Knative Broker treats any non-CloudEvent body as a failed delivery), 400 + JSON for a
// malformed event (not retried), 503 only when redelivery can help, 500 for a bug.
// Every body is bounded as it is read (SPEC §2.3): 413 past MAX_EVENT_BYTES, and the bytes of
// bodies in flight — what has arrived of them, not what they declare — share BODY_BUDGET_BYTES (503,
// retried, past it); a request that has not arrived within its deadline is dropped (serve.ts).
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { bodyBudget, boundedBody } from './body-budget.ts';
import { takeBody } from './counted-body.ts';
import { releaseBuffer } from '../buffer-release.ts';
import { createLogger } from './logger.ts';
import { BadEventError, parseEvent, type ParsedEvent } from '../events/target.ts';
import { ApiError, type KubeClient } from '../k8s/client.ts';
import { textWithoutLongStrings, type LongStrings } from '../k8s/long-strings.ts';
import { POD_LONG_STRINGS } from '../k8s/pod-trim.ts';
import type { Outcome } from '../k8s/reconcile.ts';
import { epochMs } from '../k8s/run-timing.ts';
import { recordBuildInfo, registry } from '../metrics/registry.ts';
import { NEOSET_VERSION } from '../version.ts';
import { callerCheck, type OidcConfig } from './oidc.ts';

export interface EventAppOptions {
  /** The function's name, in logs and /healthz. */
  name: string;
  handle: (event: ParsedEvent) => Promise<Outcome[]>;
  logger?: Logger;
  /** Extra routes (e.g. scrape-time gauges) mounted before the defaults. */
  extend?: (app: Hono) => void;
}

/**
 * The largest event body read. The biggest legitimate event is a Resource-mode Pod or NeoSet event:
 * the object (etcd stores at most 1.5 MiB of it; its JSON, with Go's escaping of <, > and &, can be
 * larger, and the API server itself takes write bodies up to 3 MiB) plus the CloudEvent envelope.
 * Nothing else bounds it: hono, @hono/node-server, Node's http and the cloudevents parser all read
 * whatever comes (a 120 MiB Pod event was read whole and answered 200).
 */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/**
 * The bytes of event bodies one instance holds at once. Read and parsed, an event costs about 3.5x
 * its body (measured on a 4 MiB Pod event: the 4 MiB of bytes, its string while parsing, 6.2 MiB of
 * parsed objects), so 16 MiB of bodies is about 60 MiB of memory, within the functions' 256 Mi limit
 * beside a ~70 MiB process; containerConcurrency 50 x 4 MiB bodies would be 700 MiB. Legitimate
 * events are a few KiB (a Pod with its managedFields: ~10 KiB): only large bodies ever wait.
 */
export const BODY_BUDGET_BYTES = 16 * 1024 * 1024;

/**
 * Cut from an event's bytes before they become a string (long-strings.ts): what a listed pod loses
 * (pod-trim.ts). A Resource-mode event carries its whole object, and what the functions read of it —
 * names, resourceVersion, generation, status, NeoSet's own annotations — is never that long; a
 * tenant's 1 MiB env value is. Left in, every event of such a NeoSet or its pods made a 1 MiB string
 * and its parse (60 NeoSets' events took reconcile's heap past 128 MiB, memory-bounded.test.ts). A cut
 * value is only ever a hint's: whatever is decided or written is read from the API server.
 */
export const EVENT_LONG_STRINGS: LongStrings = POD_LONG_STRINGS;

/** An event body's text: its long string values cut when it is long enough to hold one. */
export const eventText = (bytes: Buffer): string => (bytes.length > EVENT_LONG_STRINGS.over ? textWithoutLongStrings(bytes, EVENT_LONG_STRINGS) : bytes.toString('utf8'));

export function createEventApp(opts: EventAppOptions): Hono {
  const log = opts.logger ?? createLogger(opts.name);
  const app = new Hono();
  // Over the budget: 503 with Retry-After, no more of it read — a redelivery finds room.
  const budget = bodyBudget({
    budgetBytes: BODY_BUDGET_BYTES,
    maxBodyBytes: MAX_EVENT_BYTES,
    onBusy: (c, inFlight) => {
      log.warn({ outcome: 'retry', error: 'event bodies in flight over budget', budget: BODY_BUDGET_BYTES, ...inFlight }, 'event');
      c.header('Retry-After', '1');
      return c.json({ error: `over ${BODY_BUDGET_BYTES} bytes of event bodies in flight: retry` }, 503);
    },
  });
  // Declared over the limit by its Content-Length: refused unread (Node's parser holds the body to
  // that length); chunked: the budget stops reading it past the limit.
  const limit = boundedBody({
    maxSize: MAX_EVENT_BYTES,
    onError: (c) => {
      log.warn({ outcome: 'rejected', error: 'body too large', limit: MAX_EVENT_BYTES }, 'event');
      // The rest of the body is left unread on the connection: a client must not send on it again.
      c.header('Connection', 'close');
      return c.json({ error: `event body over ${MAX_EVENT_BYTES} bytes` }, 413);
    },
  });
  recordBuildInfo(opts.name);
  app.get('/healthz', (c) => c.json({ status: 'ok', function: opts.name, version: NEOSET_VERSION }));
  opts.extend?.(app);
  app.get('/metrics', async (c) => c.text(await registry.metrics(), 200, { 'Content-Type': registry.contentType }));

  app.post('/', budget, limit, async (c) => {
    const started = performance.now();
    const arrived = epochMs();
    const headers: Record<string, string> = {};
    c.req.raw.headers.forEach((v, k) => (headers[k] = v));
    // Outside the try: a body that cannot be read is answered by onError (400).
    const bytes = await takeBody(c);
    const body = eventText(bytes);
    // The event is its text now (long strings cut): the bytes are freed at once, not at the next collection.
    releaseBuffer(bytes);
    let event: ParsedEvent | undefined;
    try {
      event = parseEvent(headers, body);
      const outcomes = await opts.handle(event);
      const failed = outcomes.filter((o) => o.result === 'error');
      const transient = failed.some((o) => o.transient);
      // A resync tick sweeps every NeoSet: one that failed waits for the next tick (logged here), as a
      // redelivery would redo the whole sweep and let one slow or failing NeoSet hold up the others.
      const nextTick = failed.length > 0 && event.target.kind === 'all';
      log[nextTick ? 'warn' : 'info'](
        {
          eventId: event.id,
          type: event.type,
          target: event.target,
          neosets: outcomes.map(({ neoset, result, actions, statusWritten, requeueAfter, error, skipped, timing, reread }) => ({ neoset, result, actions, statusWritten, requeueAfter, error, skipped, timing, reread })),
          outcome: failed.length === 0 ? 'ok' : nextTick ? 'next-tick' : transient ? 'retry' : 'error',
          ms: Math.round(performance.now() - started),
          arrived,
        },
        'event',
      );
      if (failed.length === 0 || nextTick) return c.body(null, 200);
      return c.json({ error: failed.map((o) => `${o.neoset}: ${o.error}`).join('; ') }, transient ? 503 : 500);
    } catch (err) {
      // A malformed event is not retried (400); an API server that could not be reached while
      // naming the event's NeoSets (a resync tick's LIST, a Reference-mode GET) may be next time (503).
      const bad = err instanceof BadEventError;
      const transient = err instanceof ApiError && err.isTransient;
      const outcome = bad ? 'rejected' : transient ? 'retry' : 'error';
      log[bad || transient ? 'warn' : 'error']({ eventId: event?.id, outcome, error: (err as Error).message, ms: Math.round(performance.now() - started) }, 'event');
      return c.json({ error: (err as Error).message }, bad ? 400 : transient ? 503 : 500);
    }
  });
  // A body stream that breaks (the sender went away mid-body) is that request's failure, not a 500.
  app.onError((err, c) => c.json({ error: `cannot read the request: ${err.message}` }, 400));
  return app;
}

/**
 * `app` behind the caller check of `oidc` (shared/http/oidc.ts) on POST /, or `app` itself when the
 * checks are off. The check runs first: an unchecked caller's body is never read (the server drains
 * and drops it), and its size counts against nothing.
 */
export function guardEvents(app: Hono, oidc: OidcConfig | null, client: KubeClient, logger: Logger): Hono {
  if (!oidc) {
    logger.info({ oidc: 'off' }, 'callers are not checked (NEOSET_OIDC=off)');
    return app;
  }
  logger.info({ oidc: 'required', audience: oidc.audience, subjects: oidc.subjects }, 'callers need a Knative OIDC token');
  const guarded = new Hono();
  guarded.post('/', callerCheck(client, oidc, { logger }));
  guarded.all('*', (c) => app.fetch(c.req.raw, c.env));
  return guarded;
}
