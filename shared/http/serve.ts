// Serves a function's hono app: over HTTPS when given a certificate (the API server calls webhooks only
// over TLS, SPEC §5), else plain HTTP (behind a TLS-terminating proxy, or the Knative queue-proxy).
// The certificate is reloaded when its files change, so a rotated Secret (or cert-manager renewal)
// takes effect without a restart. With a client CA (admission, SPEC §2.3) the server asks every
// caller for a certificate and verifies it against that CA; the app decides which routes require one
// (requireClientCert in client-cert.ts), so that kubelet's probes of /healthz, which present none,
// still pass.
import { serve, type Http2Bindings, type HttpBindings, type ServerType } from '@hono/node-server';
import { watchFile, unwatchFile } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import tls from 'node:tls';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { describeClientCert, type ClientCertEnv } from './client-cert.ts';

/**
 * Idle keep-alive connections are kept this long. Behind Knative, queue-proxy reuses its connections
 * to the container for up to 90 s (knative.dev/pkg network.NewProxyAutoTransport clones Go's
 * http.DefaultTransport: IdleConnTimeout 90 s); Node's default of 5 s closes them first, and a request
 * queue-proxy sends just as Node closes the socket is reset — a failed delivery, redelivered by the
 * Broker. The server must outlast the client: 95 s.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 95_000;

/**
 * How long a request may take to arrive: its headers, and the whole request (headers and body) from
 * its first byte. Node's own are 60 s and 300 s, during which a client that sends a byte now and then
 * holds a socket, and held the body budget too while it was charged on the declared length (issue
 * 34). Legitimate callers send at once: the Broker's dispatcher and the API server, a few MiB at
 * most, in the cluster's network. Past either, Node answers 408 and closes the connection; what its
 * body had charged is released (body-budget.ts). Once the request has arrived, its handler takes
 * as long as it takes. NEOSET_HEADERS_TIMEOUT_MS / NEOSET_REQUEST_TIMEOUT_MS (main.ts).
 */
export interface RequestTimeouts {
  headersMs: number;
  requestMs: number;
}

export const DEFAULT_TIMEOUTS: RequestTimeouts = { headersMs: 5_000, requestMs: 10_000 };

/**
 * How often Node looks for requests past those deadlines (its default, 30 s, would let a 10 s
 * deadline run to 40 s): a walk over the connections still receiving a request, once a second.
 */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1000;

/** How long close() lets the requests in flight finish before it ends their connections. */
export const CLOSE_GRACE_MS = 10_000;

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** The CA that client certificates must chain to (PEM file); unset: none are asked for. */
  clientCaFile?: string;
}

export interface ServeOptions {
  app: Hono;
  port: number;
  hostname?: string;
  tls?: TlsFiles | null;
  logger: Logger;
  /** How often the certificate files are checked for changes (stat polling). Default 1000 ms. */
  pollMs?: number;
  /** Default DEFAULT_TIMEOUTS. */
  timeouts?: RequestTimeouts;
}

export interface RunningServer {
  server: ServerType;
  port: number;
  protocol: 'http' | 'https';
  /** Re-reads the certificate files now; false (and the old certificate kept) if they do not load. */
  reloadTls(): Promise<boolean>;
  /** Stops accepting connections, lets requests in flight finish (at most graceMs), then resolves. */
  close(graceMs?: number): Promise<void>;
}

async function readPair(files: TlsFiles): Promise<{ cert: Buffer; key: Buffer; ca?: Buffer }> {
  const [cert, key, ca] = await Promise.all([readFile(files.certFile), readFile(files.keyFile), files.clientCaFile ? readFile(files.clientCaFile) : undefined]);
  // Throws on a half-written file or a key that does not match the certificate (mid-rotation), or a
  // client CA that is not PEM.
  tls.createSecureContext({ cert, key, ca });
  if (ca && !/-----BEGIN CERTIFICATE-----/.test(ca.toString('latin1'))) throw new Error(`${files.clientCaFile}: no PEM certificate`);
  return ca ? { cert, key, ca } : { cert, key };
}

/**
 * requestCert without rejectUnauthorized: the handshake completes either way and the app refuses,
 * per route, a request whose certificate did not verify (401 with a reason, rather than a TLS alert
 * that says nothing to whoever debugs it — and /healthz stays open to probes).
 */
const clientCertOptions = (files: TlsFiles | null) => (files?.clientCaFile ? { requestCert: true, rejectUnauthorized: false } : {});

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const { app, logger } = opts;
  const files = opts.tls ?? null;
  const initial = files ? await readPair(files) : null;

  // With a client CA, every request carries what its connection's certificate proved (client-cert.ts).
  const withClientCert = files?.clientCaFile !== undefined;
  const fetch = (request: Request, env: HttpBindings | Http2Bindings) =>
    withClientCert ? app.fetch(request, { ...env, ...describeClientCert(env.incoming.socket as tls.TLSSocket) } satisfies ClientCertEnv) : app.fetch(request, env);
  const { headersMs, requestMs } = opts.timeouts ?? DEFAULT_TIMEOUTS;
  // Given to the constructor, which checks them (headersTimeout <= requestTimeout).
  const deadlines = { headersTimeout: headersMs, requestTimeout: requestMs, connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS };
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = initial
      ? serve(
          {
            fetch,
            port: opts.port,
            hostname: opts.hostname,
            createServer: https.createServer,
            // A TLS handshake that does not finish holds a socket as slow headers would (Node: 120 s).
            serverOptions: { ...initial, ...clientCertOptions(files), ...deadlines, handshakeTimeout: headersMs },
          },
          () => resolve(s),
        )
      : serve({ fetch, port: opts.port, hostname: opts.hostname, serverOptions: deadlines }, () => resolve(s));
    s.once('error', reject);
  });
  const http1 = server as https.Server;
  // headersTimeout counts from a request's first byte, not from the connection's idle start: a
  // keep-alive connection idle for longer than it is not cut (serve.test).
  http1.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Closing: a keep-alive connection whose request is in flight would, once answered, sit idle until
  // keepAliveTimeout (95 s) — server.close() closes only the connections idle at that moment — and hold
  // the stop until graceMs (or the platform's SIGKILL). So the answers still to be written say
  // `Connection: close`, and each such connection ends with its answer.
  const answering = new Set<http.ServerResponse>();
  let closing = false;
  // A connection that sends nothing is no request yet, which neither deadline covers (Node keeps it
  // open for good): it has headersMs of silence before its first request; between requests Node's
  // keepAliveTimeout applies (Node clears that one itself as a request comes: only the first's is ours).
  http1.on(files ? 'secureConnection' : 'connection', (socket: Socket) => socket.setTimeout(headersMs));
  http1.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.socket.timeout) req.socket.setTimeout(0);
    // An answer already written (a synchronous handler) has said what it said.
    if (closing) return void (res.headersSent || res.setHeader('connection', 'close'));
    answering.add(res);
    res.once('close', () => answering.delete(res));
  });
  const port = (server.address() as AddressInfo).port;
  const protocol = files ? 'https' : 'http';
  logger.info({ port, protocol, hostname: opts.hostname ?? '(all)', clientCa: files?.clientCaFile ?? null }, 'listening');

  let reloading = Promise.resolve(true);
  const reloadTls = (): Promise<boolean> => {
    if (!files) return Promise.resolve(false);
    reloading = reloading.then(async () => {
      try {
        const pair = await readPair(files);
        (server as https.Server).setSecureContext(pair);
        logger.info({ certFile: files.certFile, clientCaFile: files.clientCaFile }, 'tls certificate reloaded');
        return true;
      } catch (err) {
        // Mid-rotation the certificate and key may not match yet; the next change retries.
        logger.warn({ err: (err as Error).message }, 'tls certificate not reloaded (kept the previous one)');
        return false;
      }
    });
    return reloading;
  };
  const onChange = (curr: { mtimeMs: number }, prev: { mtimeMs: number }) => {
    if (curr.mtimeMs !== prev.mtimeMs) void reloadTls();
  };
  const watched = files ? [files.certFile, files.keyFile, ...(files.clientCaFile ? [files.clientCaFile] : [])] : [];
  // Stat polling rather than fs.watch: it follows the symlinks a mounted Secret is swapped through.
  for (const file of watched) watchFile(file, { interval: opts.pollMs ?? 1000 }, onChange);

  const close = (graceMs = CLOSE_GRACE_MS) =>
    new Promise<void>((resolve) => {
      for (const file of watched) unwatchFile(file, onChange);
      closing = true;
      for (const res of answering) if (!res.headersSent) res.setHeader('connection', 'close');
      const force = setTimeout(() => (server as https.Server).closeAllConnections?.(), graceMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      (server as https.Server).closeIdleConnections?.();
    });

  return { server, port, protocol, reloadTls, close };
}
