// Starts the dashboard: checks that the NeoSets can be read (so that a wrong context fails now, with
// the CLI's messages and exit codes), lists and watches them, then listens, with a new token.
import pino from 'pino';
import { startServer } from '../../../shared/http/serve.ts';
import { loadKubeConfig } from '../../../shared/k8s/kubeconfig.ts';
import type { Cluster } from '../cluster.ts';
import { usageError } from '../errors.ts';
import { paths } from '../../../shared/k8s/paths.ts';
import { dashboardApp } from './app.ts';
import { newToken, ownHost } from './guard.ts';
import { startStore } from './store.ts';

export interface StartOptions {
  cluster: Cluster;
  /** undefined: every namespace. */
  namespace?: string;
  port: number;
  address: string;
  readOnly: boolean;
}

export interface RunningDashboard {
  /** What to open: the page, with this run's token (`?token=`), which the page swaps for a cookie. */
  url: string;
  /** The page's address without the token: `http://127.0.0.1:3100/`. */
  base: string;
  token: string;
  port: number;
  close(): Promise<void>;
}

export async function startDashboard(opts: StartOptions): Promise<RunningDashboard> {
  // One NeoSet is enough to prove the CRD is installed and the user may list them.
  await opts.cluster.client.request('GET', paths.neosets(opts.namespace), { query: { limit: 1 } });
  const store = startStore(opts.cluster.kubeConfig ?? loadKubeConfig(), opts.namespace);
  await store.ready;
  const closing = new AbortController();
  let port = opts.port;
  const token = newToken();
  const app = dashboardApp({ ...opts, store, isOwnHost: ownHost(opts.address, () => port), token, port: () => port, closing: closing.signal });
  const server = await startServer({ app, port: opts.port, hostname: opts.address, logger: pino({ level: 'silent' }) }).catch((err: NodeJS.ErrnoException) => {
    store.stop();
    if (err.code === 'EADDRINUSE') throw usageError(`port ${opts.port} on ${opts.address} is in use: pass another --port (0 picks a free one)`, 'dashboard');
    if (err.code === 'EADDRNOTAVAIL') throw usageError(`cannot listen on --address ${opts.address}: no such address on this machine`, 'dashboard');
    throw err;
  });
  port = server.port;
  const host = opts.address.includes(':') ? `[${opts.address}]` : opts.address;
  const base = `http://${['0.0.0.0', '[::]'].includes(host) ? '127.0.0.1' : host}:${port}/`;
  return {
    url: `${base}?token=${token}`,
    base,
    token,
    port,
    async close() {
      closing.abort();
      store.stop();
      await server.close(2000);
    },
  };
}
