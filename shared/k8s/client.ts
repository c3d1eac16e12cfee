// A JSON client for the Kubernetes API on top of client-node's KubeConfig (auth, contexts,
// in-cluster config). Why not the generated typed APIs: they deserialize into models that turn
// timestamps into Date and drop fields they don't know, while the core works on wire JSON and every
// write must carry exactly the resourceVersion / patch type it was computed with (SPEC §2, §8).
import https from 'node:https';
import http from 'node:http';
// Only the type: client-node is loaded by kubeconfig.ts, where a KubeConfig is made (see deferred()).
import type { KubeConfig } from '@kubernetes/client-node';
import { apiRequests } from '../metrics/registry.ts';
import { answerParser, AnswerTooLarge, type AnswerParser } from './answer-stream.ts';
import { ReadRefused, type ByteBudget } from './read-budget.ts';
import type { LongStrings } from './long-strings.ts';

export type PatchType = 'merge' | 'strategic' | 'json';
const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
};

/** A failed API call, carrying what the edge needs: the HTTP status and the Kubernetes reason. */
export class ApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly verb: string;
  readonly path: string;
  /** The Status's `details.causes` (field and reason of each invalid value), when it has them. */
  readonly causes: StatusCause[];
  /**
   * The API server's own message (the Status's `message`, or why there was no answer), without the
   * `VERB path: status reason: ` that `message` starts with: what a user, an Event or a pod annotation shows.
   */
  readonly serverMessage: string;
  constructor(verb: string, path: string, status: number, reason: string, message: string, causes: StatusCause[] = []) {
    super(`${verb} ${path}: ${status} ${reason}: ${message}`);
    this.name = 'ApiError';
    this.serverMessage = message;
    this.status = status;
    this.reason = reason;
    this.verb = verb;
    this.path = path;
    this.causes = causes;
  }
  /** A write lost a race (resourceVersion / uid precondition, or the object already exists). */
  get isConflict(): boolean {
    return this.status === 409;
  }
  get isNotFound(): boolean {
    return this.status === 404;
  }
  /**
   * 403 from kube-apiserver's NamespaceLifecycle: nothing can be created in a namespace that is being
   * deleted (the Status's cause `NamespaceTerminating`). Its objects go with it.
   */
  get isNamespaceTerminating(): boolean {
    return this.status === 403 && this.causes.some((c) => c.reason === 'NamespaceTerminating');
  }
  /** Worth redelivering the event: the API server is unavailable or overloaded. */
  get isTransient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/** metav1.StatusCause: `field` is the path within the object sent, e.g. `spec.containers[0].name`. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface RequestOptions {
  body?: unknown;
  patch?: PatchType;
  query?: Record<string, string | number | boolean | undefined>;
  /** Aborts the HTTP request itself (the socket is destroyed), not only the wait for it. */
  signal?: AbortSignal;
  /**
   * Told the response's `Date` header (the API server's clock, 1 s resolution) as the response
   * arrives, error answers included: what the run's one clock is read from (server-clock.ts, SPEC §2.3).
   */
  date?: (date: string) => void;
  /**
   * The answer is a list of Pods whose items' metadata.managedFields the caller does not read: they
   * are left out while parsing (json-body.ts), a third of a Pod's bytes. Only for Pods.
   */
  withoutManagedFields?: boolean;
  /** Told each warning the API server sent (`Warning: 299 - "…"` headers: admission's warnings, deprecations), text only. */
  warning?: (text: string) => void;
  /** The answer's media type (default application/json), e.g. a list as PartialObjectMetadataList (neoset-keys.ts). */
  accept?: string;
  /**
   * The answer is a list whose items are trimmed in place as they are parsed — while the answer streams,
   * so the list is never held whole (answer-stream.ts); returns the bytes cut. E.g. pod-trim.ts.
   */
  trim?: (item: unknown) => number;
  /** With `trim`: a list item's long string values cut from its bytes before it is parsed (long-strings.ts). */
  longStrings?: LongStrings;
  /**
   * Charged with the answer's bytes as they arrive (what `trim` cut refunded), and first with the
   * body's, if any: a charge it refuses (read-budget.ts) sends nothing, or closes the answer's socket;
   * the request throws that ReadRefused, unwrapped. What is charged is the caller's to give back.
   */
  budget?: ByteBudget;
}

export interface KubeClient {
  request<T = unknown>(verb: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, opts?: RequestOptions): Promise<T>;
}

/**
 * A client made on its first request by `make` — for the functions, whose KubeConfig comes from
 * client-node: its module graph (undici, js-yaml, every generated API class) is most of what a cold
 * start would evaluate, and /healthz needs none of it. `load()` makes it now: the functions call it
 * once they are listening, so a broken kubeconfig still stops them at start (shared/http/main.ts).
 */
export function deferredKubeClient(make: () => Promise<KubeClient>): KubeClient & { load(): Promise<KubeClient> } {
  let made: Promise<KubeClient> | undefined;
  const load = () => (made ??= make());
  return {
    load,
    async request(verb, path, opts) {
      return (await load()).request(verb, path, opts);
    },
  };
}

/** The metric label for a path: the resource plural (and subresource), never a name. */
export function resourceOf(path: string): string {
  const parts = path.split('?')[0].split('/').filter(Boolean);
  const i = parts.indexOf('namespaces');
  const rest = i >= 0 ? parts.slice(i + 2) : parts.slice(parts[0] === 'api' ? 2 : 3);
  if (rest.length === 0) return i >= 0 ? 'namespaces' : 'unknown';
  return rest.length >= 3 ? `${rest[0]}/${rest[2]}` : rest[0];
}

/**
 * How long the kubeconfig's TLS and auth options are reused. client-node's applyToHTTPSOptions builds
 * an Agent and reads the CA and token files (in a pod: every request) each time it is called; a token
 * it re-reads at most every 60 s anyway, and a projected ServiceAccount token is replaced while the old
 * one has a fifth of its life left — 10 s late is no risk. Issue 24: about 1 % of a function's CPU.
 */
export const AUTH_OPTIONS_TTL_MS = 10_000;

/** kc's TLS options and auth headers, made at most every AUTH_OPTIONS_TTL_MS (a failure is not kept). */
function authOptions(kc: KubeConfig, ttlMs = AUTH_OPTIONS_TTL_MS, clock: () => number = () => performance.now()): () => Promise<https.RequestOptions> {
  let made: { at: number; options: Promise<https.RequestOptions> } | undefined;
  return () => {
    const now = clock();
    if (made === undefined || now - made.at >= ttlMs) {
      const options: https.RequestOptions = { headers: {} };
      const current = { at: now, options: kc.applyToHTTPSOptions(options).then(() => options) };
      current.options.catch(() => {
        if (made === current) made = undefined;
      });
      made = current;
    }
    return made.options;
  };
}

/**
 * Keep-alive sockets to the API server per client. A resync sweep keeps SWEEP_PARALLELISM (32) NeoSets'
 * three reads in flight (functions/reconcile/app.ts): with 16 sockets and 300 ms per request, 1,500
 * NeoSets' 4,500 reads need 85 s at the least (53 a second), longer than the tick's minute (issue 34).
 * 64, not the 96 that 32 runs' reads could use: with 96 (d75e06d) a reconcile instance of the dev
 * stack no longer stopped before the Ctrl-C's 5 s deadline after a rollout (dev.test "stops
 * everything it started on Ctrl-C": 5003–5072 ms in four runs, 852 ms with 64) — why is not known yet.
 */
export const API_SOCKETS = 64;

/** `clock`: what AUTH_OPTIONS_TTL_MS is measured on (performance.now; a test's own). */
export function createKubeClient(kc: KubeConfig, { clock }: { clock?: () => number } = {}): KubeClient {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const base = new URL(cluster.server);
  const transport = base.protocol === 'https:' ? https : http;
  const agent = new transport.Agent({ keepAlive: true, maxSockets: API_SOCKETS });
  const auth = authOptions(kc, AUTH_OPTIONS_TTL_MS, clock);

  return {
    async request<T>(verb: string, path: string, opts: RequestOptions = {}): Promise<T> {
      const url = new URL(path, base);
      for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
      const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json' };
      const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
      // A body is held while it is sent (a template of up to 1.5 MiB, as a string and as the socket's
      // bytes): charged to the budget first, so a refusal sends nothing.
      if (payload !== undefined && opts.budget) opts.budget.charge(Buffer.byteLength(payload));
      if (payload !== undefined) {
        headers['Content-Type'] = opts.patch ? PATCH_CONTENT_TYPE[opts.patch] : 'application/json';
        headers['Content-Length'] = String(Buffer.byteLength(payload));
      }
      // The TLS options go on the request itself (the agent keeps its sockets per set of them); the
      // agent applyToHTTPSOptions made is not used: ours keeps its connections alive.
      const { agent: _made, headers: authHeaders, ...tls } = await auth();
      const reqOpts: https.RequestOptions = { ...tls, method: verb, headers: { ...(authHeaders as Record<string, string>), ...headers }, agent, signal: opts.signal };
      const resource = resourceOf(url.pathname);
      let status = 0;
      try {
        const answer = await send(transport, url, reqOpts, payload, opts);
        status = answer.statusCode;
        if (answer.parsed) return answer.parsed.end() as T;
        const text = answer.body.toString('utf8');
        let reason = 'Unknown';
        let message = text.slice(0, 500);
        let causes: StatusCause[] = [];
        try {
          const s = JSON.parse(text) as { reason?: string; message?: string; details?: { causes?: unknown } };
          reason = s.reason ?? reason;
          message = s.message ?? message;
          if (Array.isArray(s.details?.causes)) causes = s.details.causes as StatusCause[];
        } catch {
          /* not a Status object: keep the raw text */
        }
        throw new ApiError(verb, url.pathname, status, reason, message, causes);
      } catch (err) {
        if (err instanceof ApiError || err instanceof ReadRefused) throw err;
        if (err instanceof AnswerTooLarge) throw new ApiError(verb, url.pathname, status, 'AnswerTooLarge', err.message);
        // An aborted request (opts.signal) says why: the signal's reason, e.g. a TimeoutError.
        const why = opts.signal?.aborted ? ((opts.signal.reason as Error)?.message ?? 'aborted') : (err as Error).message;
        throw new ApiError(verb, url.pathname, 0, opts.signal?.aborted ? 'Aborted' : 'ConnectionFailed', why);
      } finally {
        apiRequests.inc({ verb: verb.toLowerCase(), resource, code: String(status) });
      }
    },
  };
}

/** Bytes of an error answer kept: its Status's reason, message and causes are in the first of them. */
const ERROR_BODY_MAX_BYTES = 64 * 1024;

/**
 * A 2xx answer is parsed as it arrives (`parsed`: answer-stream.ts, charged to opts.budget, its items
 * trimmed); an error answer's first ERROR_BODY_MAX_BYTES are kept as `body`. A parse or a charge that
 * throws closes the socket at once: no more of that answer is read.
 */
function send(
  transport: typeof https | typeof http,
  url: URL,
  opts: https.RequestOptions,
  payload: string | undefined,
  { date, warning, withoutManagedFields, trim, longStrings, budget }: Pick<RequestOptions, 'date' | 'warning' | 'withoutManagedFields' | 'trim' | 'longStrings' | 'budget'>,
): Promise<{ statusCode: number; body: Buffer; parsed?: AnswerParser }> {
  return new Promise((resolve, reject) => {
    // A parse or a charge that threw: the answer is not read on, the request rejects with it.
    let failed: Error | undefined;
    const req = transport.request(url, opts, (res) => {
      // At the headers, not the body's end: the earlier the receipt is taken, the tighter the bound.
      const header = res.headers.date;
      if (date && header) date(header);
      if (warning) for (const value of res.headersDistinct.warning ?? []) for (const text of warningTexts(value)) warning(text);
      const statusCode = res.statusCode ?? 0;
      const parsed = statusCode >= 200 && statusCode < 300 ? answerParser({ withoutManagedFields, trim, longStrings, budget }) : undefined;
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on('data', (c: Buffer) => {
        if (failed) return;
        if (parsed) {
          try {
            parsed.push(c);
          } catch (err) {
            // Rejected here, and the request destroyed without the error: once the whole answer has
            // arrived, its keep-alive socket is back in the agent's pool, and an error destroyed into
            // it is emitted where nothing listens — an uncaught exception, which ends the process.
            failed = err as Error;
            req.destroy();
            reject(failed);
          }
        } else if (kept < ERROR_BODY_MAX_BYTES) {
          chunks.push(c.subarray(0, ERROR_BODY_MAX_BYTES - kept));
          kept += c.length;
        }
      });
      res.on('end', () => (failed ? reject(failed) : resolve({ statusCode, body: Buffer.concat(chunks), parsed })));
      res.on('error', (err) => reject(failed ?? err));
    });
    req.setTimeout(30_000, () => req.destroy(new Error('request timed out after 30s')));
    req.on('error', (err) => reject(failed ?? err));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/**
 * The texts of a Warning header value (RFC 7234 §5.5: `code agent "text"`, several comma-separated),
 * unescaped; the API server sends code 299 and agent `-`. At most 20 per value, each cut at 1 KiB:
 * a header is the server's, but what it relays may come from a webhook.
 */
export function warningTexts(value: string): string[] {
  const texts: string[] = [];
  for (const m of value.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)) {
    if (texts.length === 20) break;
    texts.push(m[1].replace(/\\(.)/g, '$1').slice(0, 1024));
  }
  return texts;
}
