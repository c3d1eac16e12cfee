// The server-side dry-run create of ordinal 0's Pod (SPEC §5): the API server validates the real
// Pod — schema, field rules, admission plugins such as PodSecurity — without storing it. What the
// user is told of a refusal is short (refusal.ts); the whole answer goes to our log only.
import type { Pod } from '../../shared/core/objects.ts';
import { ApiError, type KubeClient } from '../../shared/k8s/client.ts';
import { cut, refusalReason, transientReason } from './refusal.ts';

export type DryRunResult =
  | { ok: true; warnings?: string[] }
  /**
   * message: short, for the user (field and reason). detail: the API server's whole answer, for our
   * log. transient: the API server could not answer (unreachable, overloaded, timeout, or we lack RBAC).
   */
  | { ok: false; message: string; detail?: string; code?: number; transient?: boolean };

/** `signal` ends the check: the HTTP request of the dry-run is aborted with it. */
export type DryRunPod = (pod: Pod, signal: AbortSignal) => Promise<DryRunResult>;

/**
 * Below the webhook's timeoutSeconds (10), so we answer with a reason instead of being timed out; it
 * covers the wait for a dry-run slot (dry-run-slots.ts) and the call.
 */
export const DRY_RUN_TIMEOUT_MS = 5000;

export function classifyDryRunError(err: unknown): DryRunResult {
  if (!(err instanceof ApiError)) return { ok: false, transient: true, message: transientReason(null), detail: (err as Error)?.message ?? String(err) };
  const detail = err.message;
  // The dry-run got past validation and every admission plugin: only the name is taken (an UPDATE
  // that changed the template, or a leftover pod). The real create happens later, by the controller.
  if (err.status === 409 && err.reason === 'AlreadyExists') return { ok: true };
  // A full ResourceQuota says nothing about the template; pods may fit when they are created. The
  // quota's usage is not ours to repeat.
  if (err.status === 403 && detail.includes('exceeded quota')) {
    return { ok: true, warnings: ["pods of this NeoSet do not fit the namespace's ResourceQuota now"] };
  }
  // Another pod webhook declares sideEffects Unknown or Some, so the API server refuses every dry-run
  // it would match (400 "admission webhook ... does not support dry run"): nothing is known about the
  // template either way. Refusing would block every NeoSet write for a webhook that is not ours.
  if (err.status === 400 && /does not support dry run/.test(detail)) {
    // The API server's fixed sentence (webhookerrors.NewDryRunUnsupportedErr), naming the webhook only.
    const message = cut(err.serverMessage);
    return { ok: true, warnings: [`spec.template: not checked by a dry-run pod create (${message}: it declares sideEffects Unknown or Some); the pods may still be refused when they are created`] };
  }
  // Our own RBAC (dry-run needs `create pods`) or credentials: not the template's fault.
  const ours = err.status === 401 || (err.status === 403 && /cannot create resource/.test(detail));
  if (err.isTransient || ours || err.status === 408) return { ok: false, transient: true, message: transientReason(err), detail };
  return { ok: false, code: err.status, message: refusalReason(err), detail };
}

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
