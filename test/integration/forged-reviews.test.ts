// A review that is not from the API server learns nothing about other namespaces (SPEC §2.5), on the
// real API server: the admission server from its entry point with no client CA configured — the
// default install (knative/admission.yaml leaves TLS_CLIENT_CA_FILE commented out) — so that anyone
// who reaches its port can send an AdmissionReview naming any namespace. Its dry-run create of
// ordinal 0's pod runs in that namespace, and the API server's refusals describe it: whether a
// ServiceAccount exists, which PodSecurity level the namespace enforces. The answer names the field
// and the rule only. (With a client CA, such a caller gets 401: admission-safety.test.ts.)
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdmissionProcess } from '../cluster/admission-process.ts';
import { createTestNamespace, kubectl, type TestNamespace } from '../cluster/harness.ts';
import { CASE_ENV, validNeoSet } from '../unit/admission-cases.ts';
import { review } from '../unit/admission-review.ts';

/** The answer a refusal of ordinal 0's pod for a rule of the namespace gets, whichever rule it was. */
const FORBIDDEN = "the API server refuses ordinal 0's pod: spec.template: 403 Forbidden (a dry-run create of the pod (kubectl create --dry-run=server) shows the API server's answer)";

let victim: TestNamespace;
let server: ChildProcess | undefined;
let port = 0;
const logLines: string[] = [];

beforeAll(async () => {
  victim = await createTestNamespace('victim');
  // The other tenant's namespace enforces PodSecurity "baseline": its label, which the forger may not read.
  const labelled = await kubectl(['label', 'namespace', victim.name, 'pod-security.kubernetes.io/enforce=baseline']);
  expect(labelled.code, labelled.stderr).toBe(0);
  const started = await startAdmissionProcess({ ...CASE_ENV }, logLines);
  server = started.child;
  port = started.port;
}, 60_000);

afterAll(async () => {
  server?.kill('SIGTERM');
  await victim?.cleanup();
});

/** A NeoSet for the victim's namespace, as a forged review names it, with `edit` applied to its pod template. */
async function forge(edit: (spec: Record<string, any>) => void): Promise<{ allowed: boolean; message?: string }> {
  const neoset = validNeoSet('payroll');
  edit(neoset.spec.template.spec);
  const body = review('CREATE', neoset, undefined, { namespace: victim.name });
  const res = await fetch(`http://127.0.0.1:${port}/validate`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  const { response } = (await res.json()) as { response: { allowed: boolean; status?: { message: string } } };
  return { allowed: response.allowed, message: response.status?.message };
}

describe('a review admission cannot authenticate (no client CA)', () => {
  it("is not told whether a ServiceAccount exists in the namespace it names: field and rule only", async () => {
    const answer = await forge((spec) => (spec.serviceAccountName = 'payroll-bot'));
    console.log(`a missing ServiceAccount: ${JSON.stringify(answer)}`);
    expect(answer).toEqual({ allowed: false, message: FORBIDDEN });
  });

  it("is not told the namespace's PodSecurity level: field and rule only", async () => {
    const answer = await forge((spec) => (spec.containers[0].securityContext = { privileged: true }));
    console.log(`a privileged container under PodSecurity baseline: ${JSON.stringify(answer)}`);
    expect(answer).toEqual({ allowed: false, message: FORBIDDEN });
    expect(answer.message).not.toContain('baseline');
  });

  it("is still told what is wrong with the template's own values (the API server's validation of the pod)", async () => {
    const answer = await forge((spec) => (spec.containers[0].name = 'Bad_Name'));
    expect(answer.allowed).toBe(false);
    expect(answer.message).toContain("the API server refuses ordinal 0's pod: spec.template.spec.containers[0].name: Invalid value: \"Bad_Name\"");
  });

  it('the log keeps the whole answer for the operator', () => {
    const refused = logLines.filter((l) => l.includes('dry-run refused'));
    expect(refused.some((l) => l.includes('payroll-bot'))).toBe(true);
    expect(refused.some((l) => l.includes('baseline'))).toBe(true);
  });
});
