// A ValidatingAdmissionPolicy and its binding (Deny) that refuse some writes of one namespace, as
// integration tests use them to make the real API server refuse what they need refused; `remove`
// deletes both (without waiting: the namespace's end does not depend on it).
import { kubectl } from './harness.ts';

export interface DenyPolicy {
  name: string;
  remove(): Promise<void>;
}

export interface DenyPolicyOptions {
  name: string;
  /** The namespace whose writes it judges (by kubernetes.io/metadata.name). */
  namespace: string;
  resourceRules: { apiGroups: string[]; apiVersions: string[]; operations: string[]; resources: string[] }[];
  /** CEL validations: a write is refused when one is false, with its message (and reason). */
  validations: { expression: string; message: string; reason?: string }[];
}

export async function applyDenyPolicy(opts: DenyPolicyOptions): Promise<DenyPolicy> {
  const manifests = [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: opts.name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': opts.namespace } }, resourceRules: opts.resourceRules },
        validations: opts.validations,
      },
    },
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: opts.name }, spec: { policyName: opts.name, validationActions: ['Deny'] } },
  ];
  const applied = await kubectl(['apply', '-f', '-'], { input: manifests.map((m) => JSON.stringify(m)).join('\n') });
  if (applied.code !== 0) throw new Error(`kubectl apply (the policy ${opts.name}): ${applied.stderr}`);
  return {
    name: opts.name,
    async remove() {
      for (const kind of ['validatingadmissionpolicybinding', 'validatingadmissionpolicy']) await kubectl(['delete', kind, opts.name, '--ignore-not-found', '--wait=false']);
    },
  };
}
