// The server-side dry-run create of ordinal 0's Pod (SPEC §5): the API server validates the real
// Pod — schema, field rules, admission plugins such as PodSecurity — without storing it.
import type { Pod } from '../../shared/core/objects.ts';
import { ApiError, type KubeClient } from '../../shared/k8s/client.ts';

export type DryRunResult =
  | { ok: true; warnings?: string[] }
  /** transient: the API server could not answer (unreachable, overloaded, timeout, or we lack RBAC). */
  | { ok: false; message: string; code?: number; transient?: boolean };

export type DryRunPod = (pod: Pod) => Promise<DryRunResult>;

/** Below the webhook's timeoutSeconds (10), so we answer with a reason instead of being timed out. */
export const DRY_RUN_TIMEOUT_MS = 5000;

/** The API server's own message, without the client's `VERB path: status reason: ` prefix. */
function serverMessage(err: ApiError): string {
  const prefix = `${err.verb} ${err.path}: ${err.status} ${err.reason}: `;
  return err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
}

function timeout(ms: number): { promise: Promise<never>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

export function classifyDryRunError(err: unknown): DryRunResult {
  if (!(err instanceof ApiError)) return { ok: false, transient: true, message: (err as Error)?.message ?? String(err) };
  const message = serverMessage(err);
  // The dry-run got past validation and every admission plugin: only the name is taken (an UPDATE
  // that changed the template, or a leftover pod). The real create happens later, by the controller.
  if (err.status === 409 && err.reason === 'AlreadyExists') return { ok: true };
  // A full ResourceQuota says nothing about the template; pods may fit when they are created.
  if (err.status === 403 && message.includes('exceeded quota')) {
    return { ok: true, warnings: [`pods of this NeoSet do not fit the namespace's ResourceQuota now: ${message}`] };
  }
  // Another pod webhook declares sideEffects Unknown or Some, so the API server refuses every dry-run
  // it would match (400 "admission webhook ... does not support dry run"): nothing is known about the
  // template either way. Refusing would block every NeoSet write for a webhook that is not ours.
  if (err.status === 400 && /does not support dry run/.test(message)) {
    return { ok: true, warnings: [`spec.template: not checked by a dry-run pod create (${message}: it declares sideEffects Unknown or Some); the pods may still be refused when they are created`] };
  }
  // Our own RBAC (dry-run needs `create pods`) or credentials: not the template's fault.
  const ours = err.status === 401 || (err.status === 403 && /cannot create resource/.test(message));
  if (err.isTransient || ours || err.status === 408) return { ok: false, transient: true, message: `${err.status} ${err.reason}: ${message}` };
  return { ok: false, code: err.status, message };
}

/** dryRunPod through the API (KUBECONFIG or in-cluster service account). */
export function apiDryRunPod(client: KubeClient, timeoutMs = DRY_RUN_TIMEOUT_MS): DryRunPod {
  return async (pod) => {
    const namespace = pod.metadata.namespace ?? 'default';
    const limit = timeout(timeoutMs);
    try {
      // fieldValidation=Strict, kubectl's default: a misspelled Pod field in the template (which the
      // CRD keeps as an unknown field) is refused now rather than silently dropped later.
      await Promise.race([
        client.request('POST', `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`, {
          body: pod,
          query: { dryRun: 'All', fieldValidation: 'Strict' },
        }),
        limit.promise,
      ]);
      return { ok: true };
    } catch (err) {
      return classifyDryRunError(err);
    } finally {
      limit.cancel();
    }
  };
}
