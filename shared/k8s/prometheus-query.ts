// The canary's Prometheus analysis at the edge (SPEC §4.11): one instant query over the Prometheus
// HTTP API (GET /api/v1/query), its result reduced to one number. Anything else — not allowed,
// unreachable, a redirect, an error answer, too large, no sample, several samples, NaN — is a
// measurement with an error: the decision counts it inconclusive (never a pass).
//
// SPEC §2.3: the address is contacted only when the install allows it (shared/core/canary/addresses.ts),
// a redirect is not followed (it would take the request where the operator did not allow), the answer
// is read up to MAX_ANSWER_BYTES, and the error written to status is one of a fixed set of short
// reasons plus the address — never the server's own text, which would let a NeoSet author read
// whatever the address answers through NeoSet status.
import type { PrometheusAnalysis } from '../api/neoset.ts';
import { isAllowedAddress, normaliseAddress, type AnalysisAddresses } from '../core/canary/addresses.ts';
import type { AnalysisMeasurement } from '../core/snapshot.ts';

/** A query gets this long; a resync tick or requeue tries again. */
export const QUERY_TIMEOUT_MS = 5000;

/** An instant query's one sample is some 200 bytes; an answer past this is not one (64 KiB). */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** Every reason a measurement may give: short, fixed, nothing taken from the answer but its HTTP status. */
export const MEASUREMENT_ERRORS = {
  notAllowed: 'address not allowed by this install',
  unreachable: (code?: string) => `unreachable${code ? ` (${code})` : ''}`,
  timeout: (ms: number) => `unreachable (no answer within ${ms / 1000}s)`,
  redirect: (status: number) => `answered a redirect (HTTP ${status}), not followed`,
  httpStatus: (status: number) => `answered HTTP ${status}`,
  tooLarge: (bytes: number) => `answer over ${bytes / 1024} KiB`,
  notPrometheus: 'the answer is not a Prometheus query result',
  errorAnswer: (errorType?: string) => `answered an error${errorType ? ` (${errorType})` : ''}`,
  notOneSample: 'the query did not return one sample',
  notANumber: 'the sample is not a number',
} as const;

/** Prometheus' own errorType values (web/api/v1): fixed words, safe to repeat; anything else is not. */
const ERROR_TYPES = new Set(['timeout', 'canceled', 'execution', 'bad_data', 'internal', 'unavailable', 'not_found', 'not_acceptable']);

/** A socket error's code (ECONNREFUSED, ENOTFOUND...) is Node's word, not the server's. */
const ERRNO = /^E[A-Z0-9_]{2,30}$/;

export interface MeasureOptions {
  /** The addresses this install allows (NEOSET_ANALYSIS_ADDRESSES); any other is never contacted. */
  allowed: AnalysisAddresses;
  timeoutMs?: number;
  maxBytes?: number;
}

interface QueryAnswer {
  status?: unknown;
  errorType?: unknown;
  data?: { resultType?: unknown; result?: unknown };
}

export async function measure(analysis: PrometheusAnalysis, opts: MeasureOptions): Promise<AnalysisMeasurement> {
  const { allowed, timeoutMs = QUERY_TIMEOUT_MS, maxBytes = MAX_ANSWER_BYTES } = opts;
  const failed = (reason: string): AnalysisMeasurement => ({ error: `Prometheus at ${analysis.address}: ${reason}` });
  if (!isAllowedAddress(allowed, analysis.address)) return failed(MEASUREMENT_ERRORS.notAllowed);
  // The normal form is what was allowed: query exactly that.
  const url = new URL('api/v1/query', `${normaliseAddress(analysis.address)}/`);
  url.searchParams.set('query', analysis.query);
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Response;
  let body: string | null;
  try {
    res = await fetch(url, { signal, redirect: 'manual', headers: { accept: 'application/json' } });
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      return failed(MEASUREMENT_ERRORS.redirect(res.status));
    }
    body = await readCapped(res, maxBytes);
  } catch (err) {
    if (signal.aborted) return failed(MEASUREMENT_ERRORS.timeout(timeoutMs));
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    return failed(MEASUREMENT_ERRORS.unreachable(typeof code === 'string' && ERRNO.test(code) ? code : undefined));
  }
  if (body === null) return failed(MEASUREMENT_ERRORS.tooLarge(maxBytes));
  let answer: QueryAnswer | null = null;
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed !== null && typeof parsed === 'object') answer = parsed as QueryAnswer;
  } catch {
    // not JSON: said below, by the HTTP status or as not a Prometheus answer
  }
  if (answer?.status === 'error') {
    return failed(MEASUREMENT_ERRORS.errorAnswer(typeof answer.errorType === 'string' && ERROR_TYPES.has(answer.errorType) ? answer.errorType : undefined));
  }
  if (!res.ok) return failed(MEASUREMENT_ERRORS.httpStatus(res.status));
  if (answer?.status !== 'success') return failed(MEASUREMENT_ERRORS.notPrometheus);
  const value = oneNumber(answer.data);
  return typeof value === 'number' ? { value } : failed(value);
}

/** The body as text, or null when it is over `max` bytes (reading stops there: the rest is never buffered). */
async function readCapped(res: Response, max: number): Promise<string | null> {
  if (!res.body) return '';
  if (Number(res.headers.get('content-length')) > max) {
    await res.body.cancel();
    return null;
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The query's one number, or which fixed reason says why there is not one. */
function oneNumber(data: QueryAnswer['data']): number | string {
  let sample: unknown;
  if (data?.resultType === 'scalar') sample = data.result;
  else if (data?.resultType === 'vector' && Array.isArray(data.result) && data.result.length === 1) sample = (data.result[0] as { value?: unknown } | null)?.value;
  else return MEASUREMENT_ERRORS.notOneSample;
  if (!Array.isArray(sample) || sample.length !== 2 || typeof sample[1] !== 'string') return MEASUREMENT_ERRORS.notPrometheus;
  // Prometheus writes sample values as strings; Number('') is 0, so an empty one is not a number either.
  const value = sample[1].trim() === '' ? NaN : Number(sample[1]);
  return Number.isFinite(value) ? value : MEASUREMENT_ERRORS.notANumber;
}
