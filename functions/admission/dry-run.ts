// The server-side dry-run create of ordinal 0's Pod (SPEC §5): the API server validates the real
// Pod — schema, field rules, admission plugins such as PodSecurity — without storing it. Which of its
// answers are the template's fault, and how short a refusal is told, is shared/admission/dry-run-refusal.ts;
// the whole answer goes to our log only.
import { classifyDryRunError, type DryRunResult } from '../../shared/admission/dry-run-refusal.ts';
import type { Pod } from '../../shared/core/objects.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';

/** `signal` ends the check: the HTTP request of the dry-run is aborted with it. */
export type DryRunPod = (pod: Pod, signal: AbortSignal) => Promise<DryRunResult>;

/**
 * Below the webhook's timeoutSeconds (10), so we answer with a reason instead of being timed out; it
 * covers the wait for a dry-run slot (dry-run-slots.ts) and the call.
 */
export const DRY_RUN_TIMEOUT_MS = 5000;

/** dryRunPod through the API (KUBECONFIG or in-cluster service account). */
export function apiDryRunPod(client: KubeClient): DryRunPod {
  return async (pod, signal) => {
    const namespace = pod.metadata.namespace ?? 'default';
    try {
      // fieldValidation=Strict, kubectl's default: a misspelled Pod field in the template (which the
      // CRD keeps as an unknown field) is refused now rather than silently dropped later. The signal
      // aborts the request itself: an abandoned dry-run holds no socket and no memory.
      await client.request('POST', `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`, {
        body: pod,
        query: { dryRun: 'All', fieldValidation: 'Strict' },
        signal,
      });
      return { ok: true };
    } catch (err) {
      return classifyDryRunError(err);
    }
  };
}
