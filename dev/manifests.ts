// The knative/ manifests as objects (`kubectl kustomize knative/`), for the dev stack and the tests:
// the dev stack runs each function under its real ServiceAccount and registers the real webhooks,
// so a missing RBAC verb or a wrong webhook rule shows up locally, not after a deploy.
import { spawnSync } from 'node:child_process';
import { parseAllDocuments, stringify } from 'yaml';
import { runProcess } from './cluster/processes.ts';

export const KNATIVE_DIR = new URL('../knative/', import.meta.url).pathname;
export const SYSTEM_NAMESPACE = 'neoset-system';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export function kustomize(dir = KNATIVE_DIR): Manifest[] {
  const r = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${r.stderr || r.error?.message}`);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Manifest);
}

/**
 * The manifests that give the functions their identities: namespace, ServiceAccounts, RBAC, and the
 * ValidatingAdmissionPolicy that keeps the admission account to dry-runs (so the dev stack runs under it).
 */
export const identityManifests = (all: Manifest[]) =>
  all.filter((m) => ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].includes(m.kind));

export const toYaml = (manifests: Manifest[]) => manifests.map((m) => stringify(m)).join('---\n');

/**
 * `kubectl apply` of `manifests`; throws with kubectl's message, naming `what` failed. It does not
 * block this process (runProcess): the dev stack's Ctrl-C is handled while it runs, and it dies with us.
 */
export async function kubectlApply(kubeconfig: string, manifests: Manifest[], what: string): Promise<void> {
  const r = await runProcess('kubectl', ['--kubeconfig', kubeconfig, 'apply', '-f', '-'], { input: toYaml(manifests) });
  if (r.status !== 0) throw new Error(`${what} failed: ${r.stderr || r.error?.message || `kubectl ended by ${r.signal}`}`);
}
