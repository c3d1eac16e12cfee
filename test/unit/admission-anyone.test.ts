// SPEC §2.5: with no client CA configured, admission authenticates nobody and a review's
// request.namespace may be any tenant's. What the dry-run create of ordinal 0's pod found there — the
// API server's refusal, its warnings — is not told to such a caller: the field and the rule only. A
// caller whose certificate chains to the CA (the API server) is told as before. The data-format
// rule's reads: data-format.test.ts; on the real API server: test/integration/forged-reviews.test.ts.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createApp, type DryRunPod } from '../../functions/admission/app.ts';
import { classifyDryRunError } from '../../shared/admission/dry-run-refusal.ts';
import { limitsFromEnv } from '../../shared/admission/limits.ts';
import { ApiError } from '../../shared/k8s/client.ts';
import { CASE_ENV, validNeoSet } from './admission-cases.ts';
import { FROM_ANYONE, FROM_API_SERVER, post, review } from './admission-review.ts';

const app = (dryRunPod: DryRunPod) => createApp({ dryRunPod, limits: limitsFromEnv(CASE_ENV), logger: pino({ level: 'silent' }) });

describe('a review from a caller admission cannot authenticate', () => {
  it("the dry-run's refusal: its brief (field and rule), never its message; its warnings (the namespace's quota, its webhooks) not at all", async () => {
    const refusing: DryRunPod = async () => ({ ok: false, code: 403, message: 'spec.template: violates PodSecurity "restricted:latest": runAsNonRoot != true', brief: 'spec.template: 403 Forbidden' });
    const anyone = (await post(app(refusing), '/validate', review('CREATE', validNeoSet(), undefined, { namespace: 'tenant-b' }), FROM_ANYONE)).json.response;
    expect(anyone.status.message).toBe("the API server refuses ordinal 0's pod: spec.template: 403 Forbidden");
    const quota = "pods of this NeoSet do not fit the namespace's ResourceQuota now";
    const warning: DryRunPod = async () => ({ ok: true, warnings: [quota] });
    const create = review('CREATE', validNeoSet(), undefined, { namespace: 'tenant-b' });
    const told = await post(app(warning), '/validate', create, FROM_ANYONE);
    expect(told.json.response.allowed).toBe(true);
    expect(told.json.response.warnings ?? []).not.toContain(quota);
    expect((await post(app(warning), '/validate', create, FROM_API_SERVER)).json.response.warnings).toContain(quota);
  });

  it("a dry-run refusal's brief: the code and reason of a namespace's rule; a cause's message only when it is about the template's own value", () => {
    const brief = (status: number, reason: string, message: string, causes: { reason: string; field: string; message: string }[] = []) => {
      const result = classifyDryRunError(new ApiError('POST', '/api/v1/namespaces/tenant-b/pods', status, reason, message, causes));
      return result.ok ? null : result.brief;
    };
    const see = "(a dry-run create of the pod (kubectl create --dry-run=server) shows the API server's answer)";
    expect(brief(403, 'Forbidden', 'pods "db-0" is forbidden: error looking up service account tenant-b/payroll-bot: serviceaccount "payroll-bot" not found')).toBe(`spec.template: 403 Forbidden ${see}`);
    expect(brief(403, 'Forbidden', 'pods "db-0" is forbidden: violates PodSecurity "restricted:latest": privileged')).toBe(`spec.template: 403 Forbidden ${see}`);
    expect(brief(422, 'Invalid', 'Pod "db-0" is invalid: ...', [
      { reason: 'FieldValueInvalid', field: 'spec.containers[0].name', message: 'Invalid value: "Bad_Name": a lowercase RFC 1123 label' },
      { reason: 'FieldValueForbidden', field: 'spec.volumes[0]', message: 'Forbidden: the volume is held by tenant-c/other' },
    ])).toBe('spec.template.spec.containers[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label; spec.template.spec.volumes[0]: FieldValueForbidden');
  });
});
