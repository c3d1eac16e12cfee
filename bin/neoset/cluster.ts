// Finds the cluster as kubectl does: --kubeconfig, else every file in $KUBECONFIG merged (the first
// file to set a name or current-context wins; missing files are skipped), else ~/.kube/config, else
// the in-cluster service account; then --context and the namespace (-n, the context's, "default").
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import type { ClusterFlags } from './args.ts';
import { CliError, EXIT_API, usageError } from './errors.ts';

export interface Cluster {
  client: KubeClient;
  namespace: string;
  /** The kubeconfig itself, for what needs more than requests (the dashboard's watches). */
  kubeConfig?: KubeConfig;
}

export function connect(flags: ClusterFlags, env: NodeJS.ProcessEnv = process.env): Cluster {
  const kc = loadKubeConfig(flags.kubeconfig, env);
  if (flags.context !== undefined) {
    if (!kc.getContextObject(flags.context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw usageError(`invalid --context "${flags.context}": no such context in the kubeconfig (contexts: ${known.join(', ') || 'none'})`);
    }
    kc.setCurrentContext(flags.context);
  }
  const context = kc.getContextObject(kc.getCurrentContext());
  if (!kc.getCurrentCluster()) {
    throw new CliError(EXIT_API, `the kubeconfig's current context ${JSON.stringify(kc.getCurrentContext())} names no cluster: pass --context or set current-context`);
  }
  return { client: createKubeClient(kc), namespace: flags.namespace ?? (context?.namespace || 'default'), kubeConfig: kc };
}

function loadKubeConfig(explicit: string | undefined, env: NodeJS.ProcessEnv): KubeConfig {
  if (explicit !== undefined) {
    if (!existsSync(explicit)) throw usageError(`invalid --kubeconfig "${explicit}": no such file`);
    return fromFiles([explicit]);
  }
  const listed = (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  const files = (listed.length ? listed : [path.join(homedir(), '.kube', 'config')]).filter((f) => existsSync(f));
  if (files.length) return fromFiles(files);
  if (env.KUBERNETES_SERVICE_HOST) {
    const kc = new KubeConfig();
    kc.loadFromCluster();
    return kc;
  }
  const where = listed.length ? `KUBECONFIG (${listed.join(path.delimiter)}) names no existing file` : 'no ~/.kube/config';
  throw new CliError(EXIT_API, `no kubeconfig: ${where}; set KUBECONFIG or pass --kubeconfig`);
}

/** kubectl's merge rule: the first file that sets a cluster, user, context or current-context wins. */
function fromFiles(files: string[]): KubeConfig {
  const merged = { clusters: [] as KubeConfig['clusters'], users: [] as KubeConfig['users'], contexts: [] as KubeConfig['contexts'], currentContext: '' };
  for (const file of files) {
    const kc = new KubeConfig();
    try {
      kc.loadFromFile(file);
    } catch (err) {
      throw new CliError(EXIT_API, `cannot read kubeconfig ${file}: ${(err as Error).message}`);
    }
    const firsts = <T extends { name: string }>(into: T[], from: T[]) => from.forEach((x) => into.some((y) => y.name === x.name) || into.push(x));
    firsts(merged.clusters, kc.clusters);
    firsts(merged.users, kc.users);
    firsts(merged.contexts, kc.contexts);
    merged.currentContext ||= kc.currentContext;
  }
  const kc = new KubeConfig();
  kc.loadFromOptions(merged);
  return kc;
}
