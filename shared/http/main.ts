// A function process's entry: read PORT / HOST / TLS_CERT_FILE / TLS_KEY_FILE / METRICS_PORT /
// NEOSET_HEADERS_TIMEOUT_MS / NEOSET_REQUEST_TIMEOUT_MS, start the
// hono app (shared/http/serve.ts) and, with METRICS_PORT, its /metrics alone over plain http, load the
// API client soon after (deferredKubeClient in shared/k8s/client.ts), and stop gracefully on SIGTERM
// (what Knative and Kubernetes send) or SIGINT.
// A bad setting exits 2 with a message naming the variable.
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { ConfigError } from '../config-error.ts';
import { CLOSE_GRACE_MS, DEFAULT_TIMEOUTS, startServer, type RequestTimeouts, type TlsFiles } from './serve.ts';
import { allFinished } from './unfinished.ts';
import { reportUnhandledRejections } from './unhandled.ts';


/**
 * TLS_CERT_FILE + TLS_KEY_FILE: https. TLS_CLIENT_CA_FILE (with them): callers are asked for a client
 * certificate, verified against this CA, and the routes that require one (admission's webhooks)
 * refuse the others with 401 (SPEC §2.3). A file that does not load is a start-up error.
 */
export function tlsFromEnv(env: NodeJS.ProcessEnv): TlsFiles | null {
  const certFile = env.TLS_CERT_FILE?.trim();
  const keyFile = env.TLS_KEY_FILE?.trim();
  const clientCaFile = env.TLS_CLIENT_CA_FILE?.trim();
  if (!certFile && !keyFile) {
    if (clientCaFile) throw new ConfigError('TLS_CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE: client certificates are verified only over https');
    return null;
  }
  if (!certFile || !keyFile) throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together (or neither, for plain http)');
  return clientCaFile ? { certFile, keyFile, clientCaFile } : { certFile, keyFile };
}

export function portFromEnv(env: NodeJS.ProcessEnv, name = 'PORT'): number {
  const raw = env[name]?.trim() || '8080';
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) throw new ConfigError(`${name}=${JSON.stringify(raw)} is not a TCP port`);
  return port;
}

/** METRICS_PORT: a second, plain-http listener for GET /metrics alone; unset (null): none. */
export function metricsPortFromEnv(env: NodeJS.ProcessEnv): number | null {
  if (!env.METRICS_PORT?.trim()) return null;
  return portFromEnv(env, 'METRICS_PORT');
}

/** Bounds of NEOSET_*_TIMEOUT_MS: 0 would be Node's "never", and past Node's own 300 s nothing is gained. */
const MIN_TIMEOUT_MS = 1000;
const MAX_TIMEOUT_MS = 300_000;

function msFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const ms = Number(raw);
  if (!/^\d+$/.test(raw) || ms < MIN_TIMEOUT_MS || ms > MAX_TIMEOUT_MS) throw new ConfigError(`${name}=${JSON.stringify(raw)}: expected milliseconds from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}`);
  return ms;
}

/**
 * NEOSET_HEADERS_TIMEOUT_MS (default 5000): a request's headers must arrive within it;
 * NEOSET_REQUEST_TIMEOUT_MS (default 10000): the whole request, body included, from its first byte.
 * Past either the connection is answered 408 and closed (serve.ts RequestTimeouts).
 */
export function timeoutsFromEnv(env: NodeJS.ProcessEnv): RequestTimeouts {
  const headersMs = msFromEnv(env, 'NEOSET_HEADERS_TIMEOUT_MS', DEFAULT_TIMEOUTS.headersMs);
  const requestMs = msFromEnv(env, 'NEOSET_REQUEST_TIMEOUT_MS', Math.max(DEFAULT_TIMEOUTS.requestMs, headersMs));
  if (headersMs > requestMs) throw new ConfigError(`NEOSET_HEADERS_TIMEOUT_MS=${headersMs} is over NEOSET_REQUEST_TIMEOUT_MS=${requestMs}: the headers are part of the request`);
  return { headersMs, requestMs };
}

/**
 * GET /metrics of `app`, and nothing else. For the https admission server: Prometheus scrapes pods by
 * IP, which a certificate for the Service's DNS name (signed by a private CA) does not cover.
 */
export function metricsOnly(app: Hono): Hono {
  const metrics = new Hono();
  metrics.get('/metrics', (c) => app.fetch(c.req.raw));
  return metrics;
}

const AFTER_LISTENING_DELAY_MS = 1000;

/**
 * Runs `load` (what the first request will need: client-node, the kubeconfig); its failure (a kubeconfig
 * that does not load) stops the process as a failure to start would.
 */
export async function loadOrExit(name: string, logger: Logger, load: () => Promise<unknown>): Promise<void> {
  try {
    await load();
  } catch (err) {
    logger.fatal({ err }, `${name} cannot start`);
    process.exit(1);
  }
}

/**
 * Starts `makeApp()` from the environment; never returns on a configuration error (exit 2). Then, the
 * server listening, `afterListening()` (loading what the first request will need) a moment later;
 * its failure (e.g. a kubeconfig that does not load) stops the process as a failure to start would.
 */
/**
 * A function's apps: `app` on PORT, `metrics` on METRICS_PORT (shared/metrics/metrics-port.ts: the
 * series that name NeoSets are served there only, SPEC §2.5). A plain Hono: METRICS_PORT serves its
 * GET /metrics (metricsOnly).
 */
export type FunctionApps = Hono | { app: Hono; metrics: Hono };

export async function runFunction(name: string, logger: Logger, makeApp: () => FunctionApps, afterListening?: () => Promise<unknown>): Promise<void> {
  reportUnhandledRejections(logger);
  // An uncaught exception is different: it left synchronous code half-run — possibly between two
  // updates of the coalescing table (shared/k8s/coalesce.ts), where a slot never freed would hold
  // every later event of its NeoSet unanswered — and Node documents the process as in an undefined
  // state after one. So: the same fatal line, then exit 1; the platform starts a fresh instance, which
  // loses nothing (all memory is in the cluster; unanswered events are redelivered). A rejection has
  // no such half-run code (its async function unwound through its own try/finally): it is survived.
  process.on('uncaughtException', (err, origin) => {
    logger.fatal({ err, origin }, `${name}: uncaught exception; exiting`);
    process.exit(1);
  });
  try {
    const made = makeApp();
    const { app, metrics } = made instanceof Hono ? { app: made, metrics: metricsOnly(made) } : made;
    const hostname = process.env.HOST || undefined;
    const metricsPort = metricsPortFromEnv(process.env);
    const timeouts = timeoutsFromEnv(process.env);
    const running = [await startServer({ app, port: portFromEnv(process.env), hostname, tls: tlsFromEnv(process.env), logger, timeouts })];
    if (metricsPort !== null) running.push(await startServer({ app: metrics, port: metricsPort, hostname, logger, timeouts }));
    const stop = (signal: string) => {
      logger.info({ signal }, 'stopping');
      // allSettled: a listener that fails to close must not keep the process from stopping. Then what
      // no request waited for (a re-check's run), within the same grace as the requests'.
      void Promise.allSettled(running.map((r) => r.close()))
        .then(() => Promise.race([allFinished(), new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]))
        .then(() => process.exit(0));
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
    // Not at once: loading client-node takes the event loop for tens of ms, and the platform's first
    // readiness probe should not wait behind it. The first event, if sooner, loads it itself.
    if (afterListening) setTimeout(() => void loadOrExit(name, logger, afterListening), AFTER_LISTENING_DELAY_MS).unref();
  } catch (err) {
    const config = err instanceof ConfigError;
    logger.fatal({ err: config ? (err as Error).message : err }, `${name} cannot start`);
    process.exit(config ? 2 : 1);
  }
}
