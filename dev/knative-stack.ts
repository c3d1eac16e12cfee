// `npm run dev` on the real Knative (the default; `--bridge` is dev/stack.ts): what a cluster has
// beneath Knative, then Knative, then NeoSet on it, all on this machine —
//
//   a control plane on the service network (dev/cluster/service-network.ts: kube-apiserver at
//   API_ADDRESS, reached by pods through the `kubernetes` Service), a process-mode kubelet (pods whose
//   image is in the image table run as processes in their own network namespaces: Knative's built
//   binaries, Traefik, CoreDNS, NeoSet's functions from this checkout), kube-proxy and CoreDNS
//   (dev/cluster/services.ts), Knative Eventing from its release manifests (dev/cluster/knative.ts),
//   and in one of two layouts:
//   - `serving` (the default): Knative Serving from its release (dev/cluster/serving.ts) with
//     Traefik as its KIngress implementation (dev/cluster/traefik.ts), and NeoSet as users deploy it
//     on Knative (dev/cluster/neoset-on-serving.ts: `kubectl apply -k knative/`, or `kn service
//     apply` of the functions): reconcile and readiness as Knative Services — each pod the function
//     beside Serving's queue-proxy — fed by ApiServerSources → Broker → Triggers and a PingSource;
//   - `eventing-only` (`npm run dev -- --eventing-only`): no Serving; knative/eventing-only/ (the
//     functions as Deployments behind Services) deployed by dev/cluster/neoset-on-knative.ts.
//
// Where the time goes (issue 21: ready within 30 s once the binaries are cached; ~17 s measured on
// the eventing-only layout): the control plane first (~3 s); then, in parallel, kube-proxy + CoreDNS,
// NeoSet's objects that need no Knative (admission's pods start now; on eventing-only the functions'
// too), Knative Eventing's release in one apply, and on the serving layout Serving's release and
// Traefik; the webhooks' serving is the long pole; then NeoSet's Knative objects, Ready a few seconds
// later (on serving: the Knative Services' first revisions — pod, queue-proxy's readiness, Traefik's
// route). Not waited for: every Deployment of Knative Available (two of Eventing's controllers have
// a 20 s readiness initialDelaySeconds and work before it) and the PingSource Ready (its adapter has
// the same delay, and its tick is a minute's anyway: nothing may wait on it for speed).
//
// Deleted pods (issue 35): a process-mode pod's containers get their grace period up to
// PROCESS_GRACE_SECONDS, not the kubelet's default 2 s: a revision's queue-proxy drains for 30 s after
// SIGTERM and its function's preStop (/wait-for-drain) waits on it, so a pod scaled in finishes
// what it was sent. Simulated pods (the users' NeoSets') keep the 2 s cap.
//
// Stopping (Ctrl-C): the container processes run in process groups of their own (a terminal's SIGINT
// does not reach them), so the kubelet's stop is what ends them (at once, not by grace), deletes
// their network namespaces and veths and its bridge; kube-proxy's nftables tables and the service
// network's interface go with the proxy's and the control plane's stops, all at once; sweepNow() at
// exit takes what they left, and ip_forward goes back to what the host had
// (dev/kubelet/process/ip-forward.ts).
//
// On its host (issue 34): the start removes what a stack killed with SIGKILL left (leftovers.ts) and
// says so; it refuses ranges the host's routes cover (address-plan.ts; --pod-network-cidr,
// --service-cidr, --api-address pick others); kube-proxy cleans no iptables or IPVS state
// (services.ts); the pods take hostPath volumes from `dir` only, and the stack's images run their own
// programs only (dev/kubelet/process/volumes.ts, image-table.ts).

import { appendFileSync, copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { clusterDNSIP, DEFAULT_ADDRESS_PLAN, podNetworkOf, type AddressPlan } from './cluster/address-plan.ts';
import { resolveCoreDns, resolveKn, resolveKnativeEventing, resolveKnativeServing, resolveTraefik } from './cluster/binaries.ts';
import { startControlPlane, type ControlPlane } from './cluster/control-plane.ts';
import { installKnativeEventing, KNATIVE_CONTROLLERS, KNATIVE_EVENTING_VERSION, KNATIVE_NAMESPACE, knativeImageTable, kubectl } from './cluster/knative.ts';
import { deployNeoSetOnKnative, neosetOnKnativeImageTable, prepareNeoSetOnKnative } from './cluster/neoset-on-knative.ts';
import { deployFunctions, deployNeoSetOnServing, prepareNeoSetOnServing, type ServingDeployer } from './cluster/neoset-on-serving.ts';
import { removeLeftovers } from './cluster/leftovers.ts';
import { sweepNow } from './cluster/service-network.ts';
import { startServices } from './cluster/services.ts';
import { installKnativeServing, KNATIVE_SERVING_VERSION, SERVING_CONTROLLERS, SERVING_NAMESPACE, servingPrograms } from './cluster/serving.ts';
import { PROCESS_GRACE_MS, stopAtOnce, type Part } from './cluster/shutdown.ts';
import { installTraefik, TRAEFIK_VERSION, traefikLayout, traefikPrograms } from './cluster/traefik.ts';
import { followFunctionLogs } from './function-logs.ts';
import { startKubelet, type KubeletOptions } from './kubelet/kubelet.ts';
import { SYSTEM_NAMESPACE, toYaml, type Manifest } from './manifests.ts';
import { devAnalysisAddresses } from './stack.ts';

/** Where NeoSet's functions run: as Knative Services on Knative Serving, or as Deployments beside Eventing alone. */
export type StackLayout = 'serving' | 'eventing-only';

/**
 * The longest grace period a process-mode pod's containers get when it is deleted (the kubelet's
 * maxProcessGraceSeconds). 60: reconcile's revision asks for its timeoutSeconds (60), readiness's for
 * 30; queue-proxy drains 30 s after SIGTERM, then the function's own stop takes ≤ 10 s
 * (shared/http/unfinished.ts). Serving's activator asks for 600 (it holds requests while revisions
 * wake): cut at 60 here, where nothing deletes it but a test.
 */
export const PROCESS_GRACE_SECONDS = 60;

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
  /** Default 'serving' (`npm run dev`); 'eventing-only' is `npm run dev -- --eventing-only`. */
  layout?: StackLayout;
  /** On the serving layout, how the functions are deployed: `kubectl apply -k knative/` (default) or `kn service apply` (`npm run dev -- --kn`). */
  deployer?: ServingDeployer;
}

export interface KnativeDevStackReady {
  /** Admin kubeconfig: `<dir>/kubeconfig`. */
  kubeconfigPath: string;
  controlPlane: ControlPlane;
  layout: StackLayout;
  /** Knative Eventing's version; on the serving layout Serving's is the same release (KNATIVE_SERVING_VERSION). */
  knativeVersion: string;
  /**
   * The functions' addresses. Eventing-only: the ClusterIP URLs of their Services (the host reaches
   * them through kube-proxy). Serving: the Knative Services' cluster-local URLs (names the cluster DNS
   * answers, routed by Traefik by Host). The Broker ingress's is a ClusterIP URL in both.
   */
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
  const layout = opts.layout ?? 'serving';
  const serving = layout === 'serving';
  const deployer = opts.deployer ?? 'kubectl';
  if (!serving && opts.deployer === 'kn') throw new Error('kn deploys Knative Services: the eventing-only layout has none');
  const start = async (): Promise<KnativeDevStackReady> => {
    for (const old of ['cluster', 'logs']) rmSync(join(dir, old), { recursive: true, force: true });
    for (const d of [dir, logsDir]) mkdirSync(d, { recursive: true, mode: 0o700 });
    // What a stack killed with SIGKILL left (its pods' processes, namespaces, links, kube-proxy's
    // tables, ip_forward) goes before anything of this one is made (dev/cluster/leftovers.ts).
    await removeLeftovers(log);
    goOn();
    // The binaries are resolved (built on a first run, with progress lines) while the control plane starts.
    const controlPlane = timed('control plane', startControlPlane({ dir: join(dir, 'cluster'), serviceNetwork: addresses, extraControllers: serving ? SERVING_CONTROLLERS : KNATIVE_CONTROLLERS, log: (line) => log(`control plane: ${line}`) }));
    void controlPlane.then((cp) => {
      add({ name: 'control plane', stop: () => cp.stop(), budgetMs: 3 * PROCESS_GRACE_MS });
      void cp.exited.then(reportFailure);
    }, () => {});
    const none = Promise.resolve('');
    const [[knativeDir, coredns, servingDir, traefik, kn], cp] = await Promise.all([
      Promise.all([resolveKnativeEventing(), resolveCoreDns(), serving ? resolveKnativeServing() : none, serving ? resolveTraefik() : none, deployer === 'kn' ? resolveKn() : none]),
      controlPlane,
    ]);
    goOn();

    const kubeletLog = join(logsDir, 'kubelet.log');
    const kubelet = await startKubelet({
      kubeConfig: cp.kubeConfig(),
      nodeName: NODE_NAME,
      binds: opts.kubeletBinds,
      podNetwork: podNetworkOf(addresses),
      log: fileLog(kubeletLog),
      maxProcessGraceSeconds: PROCESS_GRACE_SECONDS,
      // As the bridge mode's: StorageClass `standard`, claims bound and resized as a CSI driver would.
      volumes: {},
      processMode: {
        imageTable: [...knativeImageTable(knativeDir), ...neosetOnKnativeImageTable()],
        // Serving's and Traefik's images are the table's default entries, run once their programs are given.
        programs: { coredns, ...(serving ? { ...servingPrograms(servingDir), ...traefikPrograms(traefik) } : {}) },
        backoffMs: 1000,
        maxBackoffMs: 10_000,
        clusterDNS: clusterDNSIP(addresses),
        // The pods run as root on this host: a hostPath volume is bound only from the stack's own directory.
        hostPathRoot: dir,
      },
    });
    add({ name: 'kubelet (pods, network namespaces)', stop: () => kubelet.stop(), budgetMs: 2 * PROCESS_GRACE_MS });
    goOn();
    log(`kubelet: node ${NODE_NAME}; pods of Knative's, ${serving ? "Traefik's, " : ''}CoreDNS's and NeoSet's images run as processes, each in its network namespace (log ${kubeletLog})`);

    // Independent of one another: Knative's pods reach the API server by the `kubernetes` ClusterIP
    // (kube-proxy's rules are in place long before the webhooks' first pods run) and need the cluster
    // DNS only once events flow (Serving's activator: once its stats reach the autoscaler).
    const services = timed('kube-proxy + CoreDNS', startServices(cp, { nodeName: kubelet.nodeName, addresses, log }));
    void services.then((s) => {
      add({ name: 'kube-proxy (nftables)', stop: () => s.stopProxy(), budgetMs: 2 * PROCESS_GRACE_MS });
      void s.kubeProxy.exited.then((code) => reportFailure(`kube-proxy exited (${code}); log ${s.kubeProxyLog}`));
    }, () => {});
    const neosetLog = (line: string) => log(`neoset: ${line}`);
    // Admission's pods (on eventing-only the functions' too) start meanwhile: only what Knative's webhooks judge waits for them.
    const prepared = timed('NeoSet without Knative', analysisAddresses(cp).then(() => (serving ? prepareNeoSetOnServing(cp, { log: neosetLog }) : prepareNeoSetOnKnative(cp, { log: neosetLog }))));
    await Promise.all([
      services,
      prepared,
      timed('Knative Eventing applied', installKnativeEventing(cp, { dir: knativeDir, together: true, waitAvailable: false, log: (line) => log(`knative: ${line}`) })),
      ...(serving
        ? [
            timed('Traefik Available', installTraefik(cp, { log: (line) => log(`traefik: ${line}`) })),
            // The functions' Knative Services as soon as Serving's webhook serves (and their
            // ServiceAccounts are there): their first revisions start while Eventing still installs.
            Promise.all([timed('Knative Serving applied', installKnativeServing(cp, { dir: servingDir, waitAvailable: false, log: (line) => log(`serving: ${line}`) })), prepared]).then(() =>
              timed(`the functions' Knative Services (${deployer === 'kn' ? 'kn service apply' : 'kubectl apply'})`, deployFunctions(cp, { deployer, kn, log: neosetLog })),
            ),
          ]
        : []),
    ]);
    goOn();
    const neoset = serving
      ? await timed(`NeoSet on Knative Serving (${deployer === 'kn' ? 'kn service apply' : 'kubectl apply -k knative/'})`, deployNeoSetOnServing(cp, { prepared: true, functionsDeployed: true, deployer, kn, waitPingSource: false, log: neosetLog }))
      : await timed('NeoSet on Knative', deployNeoSetOnKnative(cp, { prepared: true, waitPingSource: false, log: neosetLog }));
    goOn();

    const unfollow = await followFunctionLogs(cp, opts.verbose ?? false, log);
    add({ name: 'log views', stop: unfollow });

    copyFileSync(cp.kubeconfigPath, kubeconfigPath);
    add({ name: 'kubeconfig', stop: () => rmSync(kubeconfigPath, { force: true }) });
    const { reconcile, readiness } = neoset.serviceURLs;
    const traefikNamespace = traefikLayout().namespace;
    return {
      kubeconfigPath,
      controlPlane: cp,
      layout,
      knativeVersion: KNATIVE_EVENTING_VERSION,
      serviceURLs: neoset.serviceURLs,
      logsDir,
      timings,
      summary: [
        `took: ${timings.map((t) => `${t.step} ${(t.atMs / 1000).toFixed(1)} s`).join(', ')} (from the start)`,
        `Knative Eventing v${KNATIVE_EVENTING_VERSION} in ${KNATIVE_NAMESPACE} (controller, webhook, in-memory channel, MT channel-based Broker), CoreDNS and NeoSet's functions: pods run as processes with pod IPs (kubectl get pods -A -o wide)`,
        ...(serving
          ? [
              `Knative Serving v${KNATIVE_SERVING_VERSION} in ${SERVING_NAMESPACE} (controller, activator, autoscaler, webhook) with Traefik v${TRAEFIK_VERSION} in ${traefikNamespace} as its ingress (cluster-local routes on its private Service)`,
              `NeoSet as deployed on Knative (${deployer === 'kn' ? 'kn service apply of knative/reconcile.yaml and readiness.yaml, kubectl apply -f knative/eventing.yaml' : 'kubectl apply -k knative/'}) in ${SYSTEM_NAMESPACE}: ` +
                `the Knative Services reconcile ${reconcile} and readiness ${readiness} (min-scale 0: at zero pods when nothing is in flight), each pod the function beside queue-proxy; admission by its Service; ` +
                `fed by the ApiServerSources neoset-neosets and neoset-pods → Broker neoset → Triggers, the PingSource neoset-resync (every 10 minutes) and, while a rollout is in flight, neoset-rollout-tick (every minute, made and removed by reconcile)`,
              `see them: kubectl get ksvc,revisions -n ${SYSTEM_NAMESPACE}; kubectl get pods -n ${SYSTEM_NAMESPACE}; kubectl get brokers,triggers,apiserversources,pingsources -A`,
            ]
          : [
              `NeoSet's eventing-only variant (knative/eventing-only/) in ${SYSTEM_NAMESPACE}: reconcile ${reconcile}, readiness ${readiness} (ClusterIPs), admission by its Service; ` +
                `fed by the ApiServerSources neoset-neosets and neoset-pods → Broker neoset → Triggers, the PingSource neoset-resync (every 10 minutes) and, while a rollout is in flight, neoset-rollout-tick (every minute, made and removed by reconcile)`,
              `see Knative's objects: kubectl get brokers,triggers,apiserversources,pingsources -A`,
            ]),
        `canary analyses may query: ${devAnalysisAddresses() || 'no Prometheus address'} (the ConfigMap neoset-analysis)`,
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
