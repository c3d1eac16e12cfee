// A simulated kubelet: no containers run on the test machine, so this program plays kubelet (and the
// scheduler's bind) against a real kube-apiserver, through the same API calls kubelet makes:
// register the Node and renew its Lease, bind unscheduled pods (pods/binding), report pod status
// (pods/status), restart a container whose image changed in place, and confirm graceful deletions.
// Everything it needs to resume is in the pods themselves (SPEC §7).

import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Pod, type V1PodStatus } from '@kubernetes/client-node';
import { describeError, statusCode } from './api-errors.ts';
import { newContainerID } from './image.ts';
import { MAX_PODS, registerNode } from './node.ts';
import { createPodIPs } from './pod-ips.ts';
import { simulatePod, terminatedStatus, type SimSettings } from './pod-status.ts';
import { allocatedRequests, type NodeResources } from './resize.ts';
import { startPodWatch, type WirePod } from './pod-watch.ts';
import { createWorkQueue } from './work-queue.ts';
import { createProcessPods, type ProcessModeOptions, type ProcessPods } from './process/pods.ts';
import { resolveCniPlugins } from '../cluster/binaries.ts';
import { startVolumes, type Volumes, type VolumesOptions } from './volumes.ts';
import { startLogServer, type LogServer } from './log-server.ts';

export interface KubeletOptions {
  kubeConfig: KubeConfig;
  /** Default `sim-node`. Several kubelets with different node names may share a cluster. */
  nodeName?: string;
  /** Bind and run only the pods of this namespace; every namespace when omitted. */
  namespace?: string;
  /**
   * Which unscheduled pods it binds, by namespace (default: every one it watches); the others are
   * left to other nodes, as a node selector would. A pod bound to it by name still runs. E.g. the
   * rollout benchmark's real-Knative stack: the process-mode kubelet takes Knative's and NeoSet's
   * pods, simulated kubelets of their own the benchmark's.
   */
  binds?: { only?: string[]; except?: string[] };
  /** Pod bound → containers running. Default 200. */
  startDelayMs?: number;
  /** Container started → ready (stands for the readinessProbe). Default 300. */
  readyDelayMs?: number;
  /** Time between two crashes of a container whose image tag ends in `-crashloop`. Default 1000. */
  crashLoopRestartMs?: number;
  /** A deleted pod is confirmed after min(its deletionGracePeriodSeconds, this). Default 2. */
  maxGraceSeconds?: number;
  /**
   * For a process-mode pod: its containers get min(its deletionGracePeriodSeconds, this) between
   * preStop/SIGTERM and SIGKILL, and the deletion is confirmed once they have exited (at the latest
   * then). Default maxGraceSeconds. A pod's real programs may need their grace: Knative Serving's
   * queue-proxy drains for 30 s after SIGTERM while the user container's preStop
   * (/wait-for-drain) waits on it; cut at 2 s, both were killed while still serving (the
   * Serving stack raises it: dev/knative-stack.ts). Simulated pods keep maxGraceSeconds: nothing
   * of theirs drains, and a walkthrough's pod deletions would wait their 30 s default for nothing.
   */
  maxProcessGraceSeconds?: number;
  /** Pods it takes at most (the node's allocatable pods, as a scheduler respects it). Default MAX_PODS. */
  maxPods?: number;
  /** Resize accepted (PodResizeInProgress) → carried out (SPEC §4.9). Default 100. */
  resizeDelayMs?: number;
  /** The Node's allocatable cpu/memory (default 8 / 32Gi) and CPU manager policy (default none). */
  node?: Partial<NodeResources>;
  /** Full relist period (the watch alone is not trusted). Default 3000. */
  resyncMs?: number;
  /**
   * Process mode (dev/kubelet/process/): pods whose every image is in the image table run as real
   * processes with their own network namespace and IP. Off unless given; `cniPath` defaults to
   * resolveCniPlugins() (NEOSET_CNI_PATH, else the cached build).
   */
  processMode?: Omit<ProcessModeOptions, 'cniPath'> & { cniPath?: string };
  /**
   * Serve `kubectl logs` (log-server.ts: HTTPS on 127.0.0.1, the Node's ExternalIP and
   * daemonEndpoints port). Default: on in process mode; a simulated pod's log is empty.
   */
  logServer?: boolean;
  /** The first two octets of the pods' /16 whose /24s the nodes take (address-plan.ts podNetworkOf). Default `10.244`. */
  podNetwork?: string;
  /** The cluster's storage as a CSI driver would do it (volumes.ts: binds and resizes claims of class `standard`); off unless given. */
  volumes?: Pick<VolumesOptions, 'resizeDelayMs' | 'pollMs'>;
  log?: (msg: string) => void;
}

export interface Kubelet {
  nodeName: string;
  /** Stops watching, timers and the lease; resolves when nothing of this kubelet is running. */
  stop(): Promise<void>;
}

/** What the kubelet remembers of a pod: only millisecond starts, which the API cannot store. */
interface Tracked {
  uid: string;
  marks: Map<string, number>;
  deletingSince?: number;
  /** The cpu/memory requests (milli-units) its containers were last seen allocated: what a resize must fit beside. */
  allocated?: { cpu: number; memory: number };
}

type Outcome = 'done' | 'again';

export async function startKubelet(opts: KubeletOptions): Promise<Kubelet> {
  const nodeName = opts.nodeName ?? 'sim-node';
  const maxGraceSeconds = opts.maxGraceSeconds ?? 2;
  const maxProcessGraceSeconds = opts.maxProcessGraceSeconds ?? maxGraceSeconds;
  const maxPods = Math.min(opts.maxPods ?? MAX_PODS, MAX_PODS);
  const log = (msg: string): void => opts.log?.(`[kubelet ${nodeName}] ${msg}`);
  const core = opts.kubeConfig.makeApiClient(CoreV1Api);
  const nodeResources: NodeResources = { allocatable: { cpu: '8', memory: '32Gi' }, ...opts.node };
  const tracked = new Map<string, Tracked>();
  let processes: ProcessPods | undefined;
  const logServer: LogServer | undefined =
    (opts.logServer ?? opts.processMode !== undefined)
      ? await startLogServer({
          kubeConfig: opts.kubeConfig,
          nodeName,
          lookup: (key, container, previous) => processes?.logOf(key, container, previous) ?? (tracked.has(key) ? { kind: 'empty' } : undefined),
          log,
        }).catch((err: unknown) => {
          // Pods run without it: only `kubectl logs` is missing.
          log(`kubectl logs not served: ${describeError(err)}`);
          return undefined;
        })
      : undefined;
  const node = await registerNode(opts.kubeConfig, nodeName, log, nodeResources.allocatable, logServer, opts.podNetwork).catch(async (err: unknown) => {
    await logServer?.stop();
    throw err;
  });
  const settings: SimSettings = {
    hostIP: node.hostIP,
    startDelayMs: opts.startDelayMs ?? 200,
    readyDelayMs: opts.readyDelayMs ?? 300,
    crashLoopRestartMs: opts.crashLoopRestartMs ?? 1000,
    resizeDelayMs: opts.resizeDelayMs ?? 100,
    node: nodeResources,
  };
  const ips = createPodIPs(node.podSubnet);
  processes = opts.processMode
    ? await createProcessPods(
        { ...opts.processMode, cniPath: opts.processMode.cniPath ?? (await resolveCniPlugins()) },
        {
          core,
          podSubnet: node.podSubnet,
          onChange: (key) => queue.enqueue(key),
          log,
        },
      ).catch(async (err: unknown) => {
        await node.stop();
        await logServer?.stop();
        throw err;
      })
    : undefined;

  const forget = (key: string): void => {
    const t = tracked.get(key);
    if (t) ips.release(t.uid);
    tracked.delete(key);
    queue.cancel(key);
    processes?.remove(key).catch((err: unknown) => log(`${key}: removing its processes: ${describeError(err)}`));
  };
  const track = (key: string, uid: string): Tracked => {
    let t = tracked.get(key);
    if (t?.uid !== uid) {
      if (t) ips.release(t.uid); // a new pod under an old name (a StatefulSet-style recreate)
      t = { uid, marks: new Map() };
      tracked.set(key, t);
    }
    return t;
  };

  const readPod = async (key: string): Promise<V1Pod | undefined> => {
    const [namespace, name] = key.split('/');
    try {
      return await core.readNamespacedPod({ name, namespace });
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  };

  /** One conditional status write: the resourceVersion it was computed from is a precondition. */
  const writeStatus = async (key: string, pod: V1Pod, status: V1PodStatus): Promise<Outcome> => {
    const { name, namespace, resourceVersion } = pod.metadata!;
    try {
      await core.patchNamespacedPodStatus(
        { name: name!, namespace: namespace!, body: { metadata: { resourceVersion }, status } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return 'done';
    } catch (err) {
      if (statusCode(err) === 409) return 'again';
      if (statusCode(err) === 404) {
        forget(key);
        return 'done';
      }
      throw err;
    }
  };

  // Binds in flight count against the node's pods too: two pods must not both take its last place.
  let binding = 0;
  const bind = async (pod: V1Pod): Promise<Outcome> => {
    const { name, namespace, uid } = pod.metadata!;
    if (pod.metadata?.deletionTimestamp || (pod.spec?.schedulingGates?.length ?? 0) > 0) return 'done';
    // Full (allocatable pods): left to another node, or Pending until a place frees (a relist looks again).
    if (tracked.size + binding >= maxPods) return 'done';
    binding++;
    try {
      await core.createNamespacedPodBinding({
        name: name!,
        namespace: namespace!,
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace, uid },
          target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
        },
      });
      log(`bound ${namespace}/${name}`);
      // Counted against the node's pods at once, not only when its first sync tracks it: a burst of
      // pods (a Parallel scale-up of hundreds) must not overshoot the node.
      track(`${namespace}/${name}`, uid!);
      return 'again';
    } catch (err) {
      if (statusCode(err) === 404) return 'done';
      if (statusCode(err) === 409) return 'again'; // bound meanwhile (maybe by another kubelet): look again
      throw err;
    } finally {
      binding--;
    }
  };

  /** Graceful deletion: wait out the (capped) grace period, report the stopped containers, confirm. */
  const terminate = async (key: string, pod: V1Pod, t: Tracked): Promise<Outcome> => {
    const { name, namespace, uid, deletionGracePeriodSeconds = 0, finalizers = [] } = pod.metadata!;
    const terminal = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
    // Confirmed already; what holds the pod now is its finalizers, the API server's business.
    if (terminal && deletionGracePeriodSeconds === 0 && finalizers.length > 0) return 'done';
    const now = Date.now();
    t.deletingSince ??= now;
    const cap = processes?.runs(key, pod) ? maxProcessGraceSeconds : maxGraceSeconds;
    const graceMs = Math.min(deletionGracePeriodSeconds, cap) * 1000;
    const due = t.deletingSince + graceMs;
    // A process-mode pod's containers get SIGTERM now (SIGKILL at the end of the grace period); the
    // deletion is confirmed once they have all exited (their exits wake this key) or at the due time.
    const exited = processes?.terminate(key, graceMs) ?? false;
    if (now < due && !exited) {
      queue.wakeAt(key, due);
      return 'done';
    }
    const last = (await processes?.remove(key)) ?? [];
    if (!terminal) {
      const stopped = last.length > 0 ? { ...pod, status: { ...pod.status, containerStatuses: last } } : pod;
      const outcome = await writeStatus(key, pod, terminatedStatus(stopped, now));
      if (outcome !== 'done' || !tracked.has(key)) return outcome;
    }
    try {
      // With a body, the API server reads DeleteOptions from it alone (query parameters are ignored).
      await core.deleteNamespacedPod({ name: name!, namespace: namespace!, body: { gracePeriodSeconds: 0, preconditions: { uid } } });
      log(`confirmed deletion of ${key}`);
    } catch (err) {
      if (statusCode(err) !== 404 && statusCode(err) !== 409) throw err;
    }
    return 'done';
  };

  const reconcile = async (key: string, pod: V1Pod): Promise<Outcome> => {
    if (!pod.spec?.nodeName) return bind(pod);
    if (pod.spec.nodeName !== nodeName) {
      forget(key);
      return 'done';
    }
    const t = track(key, pod.metadata!.uid!);
    if (pod.metadata?.deletionTimestamp) return terminate(key, pod, t);
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return 'done';
    const now = Date.now();
    const podIP = ips.ensure(t.uid, pod.status?.podIP);
    if (processes?.runs(key, pod)) {
      const next = await processes.sync(key, pod, settings.hostIP, podIP);
      if (!sameFields(pod.status ?? {}, next.status)) {
        const outcome = await writeStatus(key, pod, next.status);
        if (outcome !== 'done') return outcome;
        log(`${key}: ${summary(next.status)}`);
      }
      if (next.wakeAt !== undefined) queue.wakeAt(key, next.wakeAt);
      return 'done';
    }
    t.allocated = allocatedRequests(pod);
    const usedByOthers = { cpu: 0, memory: 0 };
    for (const [other, o] of tracked) {
      if (other === key || !o.allocated) continue;
      usedByOthers.cpu += o.allocated.cpu;
      usedByOthers.memory += o.allocated.memory;
    }
    const next = simulatePod(pod, settings, { now, podIP, seen: (k) => t.marks.get(k), newContainerID, usedByOthers });
    if (!sameFields(pod.status ?? {}, next.status)) {
      const outcome = await writeStatus(key, pod, next.status);
      if (outcome !== 'done') return outcome;
      for (const [k, at] of Object.entries(next.marks)) t.marks.set(k, at);
      t.allocated = allocatedRequests({ status: next.status });
      const live = new Set(['pod', 'resize', ...(next.status.containerStatuses ?? []).map((cs) => cs.containerID)]);
      for (const k of t.marks.keys()) if (!live.has(k)) t.marks.delete(k);
      log(`${key}: ${summary(next.status)}`);
    }
    if (next.wakeAt !== undefined) queue.wakeAt(key, next.wakeAt);
    return 'done';
  };

  const sync = async (key: string, snapshot: V1Pod | undefined): Promise<void> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const pod = attempt === 0 && snapshot ? snapshot : await readPod(key);
      if (!pod) {
        forget(key);
        return;
      }
      if ((await reconcile(key, pod)) === 'done') return;
    }
    queue.wakeAt(key, Date.now() + 1000); // still conflicting: someone else is busy with it
  };

  const queue = createWorkQueue<V1Pod>(sync, log);
  const bindable = (key: string): boolean => {
    const namespace = key.slice(0, key.indexOf('/'));
    return (!opts.binds?.only || opts.binds.only.includes(namespace)) && !opts.binds?.except?.includes(namespace);
  };
  const concerns = (pod: { spec?: { nodeName?: string } }, key: string): boolean =>
    (!pod.spec?.nodeName && bindable(key)) || pod.spec?.nodeName === nodeName || tracked.has(key);

  const watch = await startPodWatch({
    kubeConfig: opts.kubeConfig,
    namespace: opts.namespace,
    resyncMs: opts.resyncMs ?? 3000,
    onList(pods) {
      const listed = new Set<string>();
      for (const pod of pods) {
        const key = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
        if (!concerns(pod, key)) continue;
        listed.add(key);
        // Learn every pod IP in use before handing out new ones (matters after a restart).
        if (pod.spec?.nodeName === nodeName && pod.status?.podIP) ips.ensure(pod.metadata!.uid!, pod.status.podIP);
        queue.enqueue(key, pod);
      }
      for (const key of tracked.keys()) if (!listed.has(key)) queue.enqueue(key);
    },
    onEvent(type, pod: WirePod) {
      const key = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
      if (type === 'DELETED' ? tracked.has(key) : concerns(pod, key)) queue.enqueue(key);
    },
    log,
  });
  log(`started (namespace ${opts.namespace ?? '*'}, host ${node.hostIP}, pods ${node.podSubnet}.0/24)`);
  const volumes: Volumes | undefined = opts.volumes ? await startVolumes({ ...opts.volumes, kubeConfig: opts.kubeConfig, namespace: opts.namespace, log: opts.log }) : undefined;

  return {
    nodeName,
    async stop() {
      // The pods' processes and network namespaces go first and whatever the API server's state: the
      // rest may wait on it — a sync in flight, the volumes' last pass, the lease — and on a Ctrl-C
      // its etcd is gone already (dev/cluster/shutdown.ts). A sync still running starts nothing more
      // (processes.stop).
      const rest = Promise.allSettled([volumes?.stop(), watch.stop(), queue.stop()]);
      await processes?.stop();
      await rest;
      await logServer?.stop();
      await node.stop();
      log('stopped');
    },
  };
}

/** Whether `current` already has every field of `next` (compared as JSON, nulls and undefined alike). */
function sameFields(current: V1PodStatus, next: V1PodStatus): boolean {
  return Object.entries(next).every(([k, v]) => canonical(current[k as keyof V1PodStatus]) === canonical(v));
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || Array.isArray(v) || typeof v !== 'object') return v ?? undefined;
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== null && x !== undefined);
    return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }) ?? '';
}

function summary(status: V1PodStatus): string {
  const containers = (status.containerStatuses ?? []).map((cs) => {
    const state = cs.state?.running ? 'running' : (cs.state?.waiting?.reason ?? (cs.state?.terminated ? 'terminated' : '?'));
    return `${cs.name}=${state}${cs.ready ? '/ready' : ''} restarts=${cs.restartCount} ${cs.image}`;
  });
  const ready = status.conditions?.find((c) => c.type === 'Ready')?.status;
  return `${status.phase} ip=${status.podIP ?? '-'} Ready=${ready} ${containers.join(', ')}`;
}
