// AdmissionReview builders and a stand-in for the API server's dry-run, for the admission app's
// unit and fuzz tests (which call the hono app with app.request, no port — STYLE §1).
import pino from 'pino';
import { createApp, type DryRunPod } from '../../functions/admission/app.ts';
import { limitsFromEnv } from '../../shared/admission/limits.ts';
import type { ClientCertEnv } from '../../shared/http/client-cert.ts';
import { CASE_ENV } from './admission-cases.ts';

export const silent = pino({ level: 'silent' });

/** Refuses what the real API server would for the dry-run cases of the table (container names). */
export const stubDryRun: DryRunPod = async (pod) => {
  const bad = pod.spec.containers.findIndex((c) => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(String(c.name)));
  if (bad >= 0) {
    // What classifyDryRunError makes of the API server's 422 (its details.causes), as shared/admission/dry-run-refusal.ts words it.
    return { ok: false, code: 422, message: `spec.template.spec.containers[${bad}].name: Invalid value: "${pod.spec.containers[bad].name}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'` };
  }
  return { ok: true };
};

export function testApp(dryRunPod: DryRunPod = stubDryRun) {
  return createApp({ dryRunPod, limits: limitsFromEnv(CASE_ENV), logger: silent });
}

let uids = 0;

export function review(operation: string, object: unknown, oldObject?: unknown, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${++uids}`,
      kind: { group: 'neo.io', version: 'v1alpha1', kind: 'NeoSet' },
      resource: { group: 'neo.io', version: 'v1alpha1', resource: 'neosets' },
      requestKind: { group: 'neo.io', version: 'v1alpha1', kind: 'NeoSet' },
      requestResource: { group: 'neo.io', version: 'v1alpha1', resource: 'neosets' },
      name: (object as any)?.metadata?.name,
      namespace: 'default',
      operation,
      userInfo: { username: 'admin', groups: ['system:masters'] },
      object,
      oldObject: oldObject ?? null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions' },
      ...extra,
    },
  };
}

/**
 * The request env of a review from the API server when a client CA is configured (serve.ts sets it
 * from the TLS connection): the caller admission tells what it found in the review's namespace.
 */
export const FROM_API_SERVER: ClientCertEnv = { clientCert: { required: true, verified: true, subject: 'kube-apiserver-webhook-client' } };
/** No client CA configured: nobody is authenticated, and the review's namespace may be anyone's (SPEC §2.5). */
export const FROM_ANYONE: ClientCertEnv = {};

export async function post(app: ReturnType<typeof testApp>, path: string, body: unknown, env: ClientCertEnv = FROM_API_SERVER) {
  const res = await app.request(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  }, env);
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}
