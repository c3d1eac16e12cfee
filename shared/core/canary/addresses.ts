// Which Prometheus addresses a canary analysis may query (SPEC §2.3 "Analysis addresses are the
// operator's"): the reconcile function fetches the address from inside neoset-system, so the NeoSet
// author must not choose it freely (a port scan, a call to an internal service, another tenant's
// Prometheus read through NeoSet status). The install lists the allowed ones; admission refuses any
// other, and reconcile never contacts one that is not listed (a NeoSet stored before the rule, or
// with admission bypassed). Addresses compare in one normal form, so that `http://Prom:9090/` and
// `http://prom:9090` are the same address.
import { ConfigError } from '../../config-error.ts';

/** The environment variable of the reconcile and admission functions that lists them. */
export const ANALYSIS_ADDRESSES_VARIABLE = 'NEOSET_ANALYSIS_ADDRESSES';

/** Where knative/ reads the variable from (an optional ConfigMap: none means none allowed). */
export const ANALYSIS_ADDRESSES_CONFIGMAP = { name: 'neoset-analysis', key: 'addresses' } as const;

/** The allowed addresses, in normal form; empty: no Prometheus analysis may run (the default). */
export type AnalysisAddresses = readonly string[];

/**
 * The normal form of an http(s) base URL: scheme and host lower-cased, the default port dropped, the
 * path without trailing slashes. Null for anything else, and for a URL carrying credentials, a query
 * or a fragment: the analysis appends its own path and query, and a normal form must name one place.
 */
export function normaliseAddress(address: string): string | null {
  if (!URL.canParse(address)) return null;
  const url = new URL(address);
  if (!/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash) return null;
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** Whether the analysis may query `address`. */
export function isAllowedAddress(allowed: AnalysisAddresses, address: string): boolean {
  const normal = normaliseAddress(address);
  return normal !== null && allowed.includes(normal);
}

/** What the operator allows, in words for a refusal (the addresses are the operator's, not a secret). */
export function describeAllowed(allowed: AnalysisAddresses): string {
  if (allowed.length === 0) {
    return `no Prometheus address is allowed on this install: the operator lists them in ${ANALYSIS_ADDRESSES_VARIABLE} (ConfigMap ${ANALYSIS_ADDRESSES_CONFIGMAP.name}, key ${ANALYSIS_ADDRESSES_CONFIGMAP.key}, in neoset-system)`;
  }
  return `allowed (${ANALYSIS_ADDRESSES_VARIABLE}): ${allowed.join(', ')}`;
}

/**
 * Reads the list from the environment: URLs separated by commas or whitespace (a ConfigMap value may
 * span lines). Unset or empty: none. A bad entry is a startup error naming the variable (exit 2).
 */
export function analysisAddressesFromEnv(env: Record<string, string | undefined>): AnalysisAddresses {
  const entries = (env[ANALYSIS_ADDRESSES_VARIABLE] ?? '').split(/[\s,]+/).filter(Boolean);
  const allowed: string[] = [];
  for (const entry of entries) {
    const normal = normaliseAddress(entry);
    const url = URL.canParse(entry) ? new URL(entry) : null;
    if (url && (url.username || url.password)) {
      // Not echoed: the entry holds a password, and this message goes to the log.
      throw new ConfigError(`${ANALYSIS_ADDRESSES_VARIABLE}: an entry carries credentials (user:password@host), which would be written into NeoSet status and refusals; give the address alone`);
    }
    if (normal === null) {
      throw new ConfigError(
        `${ANALYSIS_ADDRESSES_VARIABLE}: ${JSON.stringify(entry)} is not an http(s) base URL without credentials, query or fragment (example: http://prometheus.monitoring:9090; several separated by commas)`,
      );
    }
    if (!allowed.includes(normal)) allowed.push(normal);
  }
  return allowed;
}
