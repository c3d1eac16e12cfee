// Each function of the dev stack talks to the API server as its own ServiceAccount from knative/
// (a TokenRequest token in a kubeconfig of its own), exactly as it would in the cluster.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { KubeClient } from '../shared/k8s/client.ts';
import { identityManifests, kubectlApply, SYSTEM_NAMESPACE, type Manifest } from './manifests.ts';

/** Tokens outlive any dev session; the control plane (and its signing key) does not outlive it. */
const TOKEN_SECONDS = 7 * 24 * 3600;

export function applyIdentities(adminKubeconfig: string, manifests: Manifest[]): Promise<void> {
  return kubectlApply(adminKubeconfig, identityManifests(manifests), 'applying the namespace and RBAC of knative/');
}

/**
 * Writes `<dir>/<serviceAccount>.kubeconfig`, authenticated by a fresh token, reaching the API server
 * as `cluster` (a kubeconfig cluster entry: server, CA, TLS settings); returns its path.
 */
export async function serviceAccountKubeconfig(admin: KubeClient, cluster: Record<string, unknown>, serviceAccount: string, dir: string): Promise<string> {
  const answer = await admin.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${SYSTEM_NAMESPACE}/serviceaccounts/${serviceAccount}/token`,
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: TOKEN_SECONDS } } },
  );
  const path = join(dir, `${serviceAccount}.kubeconfig`);
  const user = `system:serviceaccount:${SYSTEM_NAMESPACE}:${serviceAccount}`;
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'neoset-dev', cluster }],
      users: [{ name: user, user: { token: answer.status.token } }],
      contexts: [{ name: serviceAccount, context: { cluster: 'neoset-dev', user, namespace: SYSTEM_NAMESPACE } }],
      'current-context': serviceAccount,
    }),
    { mode: 0o600 },
  );
  return path;
}
