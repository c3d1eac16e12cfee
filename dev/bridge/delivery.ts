// How a Knative Broker delivers one event to one Trigger's subscriber, played locally (SPEC §2.0,
// §2.1). Taken from knative/eventing, not guessed:
//   pkg/kncloudevents/retries.go  RetryConfigFromDeliverySpec: `retry` more attempts after the first;
//     exponential backoff waits backoffDelay·2^n before retry n+1 (n from 0, go-retryablehttp's loop
//     index), linear backoffDelay·n (so its first retry is immediate); `timeout` bounds each attempt.
//     SelectiveRetry retries a network error or timeout and the statuses 5xx, 404, 408, 409, 429 —
//     no other 4xx, no 3xx.
//   pkg/broker/filter/filter_handler.go  writeResponse: a 2xx whose body is neither empty nor a
//     CloudEvent is answered upstream with 502 Bad Gateway, a failed delivery that is retried.
// No retry without a `delivery` on the Trigger or Broker; knative/eventing.yaml sets one on every
// Trigger (BROKER_DELIVERY below is its Broker default; a test keeps the two equal).
export interface DeliverySpec {
  /** Attempts after the first (Trigger `delivery.retry`). */
  retry: number;
  backoffPolicy: 'exponential' | 'linear';
  /** `delivery.backoffDelay`, in ms. */
  backoffDelayMs: number;
  /** One attempt's timeout (`delivery.timeout`, else the subscriber's `timeoutSeconds`), in ms. */
  timeoutMs: number;
}

/** knative/eventing.yaml, Broker `neoset` `spec.delivery`; the timeout is reconcile.yaml's timeoutSeconds. */
export const BROKER_DELIVERY: DeliverySpec = { retry: 5, backoffPolicy: 'exponential', backoffDelayMs: 500, timeoutMs: 60_000 };

/** Requests a Knative Service lets into one instance at once (knative/reconcile.yaml `containerConcurrency`). */
export const CONTAINER_CONCURRENCY = 50;

/** The wait before retry number `retryIndex + 1` (retryIndex 0 is the first retry). */
export function backoffMs(spec: DeliverySpec, retryIndex: number): number {
  return spec.backoffPolicy === 'exponential' ? spec.backoffDelayMs * 2 ** retryIndex : spec.backoffDelayMs * retryIndex;
}

/** SelectiveRetry: whether an answer with this status is worth another attempt. */
export function isRetryable(status: number): boolean {
  return status >= 500 || status === 404 || status === 408 || status === 409 || status === 429;
}

/** ISO 8601 durations as Knative takes them (`PT0.5S`, `PT1M`, `P1DT2H`), in ms. */
export function parseIsoDuration(text: string): number {
  const m = /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text);
  if (!m || text === 'P' || text.endsWith('T')) throw new Error(`not an ISO 8601 duration: ${JSON.stringify(text)}`);
  const [days, hours, minutes, seconds] = m.slice(1).map((x) => Number(x ?? 0));
  return Math.round((((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000);
}

export type FetchLike = (req: Request) => Response | Promise<Response>;

/** What one attempt came to: a status (502 for an unusable 2xx body), or a network error / timeout. */
export interface Attempt {
  status?: number;
  /** The start of a non-2xx answer's body (a dead letter's knativeerrordata). */
  body?: string;
  error?: string;
}

/** What of a failed answer's body is kept: more than a dead letter's knativeerrordata carries (1024 base64 characters). */
const KEPT_BODY_CHARS = 1024;

/** Whether a 2xx answer is one the Broker accepts: an empty body, or a CloudEvent (a reply). */
export function acceptable(res: Response, body: string): boolean {
  if (body.length === 0) return true;
  return res.headers.has('ce-specversion') || (res.headers.get('content-type') ?? '').startsWith('application/cloudevents');
}

/** One HTTP attempt with the spec's timeout; never throws. */
export async function attemptOnce(target: string | FetchLike, request: () => Request, timeoutMs: number, stopping?: AbortSignal): Promise<Attempt> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  // The bridge stopping ends the attempt as its timeout would: nothing waits on the subscriber's answer.
  const onStop = () => timeout.abort();
  if (stopping?.aborted) onStop();
  stopping?.addEventListener('abort', onStop, { once: true });
  try {
    const req = request();
    const answer = (async () => {
      const res = typeof target === 'string' ? await fetch(req, { signal: timeout.signal }) : await target(req);
      const body = await res.text();
      if (res.status < 200 || res.status >= 300) return { status: res.status, body: body.slice(0, KEPT_BODY_CHARS) };
      return acceptable(res, body) ? { status: res.status } : { status: 502, error: 'a non-empty 2xx body that is not a CloudEvent' };
    })();
    // An in-process target cannot be aborted: the timeout races it, as the dispatcher's client would.
    const timedOut = new Promise<Attempt>((resolve) => {
      const late = () => resolve({ error: stopping?.aborted ? 'the bridge stopped' : `no answer within ${timeoutMs} ms` });
      if (timeout.signal.aborted) late();
      else timeout.signal.addEventListener('abort', late);
    });
    return await Promise.race([answer, timedOut]);
  } catch (err) {
    return { error: (err as Error).message };
  } finally {
    clearTimeout(timer);
    stopping?.removeEventListener('abort', onStop);
  }
}

export type Outcome = 'delivered' | 'rejected' | 'failed';

export interface DeliverOptions {
  target: string | FetchLike;
  spec: DeliverySpec;
  request: () => Request;
  /** Runs one attempt (the subscriber's concurrency limit wraps it; a backoff wait holds no slot). */
  slot: <T>(attempt: () => Promise<T>) => Promise<T>;
  /** Waits before a retry; resolves false when the pump is stopping (no further attempt). */
  sleep: (ms: number) => Promise<boolean>;
  /** Aborted when the pump stops: an attempt in flight ends at once (its answer is not waited for). */
  stopping?: AbortSignal;
  /** Called after each attempt that will be retried. */
  onRetry?: (attempt: Attempt, retryIndex: number) => void;
}

/** One event to one subscriber, with the Trigger's retries: delivered, rejected (a 4xx kept), or failed. */
export async function deliver(opts: DeliverOptions): Promise<{ outcome: Outcome; attempts: number; last: Attempt }> {
  for (let retryIndex = 0; ; retryIndex++) {
    const last = await opts.slot(() => attemptOnce(opts.target, opts.request, opts.spec.timeoutMs, opts.stopping));
    const attempts = retryIndex + 1;
    if (opts.stopping?.aborted) return { outcome: 'failed', attempts, last };
    if (last.status !== undefined && last.status >= 200 && last.status < 300) return { outcome: 'delivered', attempts, last };
    if (last.status !== undefined && !isRetryable(last.status)) return { outcome: 'rejected', attempts, last };
    if (retryIndex >= opts.spec.retry) return { outcome: 'failed', attempts, last };
    opts.onRetry?.(last, retryIndex);
    if (!(await opts.sleep(backoffMs(opts.spec, retryIndex)))) return { outcome: 'failed', attempts, last };
  }
}
