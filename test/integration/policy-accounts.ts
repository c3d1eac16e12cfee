// What the tests of knative/reconcile-policy.yaml share (reconcile-policy.test.ts, token-pins.test.ts):
// the function accounts' names, requests made as them (kubectl --as, or a client with a token of
// theirs), the policies installed from knative/ and, once the API server has compiled them, in force.
import { KubeConfig } from '@kubernetes/client-node';
import { identityManifests, kubectlApply, kustomize, SYSTEM_NAMESPACE } from '../../dev/manifests.ts';
import { poll } from '../../dev/cluster/wait.ts';
import { API_VERSION, CONDITION_INPLACE_READY, KIND } from '../../shared/api/names.ts';
import { createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { createTestNamespace, kubeConfig, kubeconfigPath, kubectl } from '../cluster/harness.ts';

export const POLICY = 'neoset-functions-own-objects-only';
export const PRIVILEGED_POLICY = 'neoset-functions-no-privileged-pods';
export const FAST_TICK_POLICY = 'neoset-reconcile-fast-tick-only';
/** The start of the API server's refusal by `policy`, before the policy's message. */
export const denied = (policy: string) => `ValidatingAdmissionPolicy '${policy}' with binding '${policy}' denied request: `;
export const DENIED = denied(POLICY);
export const account = (name: string) => `system:serviceaccount:${SYSTEM_NAMESPACE}:${name}`;
export const RECONCILE = account('neoset-reconcile');
export const READINESS = account('neoset-readiness');
export const ADMISSION = account('neoset-admission');

/** A client of `serviceAccount`, authenticated by a token from `kubectl create token` (what the pod would mount). */
export async function serviceAccountClient(serviceAccount: string): Promise<KubeClient> {
  const r = await kubectl(['create', 'token', serviceAccount, '-n', SYSTEM_NAMESPACE, '--duration=1h']);
  if (r.code !== 0) throw new Error(`kubectl create token ${serviceAccount}: ${r.stderr}`);
  const cluster = kubeConfig().getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: serviceAccount, token: r.stdout.trim() }],
    contexts: [{ name: serviceAccount, cluster: cluster.name, user: serviceAccount }],
    currentContext: serviceAccount,
  });
  return createKubeClient(kc);
}

/** A pod's manifest: one container, `spec` merged over it. */
export const pod = (name: string, metadata: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...metadata }, spec: { containers: [{ name: 'main', image: 'mysql:8.0' }], ...spec } });

export const neosetOwner = (name: string, uid: string, controller = true) => ({ apiVersion: API_VERSION, kind: KIND, name, uid, controller, blockOwnerDeletion: true });

/** The InPlaceUpdateReady gate opened, as the functions open it (shared/k8s/apply.ts setInPlaceReady). */
export const openGate = (client: KubeClient, namespace: string, name: string) =>
  client.request('PATCH', paths.podStatus(namespace, name), { patch: 'strategic', body: { status: { conditions: [{ type: CONDITION_INPLACE_READY, status: 'True' }] } } });

/** kubectl as `user` in `namespace`: the request as that account makes it. */
export const as = (user: string, namespace: string, args: string[], input?: string) => kubectl(['-n', namespace, `--as=${user}`, ...args], { input });

/**
 * knative/'s namespace, ServiceAccounts, their roles and every policy (admission's and
 * reconcile-policy.yaml's), applied; then, since the API server compiles a policy asynchronously, each
 * `probe` (a request that its policy refuses, made in a namespace of its own) repeated until it is
 * refused. On a timeout, go on: the tests say what is let through.
 */
export async function installPolicies(probes: { what: string; policy: string; refused: (namespace: string) => Promise<{ code: number; stderr: string }> }[]): Promise<void> {
  await kubectlApply(kubeconfigPath(), identityManifests(kustomize()), 'applying the identities of knative/');
  const ns = await createTestNamespace('policy-probe');
  try {
    for (const probe of probes) {
      await poll(probe.what, async () => {
        const r = await probe.refused(ns.name);
        return r.code !== 0 && r.stderr.includes(denied(probe.policy)) ? true : undefined;
      }, { timeoutMs: 30_000, intervalMs: 250 }).catch((err) => console.log(`${(err as Error).message}: testing anyway`));
    }
  } finally {
    await ns.cleanup();
  }
}

/** The policies of reconcile-policy.yaml removed, so that the next test file's cluster is as it found it. */
export async function removePolicies(): Promise<void> {
  for (const name of [POLICY, PRIVILEGED_POLICY, FAST_TICK_POLICY]) {
    for (const kind of ['ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy']) {
      await kubectl(['delete', kind.toLowerCase(), name, '--ignore-not-found', '--wait=false']);
    }
  }
}
