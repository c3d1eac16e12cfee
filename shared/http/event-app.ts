// The hono app shape shared by the event-driven functions (reconcile, readiness): POST / takes one
// CloudEvent, GET /healthz and GET /metrics serve the platform. Answers follow SPEC §2.1: an empty
// 2xx (a Knative Broker treats any non-CloudEvent body as a failed delivery), 400 + JSON for a
// malformed event (not retried), 503 only when redelivery can help, 500 for a bug.
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { createLogger } from './logger.ts';
import { BadEventError, parseEvent, type ParsedEvent } from '../events/target.ts';
import { ApiError } from '../k8s/client.ts';
import type { Outcome } from '../k8s/reconcile.ts';
import { registry } from '../metrics/registry.ts';

export interface EventAppOptions {
  /** The function's name, in logs and /healthz. */
  name: string;
  handle: (event: ParsedEvent) => Promise<Outcome[]>;
  logger?: Logger;
  /** Extra routes (e.g. scrape-time gauges) mounted before the defaults. */
  extend?: (app: Hono) => void;
}

export function createEventApp(opts: EventAppOptions): Hono {
  const log = opts.logger ?? createLogger(opts.name);
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok', function: opts.name }));
  opts.extend?.(app);
  app.get('/metrics', async (c) => c.text(await registry.metrics(), 200, { 'Content-Type': registry.contentType }));

  app.post('/', async (c) => {
    const started = performance.now();
    const headers: Record<string, string> = {};
    c.req.raw.headers.forEach((v, k) => (headers[k] = v));
    let event: ParsedEvent | undefined;
    try {
      event = parseEvent(headers, await c.req.text());
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
          neosets: outcomes.map(({ neoset, result, actions, statusWritten, requeueAfter, error, skipped }) => ({ neoset, result, actions, statusWritten, requeueAfter, error, skipped })),
          outcome: failed.length === 0 ? 'ok' : nextTick ? 'next-tick' : transient ? 'retry' : 'error',
          ms: Math.round(performance.now() - started),
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
  return app;
}
