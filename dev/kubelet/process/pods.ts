// Process mode of the simulated kubelet: pods whose every container image is in the image table run
// as real processes in network namespaces of their own (network.ts), each container a ContainerRun
// (container.ts). This module keeps what runs per pod and says what kubelet would report for it; the
// kubelet (kubelet.ts) decides when to sync, terminate or forget a pod, exactly as for simulated ones.

import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CoreV1Api, V1ContainerStatus, V1Pod, V1PodStatus, V1Service } from '@kubernetes/client-node';
import { statusCode } from '../api-errors.ts';
import type { LogLookup } from '../log-server.ts';
import { containersReadyCondition, readyCondition, setConditions } from '../conditions.ts';
import { normalizeImage } from '../image.ts';
import { apiTime } from '../pod-status.ts';
import { reportedResources } from '../resize.ts';
import { runContainer, type ContainerRun } from './container.ts';
import { commandLine, containerEnv, ContainerConfigError, type ObjectSource } from './environment.ts';
import { hostnameOf, hostsFile, resolvConf, type DnsSettings } from './etc-files.ts';
import { createImageTable, type ImageTableEntry } from './image-table.ts';
import { createNodeNetwork, type NodeNetwork } from './network.ts';
import { linkedServices, serviceEnv } from './service-env.ts';
import { mountsOf, writeVolumes } from './volumes.ts';

export interface ProcessModeOptions {
  /** Entries before NEOSET_IMAGE_TABLE's and the defaults (image-table.ts). */
  imageTable?: ImageTableEntry[];
  /** Programs the default entries name as {program:NAME}, e.g. { coredns: resolveCoreDns() } (dev/cluster/binaries.ts). */
  programs?: Record<string, string>;
  /** The directory holding the CNI plugins bridge, host-local and loopback (dev/cluster/binaries.ts resolveCniPlugins). */
  cniPath: string;
  /** The nameserver of ClusterFirst pods' resolv.conf. Default 10.96.0.10 (the cluster DNS comes in a later step). */
  clusterDNS?: string;
  clusterDomain?: string;
  /**
   * The one directory whose paths hostPath volumes may name (the dev stack's own, symlinks resolved);
   * any other hostPath is refused with CreateContainerConfigError (volumes.ts). Default: none at all.
   */
  hostPathRoot?: string;
  /** First crash-loop back-off (kubelet: 10 s, doubling to 5 min). */
  backoffMs?: number;
  maxBackoffMs?: number;
}

export interface ProcessPods {
  /** Whether `pod` runs in process mode: once started it stays so; before, when every container's image is in the table. */
  runs(key: string, pod: V1Pod): boolean;
  /** Makes what runs match the pod (sandbox, containers, in-place image changes) and says its status. */
  sync(key: string, pod: V1Pod, hostIP: string, podIP: string): Promise<{ status: V1PodStatus; wakeAt?: number }>;
  /**
   * Which log file `/containerLogs` of `container` serves (log-server.ts), by the rules of kubelet's
   * validateContainerLogStatus: the running or last ended start, or with `previous` the one before;
   * undefined when this pod runs no processes here.
   */
  logOf(key: string, container: string, previous: boolean): LogLookup | undefined;
  /**
   * Begins stopping a deleted pod's containers, all at once as kubelet does: each one's preStop hook
   * within `graceMs`, then SIGTERM, SIGKILL at its end (container.ts); whether every one has exited.
   */
  terminate(key: string, graceMs: number): boolean;
  /** Its processes killed, CNI DEL, its namespace and files removed; the containers' last statuses. */
  remove(key: string): Promise<V1ContainerStatus[]>;
  /** Every pod removed, the bridge and state removed. */
  stop(): Promise<void>;
}

interface Sandbox {
  uid: string;
  dir: string;
  podIP: string;
  runs: Map<string, ContainerRun>;
  startedAt: number;
  /** Why containers cannot start yet (CreateContainerConfigError and such), by container name. */
  waiting: Map<string, { reason: string; message: string }>;
  stopping?: Promise<void>;
}

export async function createProcessPods(
  opts: ProcessModeOptions,
  /** podSubnet: the node's `<a>.<b>.<N>` (its pods' /24). */
  ctx: { core: CoreV1Api; podSubnet: string; onChange: (key: string) => void; log: (msg: string) => void },
): Promise<ProcessPods> {
  const table = createImageTable(opts.imageTable, process.env, opts.programs);
  const [a, b, index] = ctx.podSubnet.split('.');
  const network: NodeNetwork = await createNodeNetwork(Number(index), opts.cniPath, ctx.log, `${a}.${b}`);
  const dns: DnsSettings = { clusterDNS: opts.clusterDNS ?? '10.96.0.10', clusterDomain: opts.clusterDomain ?? 'cluster.local' };
  const pods = new Map<string, Sandbox>();
  const source: ObjectSource = {
    configMap: async (namespace, name) => {
      try {
        return (await ctx.core.readNamespacedConfigMap({ name, namespace })).data ?? {};
      } catch (err) {
        if (statusCode(err) === 404) return undefined;
        throw err;
      }
    },
    secret: async (namespace, name) => {
      try {
        const data = (await ctx.core.readNamespacedSecret({ name, namespace })).data ?? {};
        return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
      } catch (err) {
        if (statusCode(err) === 404) return undefined;
        throw err;
      }
    },
  };

  /** The Services the pod's environment may name: default's `kubernetes` and its own namespace's. */
  const services = async (pod: V1Pod): Promise<V1Service[]> => {
    const namespaces = [...new Set(['default', pod.metadata?.namespace ?? 'default'])];
    const lists = await Promise.all(namespaces.map((namespace) => ctx.core.listNamespacedService({ namespace })));
    return lists.flatMap((list) => list.items);
  };

  const startContainer = async (key: string, pod: V1Pod, sandbox: Sandbox, name: string, previous?: V1ContainerStatus) => {
    const container = pod.spec!.containers.find((c) => c.name === name)!;
    const image = table.lookup(container.image ?? '');
    if (!image) {
      sandbox.waiting.set(name, { reason: 'ErrImagePull', message: `${container.image} is not in the image table` });
      return;
    }
    try {
      const env = await containerEnv(pod, container, sandbox.podIP, source, serviceEnv(linkedServices(pod, await services(pod))));
      const volumes = await writeVolumes(pod, sandbox.podIP, join(sandbox.dir, 'volumes'), source, ctx.core, opts.hostPathRoot);
      const line = commandLine(container, image, env, hostnameOf(pod));
      sandbox.waiting.delete(name);
      sandbox.runs.set(
        name,
        runContainer(
          { container, ...line, mounts: await mountsOf(container, volumes, image, line) },
          {
            netns: network.netnsName(sandbox.uid),
            hostname: hostnameOf(pod),
            podIP: sandbox.podIP,
            etcDir: join(sandbox.dir, 'etc'),
            logDir: join(sandbox.dir, 'logs', name),
            restartPolicy: pod.spec?.restartPolicy ?? 'Always',
            backoffMs: opts.backoffMs ?? 10_000,
            maxBackoffMs: opts.maxBackoffMs ?? 300_000,
            graceMs: Math.min(pod.spec?.terminationGracePeriodSeconds ?? 30, 30) * 1000,
            previous,
            onChange: () => ctx.onChange(key),
            log: (msg) => ctx.log(`${key} ${msg}`),
          },
        ),
      );
    } catch (err) {
      if (!(err instanceof ContainerConfigError)) throw err;
      sandbox.waiting.set(name, { reason: err.reason, message: err.message });
    }
  };

  const status = (pod: V1Pod, sandbox: Sandbox, hostIP: string): V1PodStatus => {
    const containerStatuses = (pod.spec?.containers ?? []).map((c): V1ContainerStatus => {
      const run = sandbox.runs.get(c.name);
      if (run) return run.status();
      const waiting = sandbox.waiting.get(c.name) ?? { reason: 'ContainerCreating', message: '' };
      const before = pod.status?.containerStatuses?.find((cs) => cs.name === c.name);
      return {
        name: c.name,
        image: normalizeImage(c.image ?? ''),
        imageID: '',
        ready: false,
        started: false,
        restartCount: before?.restartCount ?? 0,
        state: { waiting: { reason: waiting.reason, message: waiting.message || undefined } },
        lastState: before?.lastState ?? {},
        resources: reportedResources(c),
      };
    });
    const unready = containerStatuses.filter((cs) => !cs.ready).map((cs) => cs.name);
    const ended = containerStatuses.every((cs) => cs.state?.terminated);
    const phase = ended
      ? containerStatuses.every((cs) => cs.state?.terminated?.exitCode === 0)
        ? 'Succeeded'
        : 'Failed'
      : containerStatuses.some((cs) => cs.state?.running || cs.containerID)
        ? 'Running'
        : 'Pending';
    const conditions = setConditions(
      pod.status?.conditions ?? [],
      [
        { type: 'PodReadyToStartContainers', status: 'True' },
        { type: 'Initialized', status: 'True' },
        readyCondition(pod, unready),
        containersReadyCondition(unready),
        { type: 'PodScheduled', status: 'True' },
      ],
      apiTime(Date.now()),
    );
    return {
      phase,
      conditions,
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP: sandbox.podIP,
      podIPs: [{ ip: sandbox.podIP }],
      startTime: pod.status?.startTime ?? apiTime(sandbox.startedAt),
      containerStatuses,
    };
  };

  /** Set by stop(): no sandbox or container starts after it. */
  let stopped = false;
  const remove = async (key: string): Promise<V1ContainerStatus[]> => {
    const sandbox = pods.get(key);
    if (!sandbox) return [];
    pods.delete(key);
    await Promise.all([...sandbox.runs.values()].map((run) => run.stop(0)));
    await network.remove(sandbox.uid);
    await rm(sandbox.dir, { recursive: true, force: true });
    ctx.log(`${key}: processes, network namespace and files removed`);
    return [...sandbox.runs.values()].map((run) => run.status());
  };

  return {
    runs(key, pod) {
      if (pods.has(key)) return true;
      const containers = pod.spec?.containers ?? [];
      return containers.length > 0 && containers.every((c) => table.lookup(c.image ?? '') !== undefined);
    },
    async sync(key, pod, hostIP, podIP) {
      const uid = pod.metadata!.uid!;
      // A sync begun before stop() must not leave a namespace or a process after it.
      const refuseIfStopped = () => {
        if (stopped) throw new Error(`${key}: not started, the kubelet is stopping`);
      };
      refuseIfStopped();
      let sandbox = pods.get(key);
      if (sandbox && sandbox.uid !== uid) {
        await remove(key); // a new pod under an old name
        sandbox = undefined;
      }
      if (!sandbox) {
        const dir = join(network.dir, 'pods', uid);
        await mkdir(join(dir, 'etc'), { recursive: true });
        await writeFile(join(dir, 'etc', 'hosts'), hostsFile(pod, podIP, dns));
        await writeFile(join(dir, 'etc', 'resolv.conf'), resolvConf(pod, dns));
        await network.add(uid, podIP, { namespace: pod.metadata!.namespace!, name: pod.metadata!.name! });
        if (stopped) {
          await network.remove(uid);
          refuseIfStopped();
        }
        sandbox = { uid, dir, podIP, runs: new Map(), waiting: new Map(), startedAt: Date.now() };
        pods.set(key, sandbox);
        ctx.log(`${key}: network namespace ${network.netnsName(uid)} on ${network.bridge}, ip ${podIP}`);
      }
      for (const container of pod.spec?.containers ?? []) {
        refuseIfStopped();
        const run = sandbox.runs.get(container.name);
        if (!run) {
          await startContainer(key, pod, sandbox, container.name, pod.status?.containerStatuses?.find((cs) => cs.name === container.name));
        } else if (run.status().image !== normalizeImage(container.image ?? '')) {
          // In-place image change: kubelet kills the container and starts one from the new image.
          await run.stop(Math.min(pod.spec?.terminationGracePeriodSeconds ?? 30, 30) * 1000);
          sandbox.runs.delete(container.name);
          await startContainer(key, pod, sandbox, container.name, run.status());
        }
      }
      // Containers that cannot start yet are tried again, as kubelet's pod workers do.
      return { status: status(pod, sandbox, hostIP), wakeAt: sandbox.waiting.size > 0 ? Date.now() + 2000 : undefined };
    },
    logOf(key, container, previous) {
      const sandbox = pods.get(key);
      if (!sandbox) return undefined;
      const pod = key.slice(key.indexOf('/') + 1);
      const run = sandbox.runs.get(container);
      if (!run) {
        const waiting = sandbox.waiting.get(container);
        if (!waiting) return { kind: 'error', status: 404, message: `container "${container}" not found in pod "${pod}"` };
        return { kind: 'error', status: 400, message: `container "${container}" in pod "${pod}" is waiting to start: ${waiting.reason}` };
      }
      const status = run.status();
      // Waiting (crash-loop back-off): restartCount already counts the next start, which has no file yet.
      const current = status.state?.waiting ? status.restartCount - 1 : status.restartCount;
      const start = previous ? current - 1 : current;
      if (start < 0) {
        return previous
          ? { kind: 'error', status: 400, message: `previous terminated container "${container}" in pod "${pod}" not found` }
          : { kind: 'error', status: 400, message: `container "${container}" in pod "${pod}" is waiting to start: ${status.state?.waiting?.reason ?? 'ContainerCreating'}` };
      }
      // The file of this start, named from the run's own count (never from the URL's names).
      const path = join(sandbox.dir, 'logs', container, `${start}.log`);
      const live = () => {
        const now = run.status();
        return pods.get(key) === sandbox && sandbox.runs.get(container) === run && now.state?.running !== undefined && now.restartCount === start;
      };
      return { kind: 'file', path, live };
    },
    terminate(key, graceMs) {
      const sandbox = pods.get(key);
      if (!sandbox) return true;
      sandbox.stopping ??= Promise.all([...sandbox.runs.values()].map((run) => run.stop(graceMs))).then(() => undefined);
      return [...sandbox.runs.values()].every((run) => !run.running());
    },
    remove,
    async stop() {
      stopped = true;
      // Not remove() each: the processes are killed, and network.stop() takes every namespace, veth
      // and pod directory of this node at once.
      const sandboxes = [...pods.values()];
      pods.clear();
      await Promise.all(sandboxes.flatMap((sandbox) => [...sandbox.runs.values()].map((run) => run.stop(0))));
      await network.stop();
    },
  };
}
