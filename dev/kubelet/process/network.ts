// Pod networks as a CNI runtime makes them (CNI spec: the plugin binary named by `type`, the
// parameters in CNI_* variables, the network configuration on stdin, the result on stdout): a network
// namespace per pod, `loopback` on lo, then `bridge` with `host-local` IPAM on eth0 — one bridge per
// node (neoset<N>, gateway 10.244.N.1, which is also how the host reaches pod IPs; the host forwards
// between the nodes' bridges, so the bridge plugin turns net.ipv4.ip_forward on: ip-forward.ts puts
// it back). No ipMasq: nothing here reaches outside the machine, and masquerade
// would need iptables. The IP is the one the kubelet already chose for the pod, asked of host-local
// with CNI_ARGS IP=, so simulated and process pods share one allocation.
// Everything is named neoset-<N>-… (network namespaces) or neoset<N> (bridges) and its state lives
// in /run/neoset/neoset<N>/, with the owning process's pid: what a crashed run left is recognised
// and removed by the next kubelet of any node.

import { mkdir, readFile, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runProcess } from '../../cluster/processes.ts';
import { recordIpForward, restoreIpForward } from './ip-forward.ts';
import { pidAlive, STATE_ROOT } from './state-root.ts';

export { pidAlive, STATE_ROOT };
const CNI_VERSION = '1.0.0';

export interface NodeNetwork {
  bridge: string;
  /** The node's state directory (pods' files, IPAM, owner). */
  dir: string;
  gateway: string;
  netnsName(uid: string): string;
  /** Creates the pod's network namespace and runs CNI ADD; idempotent for a namespace that is already wired. */
  add(uid: string, podIP: string, pod: { namespace: string; name: string }): Promise<void>;
  /** CNI DEL and the namespace removed; never throws (it is cleanup). */
  remove(uid: string): Promise<void>;
  /** Removes the bridge and the node's state (after every pod is removed). */
  stop(): Promise<void>;
}

export interface Exec {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program to completion with `input` on stdin (at most `timeoutMs`, default 30 s). These are
 * local commands (ip, nft, CNI plugins, probes), a stop's cleanups among them: they finish even if
 * this process exits meanwhile.
 */
export async function execute(file: string, args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}): Promise<Exec> {
  const r = await runProcess(file, args, { ...opts, timeoutMs: opts.timeoutMs ?? 30_000, outliveUs: true });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.error?.message ?? r.stderr };
}

async function must(file: string, args: string[], opts?: Parameters<typeof execute>[2]): Promise<string> {
  const r = await execute(file, args, opts);
  if (r.code !== 0) throw new Error(`${file} ${args.join(' ')}: exit ${r.code}: ${(r.stderr || r.stdout).trim().slice(0, 500)}`);
  return r.stdout;
}

async function ownerOf(dir: string): Promise<number | undefined> {
  const text = await readFile(join(dir, 'owner'), 'utf8').catch(() => '');
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * The live owner of neoset<N>, if another: a live process (pid reuse aside), or this process for an
 * index other than the one being taken (another kubelet of this process). The index being taken and
 * owned by this process is what an earlier kubelet of this process left without stop().
 */
async function ownedElsewhere(index: number, taking: number): Promise<number | undefined> {
  const pid = await ownerOf(join(STATE_ROOT, `neoset${index}`));
  if (pid === undefined || !pidAlive(pid)) return undefined;
  return pid !== process.pid || index !== taking ? pid : undefined;
}

async function netnsList(): Promise<string[]> {
  const out = await execute('ip', ['netns', 'list']);
  return out.stdout.split('\n').map((line) => line.split(' ')[0]).filter((name) => name !== '');
}

/**
 * The host ends of the veths on `bridge`, deleted in one `ip -batch`: a deleted namespace's veth goes
 * only when the kernel frees the namespace, asynchronously — under load seconds later (npm run dev on
 * Knative Serving, 32 processes: 7 veths still there 5 s after Ctrl-C, CI of 2026-12-07). Deleting
 * one end of a veth removes the pair before the call returns.
 */
async function deleteBridgePorts(bridge: string): Promise<void> {
  const listed = await execute('ip', ['-o', 'link', 'show', 'master', bridge]);
  const names = listed.stdout
    .split('\n')
    .map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
  if (names.length > 0) await execute('ip', ['-force', '-batch', '-'], { input: names.map((name) => `link del ${name}\n`).join('') });
}

/**
 * Kills what still runs in network namespaces we named, then deletes them (their veths go with them):
 * two `ip -batch` runs however many there are — a spawn holds this process's event loop for about
 * 8 ms here, and three per pod made a stopping kubelet of 18 pods lag by most of a second.
 */
async function deleteNetns(names: string[]): Promise<number> {
  if (names.length === 0) return 0;
  // -force: on through the names that are gone already.
  const batch = (command: 'pids' | 'del') => execute('ip', ['-force', '-batch', '-'], { input: names.map((name) => `netns ${command} ${name}\n`).join('') });
  const pids = (await batch('pids')).stdout.split('\n').map(Number).filter((p) => p > 0);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  await batch('del');
  return pids.length;
}

/** What cleanStale removed: node networks (neoset<N>: bridge and state), namespaces, the processes in them. */
export interface StaleNodes {
  nodes: string[];
  namespaces: number;
  processes: number;
  /** ip_forward written back (ip-forward.ts), when it changed. */
  ipForward?: string;
}

/**
 * What runs left behind for node indexes whose owner is gone: their namespaces (and processes),
 * bridges and state directories; then ip_forward as the host had it, when no live owner is left.
 * Only names this module gives are looked at. `taking`: the index this process is about to take
 * (what it left itself is stale too); -1 for none.
 */
export async function cleanStale(taking: number, log: (msg: string) => void): Promise<StaleNodes> {
  const removed: StaleNodes = { nodes: [], namespaces: 0, processes: 0 };
  const indexes = new Set<number>();
  const namespaces = await netnsList();
  for (const ns of namespaces) {
    const m = /^neoset-(\d+)-[0-9a-f]+$/.exec(ns);
    if (m) indexes.add(Number(m[1]));
  }
  for (const dir of await readdir(STATE_ROOT).catch(() => [])) {
    const m = /^neoset(\d+)$/.exec(dir);
    if (m) indexes.add(Number(m[1]));
  }
  const links = (await execute('ip', ['-o', 'link', 'show', 'type', 'bridge'])).stdout;
  for (const m of links.matchAll(/^\d+: neoset(\d+):/gm)) indexes.add(Number(m[1]));
  for (const index of indexes) {
    if (await ownedElsewhere(index, taking)) continue;
    const stale = namespaces.filter((ns) => ns.startsWith(`neoset-${index}-`));
    const killed = await deleteNetns(stale);
    await execute('ip', ['link', 'del', `neoset${index}`]);
    await rm(join(STATE_ROOT, `neoset${index}`), { recursive: true, force: true });
    log(`cleaned what an earlier run left of neoset${index} (${stale.length} network namespaces, ${killed} processes)`);
    removed.nodes.push(`neoset${index}`);
    removed.namespaces += stale.length;
    removed.processes += killed;
  }
  removed.ipForward = restoreIpForward();
  if (removed.ipForward !== undefined) log(`net.ipv4.ip_forward set back to ${removed.ipForward}, as the host had it before an earlier run`);
  return removed;
}

/** The node's network: its bridge is made by the first CNI ADD (the bridge plugin creates it). */
export async function createNodeNetwork(index: number, cniPath: string, log: (msg: string) => void, podNetwork = '10.244'): Promise<NodeNetwork> {
  const subnet = `${podNetwork}.${index}.0/24`;
  const other = await ownedElsewhere(index, index);
  if (other) throw new Error(`neoset${index} (${subnet}) belongs to another live kubelet process (pid ${other})`);
  await cleanStale(index, log);
  const bridge = `neoset${index}`;
  const dir = join(STATE_ROOT, bridge);
  await mkdir(join(dir, 'ipam'), { recursive: true });
  await writeFile(join(dir, 'owner'), `${process.pid}\n`);
  // Before the first CNI ADD turns forwarding on: what stop() (or, after a crash, a later start) writes back.
  recordIpForward();
  const gateway = `${podNetwork}.${index}.1`;
  const bridgeConfig = {
    cniVersion: CNI_VERSION,
    name: bridge,
    type: 'bridge',
    bridge,
    isGateway: true,
    ipMasq: false,
    hairpinMode: true,
    ipam: {
      type: 'host-local',
      ranges: [[{ subnet, gateway }]],
      routes: [{ dst: '0.0.0.0/0' }],
      dataDir: join(dir, 'ipam'),
    },
  };
  const loopbackConfig = { cniVersion: CNI_VERSION, name: 'neoset-lo', type: 'loopback' };
  const netnsName = (uid: string) => `neoset-${index}-${uid.replace(/-/g, '').slice(0, 12)}`;
  const cni = (command: 'ADD' | 'DEL', config: { type: string }, uid: string, ifname: string, args = '') =>
    execute(join(cniPath, config.type), [], {
      input: JSON.stringify(config),
      env: {
        PATH: process.env.PATH,
        CNI_COMMAND: command,
        CNI_CONTAINERID: uid,
        CNI_NETNS: `/run/netns/${netnsName(uid)}`,
        CNI_IFNAME: ifname,
        CNI_PATH: cniPath,
        CNI_ARGS: args,
      },
    });
  return {
    bridge,
    dir,
    gateway,
    netnsName,
    async add(uid, podIP, pod) {
      const name = netnsName(uid);
      if ((await netnsList()).includes(name)) return;
      await must('ip', ['netns', 'add', name]);
      try {
        const args = `IgnoreUnknown=1;K8S_POD_NAMESPACE=${pod.namespace};K8S_POD_NAME=${pod.name};K8S_POD_INFRA_CONTAINER_ID=${uid};IP=${podIP}`;
        for (const [config, ifname, extra] of [[loopbackConfig, 'lo', ''], [bridgeConfig, 'eth0', args]] as const) {
          const r = await cni('ADD', config, uid, ifname, extra);
          if (r.code !== 0) throw new Error(`CNI ADD ${config.type}: ${(r.stdout || r.stderr).trim().slice(0, 500)}`);
        }
      } catch (err) {
        await cni('DEL', bridgeConfig, uid, 'eth0');
        await deleteNetns([name]);
        throw err;
      }
    },
    async remove(uid) {
      // DEL in the reverse order of ADD; loopback's DEL is a no-op, and the namespace goes right after.
      const r = await cni('DEL', bridgeConfig, uid, 'eth0');
      if (r.code !== 0) log(`CNI DEL ${uid}: ${(r.stdout || r.stderr).trim().slice(0, 300)}`);
      await deleteNetns([netnsName(uid)]);
    },
    async stop() {
      // No CNI DEL for each pod: the namespaces take their veths along, and host-local's leases are
      // files in `dir`.
      await deleteNetns((await netnsList()).filter((n) => n.startsWith(`neoset-${index}-`)));
      await deleteBridgePorts(bridge);
      await execute('ip', ['link', 'del', bridge]);
      // Retried: a sync still in flight may be writing a pod's files as they go.
      await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
      const restored = restoreIpForward();
      if (restored !== undefined) log(`net.ipv4.ip_forward set back to ${restored}, as the host had it`);
      await rmdir(STATE_ROOT).catch(() => {}); // when no other node's state is left in it
    },
  };
}
