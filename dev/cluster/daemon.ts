// The background process behind `npm run cluster:up`: a control plane with the NeoSet CRD and, when
// dev/kubelet is there, one simulated kubelet for every namespace. Stops cleanly on SIGTERM/SIGINT.
// Started (detached) by cli.ts; prints progress to its log, .neoset/cluster/daemon.log.
import { copyFile, rename, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from './control-plane.ts';
import { installCrds } from './crd.ts';
import { PROCESS_GRACE_MS, stopInOrder, type Part } from './shutdown.ts';
import { localCluster, removeRunFiles, type LocalClusterState } from './local-cluster.ts';

const NODE_NAME = 'neoset-local';
const KUBELET_MODULE = new URL('../kubelet/kubelet.ts', import.meta.url);

const log = (line: string) => console.log(`${new Date().toISOString()} ${line}`);


/** The simulated kubelet, if that module exists and exports startKubelet (it is developed separately). */
async function startKubeletIfPresent(kubeConfig: KubeConfig): Promise<Part | undefined> {
  if (!existsSync(KUBELET_MODULE)) {
    log(`no ${KUBELET_MODULE.pathname}: running without a kubelet (pods will stay Pending)`);
    return undefined;
  }
  const module = (await import(KUBELET_MODULE.href)) as { startKubelet?: (opts: object) => Promise<{ stop(): Promise<void> }> };
  if (typeof module.startKubelet !== 'function') {
    log(`${KUBELET_MODULE.pathname} exports no startKubelet: running without a kubelet`);
    return undefined;
  }
  // volumes: StorageClass `standard`, claims bound and resized as a CSI driver would (dev/kubelet/volumes.ts).
  const kubelet = await module.startKubelet({ kubeConfig, nodeName: NODE_NAME, log, volumes: {} });
  log(`simulated kubelet running as node ${NODE_NAME} for all namespaces`);
  return { name: 'simulated kubelet', stop: () => kubelet.stop() };
}

async function main(): Promise<void> {
  const parts: Part[] = [];
  let stopping = false;
  const shutdown = async (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    log(`stopping (${why})`);
    // Last started, first stopped: the kubelet before the API server it talks to; each bounded in
    // time. Mid-startup, what has no part yet is a child process, killed as we exit (processes.ts).
    await stopInOrder(parts.splice(0).reverse(), log);
    removeRunFiles();
    log('stopped');
    process.exit(code);
  };
  // First of all: `cluster:down` may come while the control plane is still starting.
  process.on('SIGTERM', () => void shutdown('SIGTERM', 0));
  process.on('SIGINT', () => void shutdown('SIGINT', 0));

  await rm(localCluster.dataDir, { recursive: true, force: true });
  const controlPlane = await startControlPlane({ dir: localCluster.dataDir, log });
  parts.push({ name: 'control plane', stop: () => controlPlane.stop(), budgetMs: 3 * PROCESS_GRACE_MS });
  void controlPlane.exited.then((line) => shutdown(line, 1));

  try {
    const crds = await installCrds(controlPlane.kubeConfig());
    log(`installed CRD ${crds.join(', ')}`);
    const kubelet = await startKubeletIfPresent(controlPlane.kubeConfig()).catch((error: Error) => {
      log(`simulated kubelet failed to start, running without it: ${error.stack ?? error.message}`);
      return undefined;
    });
    if (kubelet) parts.push(kubelet);
    await copyFile(controlPlane.kubeconfigPath, localCluster.kubeconfig);
    const state: LocalClusterState = {
      pid: process.pid,
      server: controlPlane.server,
      version: controlPlane.version,
      etcdVersion: controlPlane.etcdVersion,
      kubeconfig: localCluster.kubeconfig,
      kubelet: kubelet ? NODE_NAME : null,
      logs: controlPlane.logs,
      readyAt: new Date().toISOString(),
    };
    // Written last and atomically: the CLI takes its appearance as "ready".
    await writeFile(`${localCluster.stateFile}.tmp`, JSON.stringify(state, null, 2));
    await rename(`${localCluster.stateFile}.tmp`, localCluster.stateFile);
    log(`ready: kube-apiserver ${state.version} (etcd ${state.etcdVersion}) at ${state.server}`);
  } catch (error) {
    log(`failed: ${(error as Error).stack ?? error}`);
    await shutdown('startup failed', 1);
  }
}

main().catch((error: Error) => {
  log(`failed: ${error.stack ?? error.message}`);
  process.exit(1);
});
