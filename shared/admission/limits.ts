// The admission limits (SPEC §5): a replicas quota, optional per-container CPU / memory caps, and the
// Prometheus addresses canary analyses may query (SPEC §2.3; none unless the operator lists them).
// They are configuration, read once at startup from the environment; a bad value is a startup error
// that names the variable, never a silently ignored cap.
import { parseQuantity, type Quantity } from './quantity.ts';
import { ConfigError } from '../config-error.ts';
import { ANALYSIS_ADDRESSES_VARIABLE, analysisAddressesFromEnv, type AnalysisAddresses } from '../core/canary/addresses.ts';

export interface AdmissionLimits {
  /** spec.replicas may not exceed this. */
  maxReplicas: number;
  /** Cap on every container's resources.limits.cpu; null: no cap. */
  maxCpu: Quantity | null;
  /** Cap on every container's resources.limits.memory; null: no cap. */
  maxMemory: Quantity | null;
  /** spec.updateStrategy.canary.analysis.prometheus.address must be one of these (normal form); empty: none may. */
  analysisAddresses: AnalysisAddresses;
}

export const DEFAULT_MAX_REPLICAS = 1000;

export const LIMIT_VARIABLES = {
  maxReplicas: 'NEOSET_MAX_REPLICAS',
  maxCpu: 'NEOSET_MAX_CPU',
  maxMemory: 'NEOSET_MAX_MEMORY',
  analysisAddresses: ANALYSIS_ADDRESSES_VARIABLE,
} as const;

export { ConfigError };

function cap(env: Record<string, string | undefined>, variable: string): Quantity | null {
  const raw = env[variable]?.trim();
  if (!raw) return null;
  const quantity = parseQuantity(raw);
  if (!quantity) {
    throw new ConfigError(`${variable}=${JSON.stringify(raw)} is not a Kubernetes quantity (examples: 500m, 2, 1.5, 512Mi, 4Gi, 1e9)`);
  }
  if (quantity.num <= 0n) throw new ConfigError(`${variable}=${JSON.stringify(raw)} must be greater than zero (unset it for no cap)`);
  return quantity;
}

/** Reads the limits from environment variables; throws ConfigError naming the variable. */
export function limitsFromEnv(env: Record<string, string | undefined>): AdmissionLimits {
  const rawReplicas = env[LIMIT_VARIABLES.maxReplicas]?.trim();
  let maxReplicas = DEFAULT_MAX_REPLICAS;
  if (rawReplicas) {
    if (!/^\d+$/.test(rawReplicas) || !Number.isSafeInteger(Number(rawReplicas))) {
      throw new ConfigError(`${LIMIT_VARIABLES.maxReplicas}=${JSON.stringify(rawReplicas)} must be a non-negative integer (default ${DEFAULT_MAX_REPLICAS})`);
    }
    maxReplicas = Number(rawReplicas);
  }
  return { maxReplicas, maxCpu: cap(env, LIMIT_VARIABLES.maxCpu), maxMemory: cap(env, LIMIT_VARIABLES.maxMemory), analysisAddresses: analysisAddressesFromEnv(env) };
}

export const DEFAULT_LIMITS: AdmissionLimits = { maxReplicas: DEFAULT_MAX_REPLICAS, maxCpu: null, maxMemory: null, analysisAddresses: [] };
