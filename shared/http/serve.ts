// Serves a function's hono app: over HTTPS when given a certificate (the API server calls webhooks only
// over TLS, SPEC §5), else plain HTTP (behind a TLS-terminating proxy, or the Knative queue-proxy).
// The certificate is reloaded when its files change, so a rotated Secret (or cert-manager renewal)
// takes effect without a restart.
import { serve, type ServerType } from '@hono/node-server';
import { watchFile, unwatchFile } from 'node:fs';
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { Hono } from 'hono';
import type { Logger } from 'pino';

/**
 * Idle keep-alive connections are kept this long. Behind Knative, queue-proxy reuses its connections
 * to the container for up to 90 s (knative.dev/pkg network.NewProxyAutoTransport clones Go's
 * http.DefaultTransport: IdleConnTimeout 90 s); Node's default of 5 s closes them first, and a request
 * queue-proxy sends just as Node closes the socket is reset — a failed delivery, redelivered by the
 * Broker. The server must outlast the client: 95 s.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 95_000;

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export interface ServeOptions {
  app: Hono;
  port: number;
  hostname?: string;
  tls?: TlsFiles | null;
  logger: Logger;
  /** How often the certificate files are checked for changes (stat polling). Default 1000 ms. */
  pollMs?: number;
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

async function readPair(files: TlsFiles): Promise<{ cert: Buffer; key: Buffer }> {
  const [cert, key] = await Promise.all([readFile(files.certFile), readFile(files.keyFile)]);
  // Throws on a half-written file or a key that does not match the certificate (mid-rotation).
  tls.createSecureContext({ cert, key });
  return { cert, key };
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const { app, logger } = opts;
  const files = opts.tls ?? null;
  const initial = files ? await readPair(files) : null;

  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = initial
      ? serve({ fetch: app.fetch, port: opts.port, hostname: opts.hostname, createServer: https.createServer, serverOptions: initial }, () => resolve(s))
      : serve({ fetch: app.fetch, port: opts.port, hostname: opts.hostname }, () => resolve(s));
    s.once('error', reject);
  });
  const http1 = server as https.Server;
  http1.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // A request's headers must arrive within this; kept above keepAliveTimeout, as Node's docs advise.
  http1.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
  const port = (server.address() as AddressInfo).port;
  const protocol = files ? 'https' : 'http';
  logger.info({ port, protocol, hostname: opts.hostname ?? '(all)' }, 'listening');

  let reloading = Promise.resolve(true);
  const reloadTls = (): Promise<boolean> => {
    if (!files) return Promise.resolve(false);
    reloading = reloading.then(async () => {
      try {
        const pair = await readPair(files);
        (server as https.Server).setSecureContext(pair);
        logger.info({ certFile: files.certFile }, 'tls certificate reloaded');
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
  if (files) {
    // Stat polling rather than fs.watch: it follows the symlinks a mounted Secret is swapped through.
    for (const file of [files.certFile, files.keyFile]) watchFile(file, { interval: opts.pollMs ?? 1000 }, onChange);
  }

  const close = (graceMs = 10_000) =>
    new Promise<void>((resolve) => {
      if (files) for (const file of [files.certFile, files.keyFile]) unwatchFile(file, onChange);
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
