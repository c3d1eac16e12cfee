// The kubelet's HTTPS port, as far as `kubectl logs` needs it: kube-apiserver serves pods/log by
// calling GET https://<node address>:<daemonEndpoints.kubeletEndpoint.Port>/containerLogs/<ns>/<pod>/<container>
// (pkg/registry/core/pod/strategy.go LogLocation) with its --kubelet-client-certificate.
//
// Every request is an input. As kubelet with anonymous auth off and webhook authorization on:
//   - authentication: a client certificate verified against the cluster's client CA — the one the
//     API server itself publishes (kube-system/extension-apiserver-authentication, client-ca-file);
//     none, or one of another CA → 401;
//   - authorization: a SubjectAccessReview for the certificate's user and groups, `get` on
//     `nodes/proxy` of this node (pkg/kubelet/server/auth.go: /containerLogs is the proxy
//     subresource) → 403 unless allowed. The API server's certificate is bound to
//     system:kubelet-api-admin (control-plane.ts); users' certificates are not.
// Then names are checked as DNS names and looked up among the pods this kubelet runs (never turned
// into a path), and any fault becomes an answer, never a crash.
// The serving certificate is self-signed: kube-apiserver does not verify it unless given
// --kubelet-certificate-authority, which it is not.

import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { AuthorizationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { createCa, issueServingCert, LOOPBACK_HOSTS } from '../cluster/certs.ts';
import { describeError } from './api-errors.ts';
import { LogRequestError, parseLogRequest } from './log-options.ts';
import { streamLog } from './log-stream.ts';

/** What a pod's container log is, as the kubelet's pods know it (process/pods.ts logOf). */
export type LogLookup =
  | { kind: 'file'; path: string; live: () => boolean }
  /** A simulated pod: no process, nothing written. */
  | { kind: 'empty' }
  | { kind: 'error'; status: 400 | 404; message: string };

export interface LogServerOptions {
  kubeConfig: KubeConfig;
  nodeName: string;
  /** The log of `container` of pod `namespace/pod`, or undefined when this kubelet runs no such pod. */
  lookup: (key: string, container: string, previous: boolean) => LogLookup | undefined;
  log: (msg: string) => void;
}

export interface LogServer {
  /** The address kube-apiserver dials (the Node's ExternalIP) and the port (daemonEndpoints). */
  address: string;
  port: number;
  stop(): Promise<void>;
}

export const LOG_SERVER_ADDRESS = '127.0.0.1';
const MAX_URL = 4096;
const MAX_CONNECTIONS = 64;
// kubelet's webhook authorizer caches allowed answers 5 min and denied ones 30 s; shorter here.
const ALLOWED_TTL_MS = 60_000;
const DENIED_TTL_MS = 10_000;
const MAX_CACHED = 256;

/** The CA the API server trusts for client certificates, as it publishes it for extension servers. */
async function clusterClientCa(core: CoreV1Api): Promise<string> {
  const cm = await core.readNamespacedConfigMap({ name: 'extension-apiserver-authentication', namespace: 'kube-system' });
  const ca = cm.data?.['client-ca-file'];
  if (!ca) throw new Error('kube-system/extension-apiserver-authentication has no client-ca-file');
  return ca;
}

function reply(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
  res.end(`${message}\n`);
}

export async function startLogServer(opts: LogServerOptions): Promise<LogServer> {
  const core = opts.kubeConfig.makeApiClient(CoreV1Api);
  const authz = opts.kubeConfig.makeApiClient(AuthorizationV1Api);
  const [clientCa, serving] = await Promise.all([clusterClientCa(core), createCa(`${opts.nodeName}-kubelet-serving`).then((ca) => issueServingCert(ca, LOOPBACK_HOSTS))]);
  const decisions = new Map<string, { allowed: boolean; until: number; reason: string }>();
  const follows = new Set<() => void>();

  const authorize = async (user: string, groups: string[]): Promise<{ allowed: boolean; reason: string }> => {
    const cacheKey = JSON.stringify([user, groups]);
    const cached = decisions.get(cacheKey);
    if (cached && cached.until > Date.now()) return cached;
    const review = await authz.createSubjectAccessReview({
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user, groups, resourceAttributes: { verb: 'get', resource: 'nodes', subresource: 'proxy', name: opts.nodeName } },
      },
    });
    const allowed = review.status?.allowed === true;
    if (decisions.size >= MAX_CACHED) decisions.clear();
    const decision = { allowed, reason: review.status?.reason ?? '', until: Date.now() + (allowed ? ALLOWED_TTL_MS : DENIED_TTL_MS) };
    decisions.set(cacheKey, decision);
    return decision;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const socket = req.socket as TLSSocket;
    const peer = socket.authorized ? socket.getPeerCertificate() : undefined;
    const user = typeof peer?.subject?.CN === 'string' ? peer.subject.CN : undefined;
    if (!peer || !user) return reply(res, 401, 'Unauthorized');
    const o = peer.subject.O as string | string[] | undefined;
    const groups = [...(o === undefined ? [] : Array.isArray(o) ? o : [o]), 'system:authenticated'];
    const { allowed, reason } = await authorize(user, groups);
    if (!allowed) {
      return reply(res, 403, `Forbidden (user=${user}, verb=get, resource=nodes, subresource=proxy)${reason ? `: ${reason}` : ''}`);
    }
    if (req.method !== 'GET') return reply(res, 405, 'Method Not Allowed');
    if ((req.url ?? '').length > MAX_URL) return reply(res, 414, 'URI Too Long');
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const request = parseLogRequest(url.pathname, url.searchParams, Date.now());
    // Per-line times are not kept (the container writes its file directly, container.ts).
    if (request.timestamps) throw new LogRequestError(400, 'timestamps: not kept by this kubelet (a container writes its raw output to its log file)');
    const found = opts.lookup(`${request.namespace}/${request.pod}`, request.container, request.previous);
    if (!found) throw new LogRequestError(404, `pod "${request.pod}" does not exist`);
    if (found.kind === 'error') throw new LogRequestError(found.status, found.message);
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    if (found.kind === 'empty') return void res.end();
    // sinceSeconds / sinceTime by whole file (no per-line times): a start last written before the
    // time asked for has nothing after it.
    if (request.sinceMs !== undefined) {
      const mtime = (await stat(found.path).catch(() => undefined))?.mtimeMs ?? 0;
      if (mtime < request.sinceMs && !request.follow) return void res.end();
    }
    let leave = (): void => {};
    const gone = new Promise<void>((resolve) => (leave = resolve));
    res.once('close', leave);
    follows.add(leave);
    try {
      await streamLog(found.path, res, { tailLines: request.tailLines, limitBytes: request.limitBytes, follow: request.follow, live: found.live, gone });
    } finally {
      follows.delete(leave);
    }
    res.end();
  };

  const server: Server = createServer(
    {
      cert: serving.certPem,
      key: serving.keyPem,
      ca: clientCa,
      // Asked for, verified against `ca`, and judged per request (401 without one), as kubelet does.
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        if (err instanceof LogRequestError) return reply(res, err.status, err.message);
        if ((err as NodeJS.ErrnoException)?.code === 'ENOENT') return reply(res, 404, 'log file not found');
        opts.log(`containerLogs ${String(req.url).slice(0, 200)}: ${describeError(err)}`);
        reply(res, 500, 'Internal Server Error');
      });
    },
  );
  server.maxConnections = MAX_CONNECTIONS;
  server.headersTimeout = 10_000;
  server.on('tlsClientError', () => {}); // a bad handshake is the client's problem
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOG_SERVER_ADDRESS, () => resolve());
  });
  server.on('error', (err) => opts.log(`log server: ${describeError(err)}`));
  const port = (server.address() as { port: number }).port;
  opts.log(`serving /containerLogs on https://${LOG_SERVER_ADDRESS}:${port}`);
  return {
    address: LOG_SERVER_ADDRESS,
    port,
    async stop() {
      for (const leave of follows) leave();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
