// A template that needs its namespace's opt-in (SPEC §2.5; knative/reconcile-policy.yaml, the policy
// neoset-functions-no-privileged-pods): privileged containers, host namespaces, hostPath volumes. The
// API server refuses such a pod to the reconcile and admission ServiceAccounts in a namespace without
// the label, so the admission function's dry-run create of ordinal 0's pod (SPEC §5) meets the refusal
// when the NeoSet is written. Its author is told which part of the template and which label, in our
// words: a dry-run of their own would pass (the policy matches NeoSet's accounts only), and the label
// is all they can ask for.
export const PRIVILEGED_PODS_POLICY = 'neoset-functions-no-privileged-pods';
export const LABEL_PRIVILEGED_PODS = 'neoset.neo.io/privileged-pods';

/** The start of each of the policy's messages, and the template's part it names. */
const PARTS: [string, string][] = [
  ['privileged containers', 'spec.template.spec: privileged containers (securityContext.privileged)'],
  ['host namespaces', 'spec.template.spec: host namespaces (hostNetwork, hostPID, hostIPC)'],
  ['hostPath volumes', 'spec.template.spec.volumes: hostPath volumes'],
];

/** What a dry-run refused by that policy tells the NeoSet's author; null for any other refusal. */
export function privilegedPodsReason(message: string): string | null {
  if (!message.includes(`ValidatingAdmissionPolicy '${PRIVILEGED_PODS_POLICY}'`)) return null;
  const part = PARTS.find(([start]) => message.includes(`denied request: ${start} `))?.[1] ?? 'spec.template.spec: privileged pods';
  return `${part} need the namespace label ${LABEL_PRIVILEGED_PODS}=allowed, which a cluster administrator sets`;
}
