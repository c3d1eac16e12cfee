// The rollout benchmark's real-Knative side (issue 21's bench point, issue 24 point 5): the stack
// `npm run dev` runs by default (dev/knative-stack.ts) — a serviceNetwork control plane, a
// process-mode kubelet, kube-proxy + CoreDNS, Knative Eventing from its release manifests, NeoSet's
// eventing-only variant (knative/eventing-only/) with the functions as process-mode pods fed by the
// real ApiServerSources → Broker → Triggers — plus the benchmark's simulated kubelets in processes of
// their own, as on the bridge side, so that the benchmark's pods are run the same way on both: the
// process-mode kubelet binds only the stack's own namespaces' pods, the simulated ones every other.
//
// Claims the machine's service network (one per machine): on a shared machine run the benchmark
// under `flock /tmp/neoset-service-network.lock`.
import { basename } from 'node:path';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { resolveKnativeEventing } from '../../dev/cluster/binaries.ts';
import { KNATIVE_EVENTING_VERSION, KNATIVE_NAMESPACE } from '../../dev/cluster/knative.ts';
import type { ManagedProcess } from '../../dev/cluster/processes.ts';
import { startKnativeDevStack } from '../../dev/knative-stack.ts';
import { SYSTEM_NAMESPACE } from '../../dev/manifests.ts';
import { containerLog } from '../../dev/kubelet/process/container-logs.ts';
import { installFlowSchemas, NEOSET_FUNCTIONS } from './api-metrics.ts';
import { descendants, type CpuGroup } from './cpu.ts';
import { startKubelets } from './fleet-stack.ts';
import { until } from './workloads.ts';
import { functionMetrics, type RolloutStack } from './rollout-stack.ts';

/** The namespaces of the stack's own pods (CoreDNS, Knative's, NeoSet's): the process-mode kubelet's. */
export const STACK_NAMESPACES = ['kube-system', KNATIVE_NAMESPACE, SYSTEM_NAMESPACE];

/**
 * CPU groups of the real-Knative side, in the order its CPU table shows them: the functions
 * (together and each; admission has two pods), Knative (all its processes; then its event path —
 * the ApiServerSource adapters, the Broker's ingress and filter, the in-memory channel's dispatcher
 * — and the rest: controllers, webhook, PingSource adapter), the API server, etcd, the simulated
 * kubelets, kube-proxy with CoreDNS, and this process (the process-mode kubelet and the benchmark's
 * watches).
 */
export const KNATIVE_CPU_PARTIES = ['functions', 'reconcile', 'readiness', 'admission', 'knative', 'adapter', 'ingress', 'filter', 'dispatcher', 'knative-other', 'kube-apiserver', 'etcd', 'kubelet', 'kube-proxy+dns', 'kubelet+bench'] as const;

/** Knative's binaries (named after their cmd/ package) by the party their CPU is shown in. */
const KNATIVE_PARTS: Record<string, string> = { apiserver_receive_adapter: 'adapter', ingress: 'ingress', filter: 'filter', channel_dispatcher: 'dispatcher' };
const KNATIVE = new Set([...Object.values(KNATIVE_PARTS), 'knative-other']);
const FUNCTIONS = new Set(['reconcile', 'readiness', 'admission']);

/** Why the real-Knative side cannot run here (one line), or undefined when it can. */
export function knativeUnavailable(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.BENCH_KNATIVE === '0') return 'BENCH_KNATIVE=0';
  if (process.getuid?.() !== 0) return 'it needs root (its pods run in network namespaces); run as root, or set BENCH_KNATIVE=0 to skip it';
  return undefined;
}

export interface KnativeSide extends RolloutStack {
  version: string;
  knativeVersion: string;
  nodes: number;
  stop(): Promise<void>;
}

/** The party a process below us is charged to, by its command line; undefined for none. */
function partyOf(p: { comm: string; argv: string[] }, knativeDir: string): string | undefined {
  const fn = p.argv.map((a) => /(?:^|\/)functions\/(reconcile|readiness|admission)\/server\.ts$/.exec(a)?.[1]).find(Boolean);
  if (fn) return fn;
  if (p.argv[0]?.startsWith(`${knativeDir}/`)) return KNATIVE_PARTS[basename(p.argv[0])] ?? 'knative-other';
  if (p.comm === 'kube-apiserver' || p.comm === 'etcd') return p.comm;
  if (p.comm === 'kube-proxy' || p.comm === 'coredns') return 'kube-proxy+dns';
  return undefined;
}

/** Brings the real-Knative side up (NeoSet ready to roll out), with `nodes` simulated kubelets for the benchmark's pods. */
export async function startKnativeSide(opts: { dir: string; nodes: number; log: (line: string) => void }): Promise<KnativeSide> {
  // The eventing-only layout (npm run dev's default before issue 35): the CPU parties and functionURLs below are its.
  const dev = startKnativeDevStack({ dir: opts.dir, log: opts.log, kubeletBinds: { only: STACK_NAMESPACES }, layout: 'eventing-only' });
  let stopping = false;
  // Whatever the benchmark is doing then: a run that needs the dead part fails and says so.
  void dev.failed.then((why) => stopping || process.stderr.write(`real-Knative stack: ${why}\n`));
  let kubelets: ManagedProcess[] = [];
  const stop = async () => {
    stopping = true;
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted).off('exit', atExit);
    for (const kubelet of kubelets) await kubelet.stop();
    await dev.stop();
  };
  // The pods' processes are in process groups of their own (a terminal's Ctrl-C does not reach them),
  // and their network namespaces, veths and kube-proxy's tables outlive us: a signal stops them first.
  function interrupted(signal: NodeJS.Signals) {
    opts.log(`${signal}: stopping the real-Knative stack`);
    void stop().finally(() => process.exit(130));
  }
  const atExit = () => dev.stopNow();
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted).once('exit', atExit);
  try {
    const ready = await dev.ready;
    const cp = ready.controlPlane;
    const admin = createKubeClient(cp.kubeConfig());
    kubelets = await startKubelets(admin, cp.kubeconfigPath, opts.nodes, opts.dir, ['--bind-except', STACK_NAMESPACES.join(',')]);
    await installFlowSchemas(admin, [NEOSET_FUNCTIONS]);
    // Built already (the stack resolved it): this only names the directory, whose binaries are Knative's processes.
    const knativeDir = await resolveKnativeEventing();
    const core = cp.kubeConfig().makeApiClient(CoreV1Api);
    const apps = cp.kubeConfig().makeApiClient(AppsV1Api);
    const functionURLs = { reconcile: ready.serviceURLs.reconcile, readiness: ready.serviceURLs.readiness };
    return {
      kubeConfig: cp.kubeConfig(),
      admin,
      version: cp.version,
      knativeVersion: KNATIVE_EVENTING_VERSION,
      nodes: kubelets.length,
      functionURLs,
      cpuGroups(): CpuGroup[] {
        const pids = new Map<string, number[]>(KNATIVE_CPU_PARTIES.map((party) => [party, []]));
        for (const p of descendants()) {
          const party = partyOf(p, knativeDir);
          if (!party) continue;
          pids.get(party)!.push(p.pid);
          const total = FUNCTIONS.has(party) ? 'functions' : KNATIVE.has(party) ? 'knative' : undefined;
          if (total) pids.get(total)!.push(p.pid);
        }
        pids.set('kubelet', kubelets.map((k) => k.pid));
        pids.set('kubelet+bench', [process.pid]);
        return [...pids].map(([name, list]) => ({ name, pids: list }));
      },
      async reconcileLog() {
        const pods = (await core.listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: 'app.kubernetes.io/component=reconcile' })).items;
        return pods.flatMap((pod) => containerLog(pod, 'reconcile'));
      },
      idle: async () => {
        await adaptersRolledOut(apps);
        await quiet(functionURLs);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * knative/eventing.yaml's ApiServerSources select every namespace (namespaceSelector: {}): Knative
 * writes the namespaces into their adapters' Deployments, so each namespace the benchmark creates or
 * deletes rolls the adapters out again (old and new pod both send for a moment, then none). A rollout
 * is measured once they are rolled out: one adapter pod each, on the latest template, available.
 */
async function adaptersRolledOut(apps: AppsV1Api): Promise<void> {
  await until('the ApiServerSource adapters rolled out', 120_000, async () => {
    const adapters = (await apps.listNamespacedDeployment({ namespace: SYSTEM_NAMESPACE })).items.filter((d) => d.metadata?.name?.startsWith('apiserversource-'));
    return (
      adapters.length > 0 &&
      adapters.every((d) => {
        const want = d.spec?.replicas ?? 1;
        const st = d.status ?? {};
        return st.observedGeneration === d.metadata?.generation && st.replicas === want && st.updatedReplicas === want && st.availableReplicas === want;
      })
    );
  });
}

/**
 * The real Broker has no queue to look into: the event path is idle once the functions have neither
 * run nor sent a request for a second (at most 15 s; a PingSource tick may come any minute).
 */
async function quiet(urls: { reconcile: string; readiness: string }): Promise<void> {
  const counters = async () => {
    const samples = await Promise.all([urls.reconcile, urls.readiness].map((url) => functionMetrics(url, /^neoset_(api_requests|reconcile)_total\{/)));
    return JSON.stringify(samples.map((s) => [...s]));
  };
  const deadline = Date.now() + 15_000;
  let last = await counters();
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = await counters();
    if (now === last) return;
    last = now;
  }
}
