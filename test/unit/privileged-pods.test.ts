// What a NeoSet's author is told when the admission function's dry-run of ordinal 0's pod meets the
// policy neoset-functions-no-privileged-pods (knative/reconcile-policy.yaml): the template's part and
// the namespace label, in our words; any other policy's refusal stays unquoted (dry-run-refusal.ts).
import { describe, expect, it } from 'vitest';
import { classifyDryRunError } from '../../shared/admission/dry-run-refusal.ts';
import { LABEL_PRIVILEGED_PODS, PRIVILEGED_PODS_POLICY } from '../../shared/admission/privileged-pods.ts';
import { ApiError } from '../../shared/k8s/client.ts';

/** The API server's 403 for a policy's denial (its dispatcher's wording). */
const refusal = (policy: string, message: string) =>
  classifyDryRunError(new ApiError('POST', '/api/v1/namespaces/team-a/pods', 403, 'Forbidden', `pods "web-0" is forbidden: ValidatingAdmissionPolicy '${policy}' with binding '${policy}' denied request: ${message}`));

describe('a dry-run refused by the privileged-pods policy', () => {
  it.each([
    ['privileged containers need the namespace label', 'spec.template.spec: privileged containers (securityContext.privileged)'],
    ['host namespaces (hostNetwork, hostPID, hostIPC) need the namespace label', 'spec.template.spec: host namespaces (hostNetwork, hostPID, hostIPC)'],
    ['hostPath volumes need the namespace label', 'spec.template.spec.volumes: hostPath volumes'],
  ])('%s: the part of the template and the label to ask for', (message, part) => {
    expect(refusal(PRIVILEGED_PODS_POLICY, `${message} ${LABEL_PRIVILEGED_PODS}=allowed (knative/reconcile-policy.yaml)`)).toMatchObject({
      ok: false,
      code: 403,
      message: `${part} need the namespace label ${LABEL_PRIVILEGED_PODS}=allowed, which a cluster administrator sets`,
    });
  });

  it("another policy's words are not ours to repeat, even when they look like ours", () => {
    const r = refusal('no-hostpath', 'hostPath volumes need the namespace label x=y on nodes of pool gpu-a');
    expect(r.ok === false && r.message).toMatch(/^spec\.template: refused by the ValidatingAdmissionPolicy "no-hostpath"/);
    expect(r.ok === false && r.message).not.toContain('gpu-a');
  });
});
