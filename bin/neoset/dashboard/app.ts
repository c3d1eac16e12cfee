// The dashboard's HTTP surface, a hono app (as the functions are): the page, its live state
// (Server-Sent Events), and one POST per rollout button. Every request passes the guard first
// (this run's token, Host, and for a write Origin and JSON: guard.ts).
import { Hono } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { ApiError } from '../../../shared/k8s/client.ts';
import type { Cluster } from '../cluster.ts';
import { CliError, ConflictError, describeApiError, NotFoundError } from '../errors.ts';
import { BUTTONS, ButtonInput } from './buttons.ts';
import { loadAssets } from './assets.ts';
import { guard } from './guard.ts';
import { pageState, parseSelection } from './state.ts';
import type { Store } from './store.ts';
import { stateStream } from './stream.ts';

/** Live streams open at once: one per open tab, and a reconnecting one or two. */
export const MAX_STREAMS = 16;

export interface DashboardOptions {
  store: Store;
  cluster: Cluster;
  /** The namespace shown; undefined for all namespaces. */
  namespace?: string;
  readOnly: boolean;
  isOwnHost: (host: string | undefined) => boolean;
  /** This run's secret, required on every request (guard.ts). */
  token: string;
  /** The port listened on (the cookie's name carries it). */
  port: () => number;
  /** Aborted when the server stops: ends the open streams. */
  closing: AbortSignal;
}

export function dashboardApp(opts: DashboardOptions): Hono {
  const { store } = opts;
  const assets = loadAssets();
  const state = (param: string | undefined) => pageState(store, opts, parseSelection(param));
  const app = new Hono();

  // The page loads only its own files and may not be framed (a framed button is a clickjacked one);
  // sends no Referer (no-referrer, secureHeaders' default). First, so that refusals carry it too.
  app.use(
    secureHeaders({
      contentSecurityPolicy: { defaultSrc: ["'self'"], frameAncestors: ["'none'"], formAction: ["'none'"], baseUri: ["'none'"] },
      xFrameOptions: 'DENY',
    }),
  );
  app.use(guard(opts));

  app.get('/api/state', (c) => c.json(state(c.req.query('neoset'))));
  // Each open stream holds a connection and a store listener: a few pages' worth, and no more.
  let streams = 0;
  app.get('/api/stream', (c) => {
    if (streams >= MAX_STREAMS) {
      return c.json({ error: `refused: ${MAX_STREAMS} live streams are open already (close a dashboard tab)` }, 503, { 'retry-after': '5' });
    }
    streams++;
    return stateStream(c, store, () => state(c.req.query('neoset')), opts.closing, () => streams--);
  });

  app.post('/api/neosets/:namespace/:name/:action', async (c) => {
    const { namespace, name } = c.req.param();
    const action = BUTTONS.find((a) => a.id === c.req.param('action'));
    if (opts.readOnly) return c.json({ error: 'refused: this dashboard is read-only (--read-only)' }, 403);
    if (!action) return c.json({ error: `no such action ${JSON.stringify(c.req.param('action'))}` }, 404);
    if (opts.namespace !== undefined && namespace !== opts.namespace) {
      return c.json({ error: `namespace "${namespace}" is not shown by this dashboard (it shows "${opts.namespace}")` }, 404);
    }
    const input = ButtonInput.safeParse(await c.req.json().catch(() => undefined));
    if (!input.success) {
      const issue = input.error.issues[0];
      return c.json({ error: `invalid request body${issue.path.length ? ` at ${issue.path.join('.')}` : ''}: ${issue.message}` }, 400);
    }
    try {
      return c.json({ message: await action.run({ ...opts.cluster, namespace }, name, input.data) });
    } catch (err) {
      if (err instanceof NotFoundError) return c.json({ error: err.message }, 404);
      if (err instanceof ConflictError) return c.json({ error: err.message }, 409);
      if (err instanceof CliError) return c.json({ error: err.message }, 422);
      if (err instanceof ApiError) return c.json({ error: describeApiError(err) }, 502);
      throw err;
    }
  });

  // Browsers ask for it; the page has none.
  app.get('/favicon.ico', (c) => c.body(null, 204));
  app.get('*', (c) => {
    const asset = assets.get(c.req.path);
    return asset ? c.body(asset.body, 200, { 'content-type': asset.type, 'cache-control': 'no-cache' }) : c.notFound();
  });
  return app;
}
