// The stack a fleet benchmark runs on: the one bench/rollout.ts describes — the control plane, the
// three functions as child processes and the event bridge (dev/stack.ts), a second
// kube-controller-manager running only statefulset-controller, and `nodes` simulated kubelets each a
// child process of its own — with the CPU groups that each party's /proc figures are summed in, and
// the FlowSchemas that let the API server count the functions' and the controller's requests apart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { startControlPlane } from '../../dev/cluster/control-plane.ts';
import { startControllerManager } from '../../dev/cluster/controller-manager.ts';
import { startProcess, type ManagedProcess } from '../../dev/cluster/processes.ts';
import { REPO_ROOT } from '../../dev/functions.ts';
import { startDevStack, type DevStack } from '../../dev/stack.ts';
import { installFlowSchemas, NEOSET_FUNCTIONS, STATEFULSET_CONTROLLER } from './api-metrics.ts';
import { childrenNamed, type CpuGroup } from './cpu.ts';
import { until } from './workloads.ts';

/** CPU groups, in the order the fleet's CPU table shows them. */
export const FLEET_CPU_PARTIES = ['functions', 'reconcile', 'readiness', 'admission', 'statefulset-controller', 'kube-apiserver', 'etcd', 'kubelet', 'bridge+bench'] as const;

export interface FleetStack {
  stack: DevStack;
  admin: KubeClient;
  cpu: CpuGroup[];
  version: string;
  nodes: number;
  dir: string;
}

/**
 * The simulated kubelets, each a child process of its own (its CPU is its own), once their nodes are
 * Ready; `args` are more of dev/kubelet/cli.ts's flags (e.g. --bind-except).
 */
export async function startKubelets(admin: KubeClient, kubeconfig: string, count: number, dir: string, args: string[] = []): Promise<ManagedProcess[]> {
  const kubelets: ManagedProcess[] = [];
  const names = Array.from({ length: count }, (_, i) => `fleet-node-${i}`);
  names.forEach((node, i) => {
    kubelets.push(startProcess(`kubelet-${i}`, process.execPath, [join(REPO_ROOT, 'dev', 'kubelet', 'cli.ts'), '--kubeconfig', kubeconfig, '--node', node, ...args], join(dir, `kubelet-${i}.log`)));
  });
  // These nodes (a stack may have others: the real-Knative one's process-mode kubelet).
  await until(`${count} simulated node(s) Ready`, 120_000, async () => {
    const nodes = await admin.request<{ items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[] }>('GET', '/api/v1/nodes');
    return nodes.items.filter((node) => names.includes(node.metadata.name) && node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === count;
  });
  return kubelets;
}

/**
 * The processes each party's CPU is read from (FLEET_CPU_PARTIES): the functions together and each,
 * statefulset-controller's kube-controller-manager, the API server and etcd (our children by name), the
 * kubelets, and this process (the event bridge and the benchmark's watches).
 */
export function benchCpuGroups(stack: DevStack, kcm: ManagedProcess, kubelets: ManagedProcess[]): CpuGroup[] {
  const fns = stack.functions;
  return [
    { name: 'functions', pids: [fns.reconcile.process.pid, fns.readiness.process.pid, fns.admission.process.pid] },
    ...(['reconcile', 'readiness', 'admission'] as const).map((name) => ({ name, pids: [fns[name].process.pid] })),
    { name: 'statefulset-controller', pids: [kcm.pid] },
    { name: 'kube-apiserver', pids: childrenNamed('kube-apiserver') },
    { name: 'etcd', pids: childrenNamed('etcd') },
    { name: 'kubelet', pids: kubelets.map((k) => k.pid) },
    { name: 'bridge+bench', pids: [process.pid] },
  ];
}

/** Runs `body` on a fresh stack with `nodes` simulated nodes and stops every part afterwards, whatever happened. */
export async function withFleetStack<T>(opts: { nodes: number; resyncMs: number; log: (line: string) => void; keep: boolean }, body: (s: FleetStack) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'neoset-bench-fleet-'));
  // The control plane is the benchmark's, so that the dev stack starts no kubelet in this process.
  const controlPlane = await startControlPlane({ dir: join(dir, 'control-plane'), log: opts.log });
  let stack: DevStack | undefined;
  let kcm: ManagedProcess | undefined;
  let kubelets: ManagedProcess[] = [];
  try {
    stack = await startDevStack({ dir, cluster: { kubeconfig: controlPlane.kubeconfigPath }, ports: { reconcile: 0, readiness: 0, admission: 0 }, resyncMs: opts.resyncMs, log: opts.log });
    const admin = createKubeClient(stack.cluster.kubeConfig());
    kcm = await startControllerManager(controlPlane, { name: 'kcm-statefulset', controllers: ['statefulset-controller'] });
    kubelets = await startKubelets(admin, controlPlane.kubeconfigPath, opts.nodes, dir);
    const cpu = benchCpuGroups(stack, kcm, kubelets);
    await installFlowSchemas(admin, [NEOSET_FUNCTIONS, STATEFULSET_CONTROLLER]);
    return await body({ stack, admin, cpu, version: controlPlane.version, nodes: kubelets.length, dir });
  } finally {
    for (const kubelet of kubelets) await kubelet.stop();
    await kcm?.stop();
    await stack?.stop();
    await controlPlane.stop();
    if (opts.keep) opts.log(`kept ${dir} (the functions' JSON logs)`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
