// A fault-injecting proxy in front of the real kube-apiserver, for the chaos suite: the function
// processes get a kubeconfig pointing at it (plain http on loopback, no credentials); it forwards each
// request with the admin credentials — or, for a seeded ~10 % of them, answers a Kubernetes-style 500
// Status, resets the connection without forwarding, or forwards and resets before the answer (the
// write landed, the caller cannot know). Bounded: at most `maxFaults` faults, so a run can always finish.
// With `delayMs`, every request waits that long before it is answered or forwarded: a slow API server
// (issue 34's sweep of 1,500 NeoSets with 300 ms added to each request; `rate: 0` for no faults).
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

export interface FaultProxyOptions {
  /** The API server to forward to, and the credentials to forward with. */
  kubeConfig: KubeConfig;
  seed: number;
  /** Share of requests answered with a fault (default 0.1): a third each 500s, resets before and after forwarding. */
  rate?: number;
  /** Faults at most (default 400). */
  maxFaults?: number;
  /** Added to every request before it is answered or forwarded, in ms (default 0). */
  delayMs?: number;
  /** Told each request as it arrives (method and path with query), e.g. to count a test's. */
  onRequest?: (method: string, url: string) => void;
}

export interface FaultStats {
  requests: number;
  forwarded: number;
  internalErrors: number;
  /** Reset before forwarding: the request never reached the API server. */
  resets: number;
  /** Reset after forwarding: the request was served (a write landed), the caller never hears of it. */
  lostAnswers: number;
}

export interface FaultProxy {
  url: string;
  stats: FaultStats;
  /** A kubeconfig whose only cluster is this proxy. */
  kubeconfigYaml(): string;
  stop(): Promise<void>;
}

/** mulberry32: a small seeded PRNG, so that a run's fault sequence can be told and replayed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'upgrade', 'host'];

const internalError = (path: string) =>
  JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: chaos: injected fault on ${path}`,
    reason: 'InternalError',
    details: { causes: [{ message: 'chaos: injected fault' }] },
    code: 500,
  });

/** A kubeconfig whose only cluster is the proxy at `url` (plain http on loopback, no credentials). */
export function proxyKubeconfigYaml(url: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    // client-node refuses plain http unless told to skip TLS verification: there is no TLS here.
    clusters: [{ name: 'chaos', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'chaos', user: {} }],
    contexts: [{ name: 'chaos', context: { cluster: 'chaos', user: 'chaos' } }],
    'current-context': 'chaos',
  });
}

export async function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  const upstream = new URL(opts.kubeConfig.getCurrentCluster()!.server);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 64 });
  const random = seeded(opts.seed);
  const rate = opts.rate ?? 0.1;
  const maxFaults = opts.maxFaults ?? 400;
  const stats: FaultStats = { requests: 0, forwarded: 0, internalErrors: 0, resets: 0, lostAnswers: 0 };

  const delayMs = opts.delayMs ?? 0;
  const server = http.createServer((req, res) => {
    stats.requests++;
    opts.onRequest?.(req.method ?? '', req.url ?? '/');
    if (delayMs > 0) setTimeout(() => serve(req, res), delayMs);
    else serve(req, res);
  });

  function serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const roll = random();
    if (stats.internalErrors + stats.resets + stats.lostAnswers < maxFaults && roll < rate) {
      if (roll < rate / 3) {
        stats.internalErrors++;
        req.resume();
        res.writeHead(500, { 'Content-Type': 'application/json' }).end(internalError(req.url ?? '/'));
        return;
      }
      if (roll < (2 * rate) / 3) {
        stats.resets++;
        req.socket.resetAndDestroy();
        return;
      }
      // The request reaches the API server (a write lands), its answer never reaches the caller.
      stats.lostAnswers++;
      void forward(req, res, true).catch(() => res.destroy());
      return;
    }
    void forward(req, res).catch(() => res.destroy());
  }

  async function forward(req: http.IncomingMessage, res: http.ServerResponse, loseAnswer = false): Promise<void> {
    const headers = { ...req.headers };
    for (const h of HOP_BY_HOP) delete headers[h];
    const options: https.RequestOptions = { method: req.method, headers, agent };
    await opts.kubeConfig.applyToHTTPSOptions(options);
    options.agent = agent;
    const out = https.request(new URL(req.url ?? '/', upstream), options, (answer) => {
      stats.forwarded++;
      if (loseAnswer) {
        answer.resume();
        req.socket.resetAndDestroy();
        return;
      }
      const back = { ...answer.headers };
      for (const h of HOP_BY_HOP) delete back[h];
      res.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    stats,
    kubeconfigYaml: () => proxyKubeconfigYaml(url),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
