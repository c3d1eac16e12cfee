// The cluster the dev stack runs against: its own local control plane (the default), or one the user
// already has — kind, minikube, a dev cluster — named by `--kubeconfig PATH` (and `--context NAME`).
// Either way the rest of the stack sees one admin kubeconfig file (kubectl and client-node alike) and
// the kubeconfig `cluster` entry the functions reach the API server with as their ServiceAccounts.
import { KubeConfig } from '@kubernetes/client-node';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { createKubeClient } from '../shared/k8s/client.ts';
import { startControlPlane, type ControlPlane } from './cluster/control-plane.ts';
import { PROCESS_GRACE_MS, type Part } from './cluster/shutdown.ts';
import { toYaml, type Manifest } from './manifests.ts';

export interface Cluster {
  /** The admin kubeconfig: one context, credentials embedded. */
  kubeconfigPath: string;
  server: string;
  /** kube-apiserver gitVersion, e.g. "v1.37.2". */
  version: string;
  /** The kubeconfig `cluster` entry (server, CA, TLS settings) for the functions' own kubeconfigs. */
  entry: Record<string, unknown>;
  /** True when the user brought it: nothing of it is ours to stop. */
  external: boolean;
  kubeConfig(): KubeConfig;
  /** The local control plane: its stop, and a line when one of its processes dies. */
  local?: { part: Part; exited: Promise<string>; controlPlane: ControlPlane };
}

const loadFile = (path: string) => {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
};

export async function startLocalCluster(dir: string, log: (line: string) => void): Promise<Cluster> {
  const controlPlane = await startControlPlane({ dir, log });
  return {
    kubeconfigPath: controlPlane.kubeconfigPath,
    server: controlPlane.server,
    version: controlPlane.version,
    entry: { server: controlPlane.server, 'certificate-authority-data': Buffer.from(controlPlane.caPem).toString('base64') },
    external: false,
    kubeConfig: () => controlPlane.kubeConfig(),
    local: { part: { name: 'control plane', stop: () => controlPlane.stop(), budgetMs: 3 * PROCESS_GRACE_MS }, exited: controlPlane.exited, controlPlane },
  };
}

/**
 * The user's cluster: `context` (default: the current one) of `kubeconfig`, flattened by kubectl into
 * `adminPath` — one file whatever the original spreads over (CA files, several configs, exec plugins
 * are kept as they are) — and checked to answer.
 */
export async function connectCluster(kubeconfig: string, context: string | undefined, adminPath: string): Promise<Cluster> {
  const args = ['config', 'view', '--kubeconfig', kubeconfig, '--minify', '--flatten', ...(context ? ['--context', context] : [])];
  const r = spawnSync('kubectl', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
  const config = parse(r.stdout) as { clusters?: { cluster: Record<string, unknown> }[]; contexts?: { name: string }[] };
  const entry = config.clusters?.[0]?.cluster;
  if (!entry?.server) throw new Error(`${kubeconfig}${context ? ` context ${context}` : ''} names no cluster server`);
  // --minify keeps the context it used but not always as current-context (when chosen by --context).
  const flattened = { ...config, 'current-context': config.contexts?.[0]?.name };
  writeFileSync(adminPath, toYaml([flattened as unknown as Manifest]), { mode: 0o600 });
  const kc = loadFile(adminPath);
  const version = await createKubeClient(kc)
    .request<{ gitVersion: string }>('GET', '/version')
    .catch((error: Error) => {
      throw new Error(`the cluster of ${kubeconfig}${context ? ` (context ${context})` : ''} at ${entry.server} does not answer: ${error.message}`);
    });
  return { kubeconfigPath: adminPath, server: String(entry.server), version: version.gitVersion, entry, external: true, kubeConfig: () => loadFile(adminPath) };
}

/**
 * Deletes what `kubectl apply` registered (the admission webhooks), so the user's cluster is not left
 * calling a webhook that is gone — under `failurePolicy: Fail` it would refuse every NeoSet write.
 * Asynchronous and with a request timeout: it runs inside the bounded stop.
 */
const deleteArgs = (kubeconfig: string, timeout: string) => ['--kubeconfig', kubeconfig, 'delete', '--ignore-not-found', '--wait=false', `--request-timeout=${timeout}`, '-f', '-'];

export function deleteManifests(kubeconfig: string, manifests: Manifest[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', deleteArgs(kubeconfig, '3s'), { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`kubectl delete: ${stderr.trim()}`))));
    child.stdin.end(toYaml(manifests));
  });
}

/** The same, synchronously: for an exit that cannot wait (a second Ctrl-C, the stop's deadline). */
export function deleteManifestsNow(kubeconfig: string, manifests: Manifest[]): void {
  spawnSync('kubectl', deleteArgs(kubeconfig, '2s'), { input: toYaml(manifests), stdio: ['pipe', 'ignore', 'ignore'], timeout: 3000 });
}
