// `npm run dev` on the real Knative Eventing (the default; `--bridge` is dev/stack.ts): what a
// cluster has beneath Knative, then Knative, then NeoSet on it, all on this machine —
//
//   a control plane on the service network (dev/cluster/service-network.ts: kube-apiserver at
//   API_ADDRESS, reached by pods through the `kubernetes` Service), a process-mode kubelet (pods whose
//   image is in the image table run as processes in their own network namespaces: Knative's built
//   binaries, CoreDNS, NeoSet's functions from this checkout), kube-proxy and CoreDNS
//   (dev/cluster/services.ts), Knative Eventing from its release manifests (dev/cluster/knative.ts),
//   and NeoSet's eventing-only variant (knative/eventing-only/: the functions as Deployments behind
//   Services, fed by ApiServerSources → Broker → Triggers and a PingSource) deployed by
//   dev/cluster/neoset-on-knative.ts.
//
// Where the time goes (issue 21: ready within 30 s once the binaries are cached; ~17 s measured):
// the control plane first (~3 s); then, in parallel, kube-proxy + CoreDNS, NeoSet's objects that need
// no Knative (its functions' pods start now) and Knative's release in one apply, whose webhook serving
// is the long pole (~10 s); then NeoSet's Broker, sources and Triggers, Ready ~3 s later. Not waited
// for: every Deployment of Knative Available (two of its controllers have a 20 s readiness
// initialDelaySeconds and work before it) and the PingSource Ready (its adapter has the same delay, and
// its tick is a minute's anyway: nothing may wait on it for speed).
//
// Stopping (Ctrl-C): the container processes run in process groups of their own (a terminal's SIGINT
// does not reach them), so the kubelet's stop is what ends them, deletes their network namespaces and
// veths and its bridge; kube-proxy's nftables tables and the service network's interface go with the
// proxy's and the control plane's stops, all at once; sweepNow() at exit takes what they left, and
// ip_forward goes back to what the host had (dev/kubelet/process/ip-forward.ts).
//
// On its host (issue 34): the start removes what a stack killed with SIGKILL left (leftovers.ts) and
// says so; it refuses ranges the host's routes cover (address-plan.ts; --pod-network-cidr,
// --service-cidr, --api-address pick others); kube-proxy cleans no iptables or IPVS state
// (services.ts); the pods take hostPath volumes from `dir` only, and the stack's images run their own
// programs only (dev/kubelet/process/volumes.ts, image-table.ts).

import { appendFileSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { CoreV1Api } from '@kubernetes/client-node';
import { join } from 'node:path';
import { clusterDNSIP, DEFAULT_ADDRESS_PLAN, podNetworkOf, type AddressPlan } from './cluster/address-plan.ts';
import { resolveCoreDns, resolveKnativeEventing } from './cluster/binaries.ts';
import { startControlPlane, type ControlPlane } from './cluster/control-plane.ts';
import { installKnativeEventing, KNATIVE_CONTROLLERS, KNATIVE_EVENTING_VERSION, KNATIVE_NAMESPACE, knativeImageTable, kubectl } from './cluster/knative.ts';
import { deployNeoSetOnKnative, neosetOnKnativeImageTable, prepareNeoSetOnKnative } from './cluster/neoset-on-knative.ts';
import { removeLeftovers } from './cluster/leftovers.ts';
import { sweepNow } from './cluster/service-network.ts';
import { startServices } from './cluster/services.ts';
import { PROCESS_GRACE_MS, stopAtOnce, type Part } from './cluster/shutdown.ts';
import { startKubelet, type KubeletOptions } from './kubelet/kubelet.ts';
import { STATE_ROOT } from './kubelet/process/network.ts';
import { followFile, formatLogLine } from './log-view.ts';
import { SYSTEM_NAMESPACE, toYaml, type Manifest } from './manifests.ts';
import { devAnalysisAddresses } from './stack.ts';

export interface KnativeDevStackOptions {
  /** Working directory: kubeconfig, logs, the control plane's data. */
  dir: string;
  /** Print every invocation of the functions, not only those that wrote something. */
  verbose?: boolean;
  /** Progress and invocation lines. */
  log: (line: string) => void;
  /**
   * Which namespaces' pods the process-mode kubelet binds (default every one): the rollout benchmark
   * keeps its own pods to simulated kubelets of their own (bench/lib/knative-side.ts).
   */
  kubeletBinds?: KubeletOptions['binds'];
  /** The pods', the Services' and the API server's addresses (default: address-plan.ts's; npm run dev's --pod-network-cidr, --service-cidr, --api-address). */
  addresses?: AddressPlan;
}

export interface KnativeDevStackReady {
  /** Admin kubeconfig: `<dir>/kubeconfig`. */
  kubeconfigPath: string;
  controlPlane: ControlPlane;
  knativeVersion: string;
  /** ClusterIP URLs of the functions' Services (the host reaches them through kube-proxy). */
  serviceURLs: { reconcile: string; readiness: string; deadLetter: string; brokerIngress: string };
  /** The stack's own logs (kubelet, kube-proxy); the pods' are the kubelet's (see `summary`). */
  logsDir: string;
  /** When each step finished, in ms from the start: what the ready line's time is made of. */
  timings: { step: string; atMs: number }[];
  /** What runs and how to look at it: printed before the ready line. */
  summary: string[];
}

export interface KnativeDevStack {
  /** Resolves once NeoSet can roll out on the real Knative; rejects (after stopping what started) on a failure. */
  ready: Promise<KnativeDevStackReady>;
  /** Resolves, with what happened, when a part of the stack dies on its own. */
  failed: Promise<string>;
  /** Stops what has started so far (also during startup, which then starts nothing more), each part bounded. */
  stop(): Promise<void>;
  /** For an exit that cannot wait for stop(): undoes, synchronously, what would outlive the process. */
  stopNow(): void;
}

const NODE_NAME = 'neoset-dev';

/** A log into `path`, each line stamped (the kubelet's: too many lines for the terminal). */
const fileLog = (path: string) => (line: string) => appendFileSync(path, `${new Date().toISOString()} ${line}\n`);

const FUNCTIONS = ['reconcile', 'readiness', 'admission'] as const;

/**
 * Follows the function pods' logs as `--bridge` follows its processes' (dev/log-view.ts: one line per
 * invocation that wrote something). The process-mode kubelet keeps a container's log of its Nth run
 * in <its node's state directory>/pods/<pod uid>/logs/<container>/<N>.log (dev/kubelet/process/pods.ts);
 * the node's is the neoset<index> directory this process owns. The runs at startup are followed.
 */
async function followFunctionLogs(cp: ControlPlane, verbose: boolean, log: (line: string) => void): Promise<() => void> {
  const nodes = readdirSync(STATE_ROOT).filter((d) => /^neoset\d+$/.test(d) && readFileSync(join(STATE_ROOT, d, 'owner'), 'utf8').trim() === String(process.pid));
  const pods = (await cp.kubeConfig().makeApiClient(CoreV1Api).listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `app.kubernetes.io/component in (${FUNCTIONS.join(',')})` })).items;
  const unfollow = pods.flatMap((pod) => {
    const fn = pod.metadata!.labels!['app.kubernetes.io/component'];
    const container = pod.spec!.containers[0].name;
    const run = pod.status?.containerStatuses?.[0]?.restartCount ?? 0;
    return nodes.map((node) =>
      followFile(join(STATE_ROOT, node, 'pods', pod.metadata!.uid!, 'logs', container, `${run}.log`), (line) => {
        const text = formatLogLine(fn, line, verbose);
        if (text) log(text);
      }),
    );
  });
  return () => unfollow.forEach((stop) => stop());
}

/**
 * The operator's ConfigMap neoset-analysis (knative/reconcile.yaml, admission.yaml), made before the
 * functions' pods read it into NEOSET_ANALYSIS_ADDRESSES: the same addresses as the bridge mode's.
 */
async function analysisAddresses(cp: ControlPlane): Promise<void> {
  const addresses = devAnalysisAddresses();
  const objects: Manifest[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SYSTEM_NAMESPACE } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'neoset-analysis', namespace: SYSTEM_NAMESPACE }, data: { addresses } },
  ];
  const r = await kubectl(cp.kubeconfigPath, ['apply', '-f', '-'], toYaml(objects));
  if (r.code !== 0) throw new Error(`creating the ConfigMap neoset-analysis failed: ${r.out.trim()}`);
}

export function startKnativeDevStack(opts: KnativeDevStackOptions): KnativeDevStack {
  const { dir, log } = opts;
  const logsDir = join(dir, 'logs');
  const kubeconfigPath = join(dir, 'kubeconfig');
  // Stopped all at once (nothing here needs another part while it stops; see stopAtOnce). A part
  // that comes up while the stack is stopping is stopped right away.
  const parts: Part[] = [];
  let stopping: Promise<void> | undefined;
  const add = (part: Part) => (stopping ? void stopAtOnce([part], log) : parts.push(part));
  const stop = () => (stopping ??= stopAtOnce(parts.splice(0), log));
  let reportFailure: (why: string) => void = () => {};
  const failed = new Promise<string>((resolve) => (reportFailure = resolve));

  const started = Date.now();
  const timings: KnativeDevStackReady['timings'] = [];
  const timed = async <T>(step: string, work: Promise<T>): Promise<T> => {
    const value = await work;
    timings.push({ step, atMs: Date.now() - started });
    return value;
  };
  /** Throws when the stack began stopping meanwhile: startup goes no further. */
  const goOn = () => {
    if (stopping) throw new Error('stopped during startup');
  };

  const addresses = opts.addresses ?? DEFAULT_ADDRESS_PLAN;
  const start = async (): Promise<KnativeDevStackReady> => {
    for (const old of ['cluster', 'logs']) rmSync(join(dir, old), { recursive: true, force: true });
    for (const d of [dir, logsDir]) mkdirSync(d, { recursive: true, mode: 0o700 });
    // What a stack killed with SIGKILL left (its pods' processes, namespaces, links, kube-proxy's
    // tables, ip_forward) goes before anything of this one is made (dev/cluster/leftovers.ts).
    await removeLeftovers(log);
    goOn();
    // The binaries are resolved (built on a first run, with progress lines) while the control plane starts.
    const controlPlane = timed('control plane', startControlPlane({ dir: join(dir, 'cluster'), serviceNetwork: addresses, extraControllers: KNATIVE_CONTROLLERS, log: (line) => log(`control plane: ${line}`) }));
    void controlPlane.then((cp) => {
      add({ name: 'control plane', stop: () => cp.stop(), budgetMs: 3 * PROCESS_GRACE_MS });
      void cp.exited.then(reportFailure);
    }, () => {});
    const [[knativeDir, coredns], cp] = await Promise.all([Promise.all([resolveKnativeEventing(), resolveCoreDns()]), controlPlane]);
    goOn();

    const kubeletLog = join(logsDir, 'kubelet.log');
    const kubelet = await startKubelet({
      kubeConfig: cp.kubeConfig(),
      nodeName: NODE_NAME,
      binds: opts.kubeletBinds,
      podNetwork: podNetworkOf(addresses),
      log: fileLog(kubeletLog),
      // As the bridge mode's: StorageClass `standard`, claims bound and resized as a CSI driver would.
      volumes: {},
      processMode: {
        imageTable: [...knativeImageTable(knativeDir), ...neosetOnKnativeImageTable()],
        programs: { coredns },
        backoffMs: 1000,
        maxBackoffMs: 10_000,
        clusterDNS: clusterDNSIP(addresses),
        // The pods run as root on this host: a hostPath volume is bound only from the stack's own directory.
        hostPathRoot: dir,
      },
    });
    add({ name: 'kubelet (pods, network namespaces)', stop: () => kubelet.stop(), budgetMs: 2 * PROCESS_GRACE_MS });
    goOn();
    log(`kubelet: node ${NODE_NAME}; pods of Knative's, CoreDNS's and NeoSet's images run as processes, each in its network namespace (log ${kubeletLog})`);

    // Independent of one another: Knative's pods reach the API server by the `kubernetes` ClusterIP
    // (kube-proxy's rules are in place long before the webhook's first pod runs) and need the cluster
    // DNS only once events flow.
    const services = timed('kube-proxy + CoreDNS', startServices(cp, { nodeName: kubelet.nodeName, addresses, log }));
    void services.then((s) => {
      add({ name: 'kube-proxy (nftables)', stop: () => s.stopProxy(), budgetMs: 2 * PROCESS_GRACE_MS });
      void s.kubeProxy.exited.then((code) => reportFailure(`kube-proxy exited (${code}); log ${s.kubeProxyLog}`));
    }, () => {});
    await Promise.all([
      services,
      timed('Knative Eventing applied', installKnativeEventing(cp, { dir: knativeDir, together: true, waitAvailable: false, log: (line) => log(`knative: ${line}`) })),
      // The functions' pods start meanwhile: only the Broker, sources and Triggers wait for Knative.
      timed('NeoSet without Knative', analysisAddresses(cp).then(() => prepareNeoSetOnKnative(cp, { log: (line) => log(`neoset: ${line}`) }))),
    ]);
    goOn();
    const neoset = await timed('NeoSet on Knative', deployNeoSetOnKnative(cp, { prepared: true, waitPingSource: false, log: (line) => log(`neoset: ${line}`) }));
    goOn();

    const unfollow = await followFunctionLogs(cp, opts.verbose ?? false, log);
    add({ name: 'log views', stop: unfollow });

    copyFileSync(cp.kubeconfigPath, kubeconfigPath);
    add({ name: 'kubeconfig', stop: () => rmSync(kubeconfigPath, { force: true }) });
    const { reconcile, readiness } = neoset.serviceURLs;
    return {
      kubeconfigPath,
      controlPlane: cp,
      knativeVersion: KNATIVE_EVENTING_VERSION,
      serviceURLs: neoset.serviceURLs,
      logsDir,
      timings,
      summary: [
        `took: ${timings.map((t) => `${t.step} ${(t.atMs / 1000).toFixed(1)} s`).join(', ')} (from the start)`,
        `Knative Eventing v${KNATIVE_EVENTING_VERSION} in ${KNATIVE_NAMESPACE} (controller, webhook, in-memory channel, MT channel-based Broker), CoreDNS and NeoSet's functions: pods run as processes with pod IPs (kubectl get pods -A -o wide)`,
        `NeoSet's eventing-only variant (knative/eventing-only/) in ${SYSTEM_NAMESPACE}: reconcile ${reconcile}, readiness ${readiness} (ClusterIPs), admission by its Service; ` +
          `fed by the ApiServerSources neoset-neosets and neoset-pods → Broker neoset → Triggers, and the PingSource neoset-resync (a tick a minute; its adapter turns Ready ~20 s after it starts)`,
        `canary analyses may query: ${devAnalysisAddresses() || 'no Prometheus address'} (the ConfigMap neoset-analysis)`,
        `see Knative's objects: kubectl get brokers,triggers,apiserversources,pingsources -A`,
      ],
    };
  };

  const ready = start().catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return {
    ready,
    failed,
    stop,
    stopNow() {
      rmSync(kubeconfigPath, { force: true });
      // Whatever the parts' stops did not get to (or had not started yet).
      sweepNow();
    },
  };
}
