// The canary's Prometheus analysis at the edge (SPEC §4.11): one instant query over the Prometheus
// HTTP API (GET /api/v1/query), its result reduced to one number. Anything else — unreachable, an
// error answer, no sample, several samples, NaN — is a measurement with an error: the decision counts
// it inconclusive (never a pass), and the message names the address so the user sees where to look.
import type { PrometheusAnalysis } from '../api/neoset.ts';
import type { AnalysisMeasurement } from '../core/snapshot.ts';

/** A query gets this long; a resync tick or requeue tries again. */
export const QUERY_TIMEOUT_MS = 5000;

interface QueryAnswer {
  status: 'success' | 'error';
  error?: string;
  data?: { resultType: string; result: unknown };
}

export async function measure(analysis: PrometheusAnalysis, timeoutMs = QUERY_TIMEOUT_MS): Promise<AnalysisMeasurement> {
  const where = `Prometheus at ${analysis.address}`;
  let url: URL;
  try {
    url = new URL('api/v1/query', analysis.address.endsWith('/') ? analysis.address : `${analysis.address}/`);
  } catch {
    return { error: `${where}: not a URL` };
  }
  url.searchParams.set('query', analysis.query);
  let answer: QueryAnswer;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    answer = (await res.json()) as QueryAnswer;
    if (answer.status !== 'success') return { error: `${where}: ${answer.error ?? `HTTP ${res.status}`}` };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { error: `${where} unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}` };
  }
  const value = oneNumber(answer.data);
  return typeof value === 'number' ? { value } : { error: `${where}: ${value}` };
}

/** The query's one number, or why there is not one. */
function oneNumber(data: QueryAnswer['data']): number | string {
  if (!data) return 'no data in the answer';
  let sample: unknown;
  if (data.resultType === 'scalar') sample = data.result;
  else if (data.resultType === 'vector') {
    const result = data.result as { value: unknown }[];
    if (result.length !== 1) return `the query returned ${result.length} samples, not one`;
    sample = result[0].value;
  } else return `the query returned a ${data.resultType}, not a scalar or a one-sample vector`;
  const value = Number((sample as [number, string])[1]);
  return Number.isFinite(value) ? value : `the query returned ${(sample as [number, string])[1]}, not a number`;
}
