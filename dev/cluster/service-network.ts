// The machine's share of a cluster whose Services route (services.ts): the address ranges, and the
// address kube-apiserver serves on so that pods reach it. Pods cannot reach the host's 127.0.0.1 (and
// EndpointSlices refuse loopback endpoints), so a control plane started with `serviceNetwork` binds
// and advertises API_ADDRESS, held by an interface of its own (API_LINK): the `kubernetes` Service's
// endpoint, which kube-proxy DNATs 10.96.0.1:443 to. The interface is a bridge without ports, which
// serves as a dummy interface would (the dummy driver is not in every kernel, this machine's
// included): its address is local to the host, reached from the pods' bridges (they route through the
// host), and announced on no real network.
//
// One services stack per machine: kube-proxy's nftables tables (`ip kube-proxy`, `ip6 kube-proxy`)
// and the interface have fixed names. The owner's pid is kept in OWNER_DIR, so that what a crashed run
// left is recognised and removed by the next one, and what another live run (or a real kube-proxy of
// this host) has is never touched.

import { spawnSync } from 'node:child_process';
import { readdirSync, rmdirSync, rmSync } from 'node:fs';
import { mkdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execute, pidAlive, STATE_ROOT } from '../kubelet/process/network.ts';
import { restoreIpForward } from '../kubelet/process/ip-forward.ts';
import { ownerNow } from '../kubelet/process/state-root.ts';
import { checkHostRoutes, clusterDNSIP, DEFAULT_ADDRESS_PLAN, kubernetesServiceIP, type AddressPlan } from './address-plan.ts';

// The defaults of address-plan.ts (npm run dev's --pod-network-cidr, --service-cidr, --api-address move them).
/** The pods' addresses: every node's 10.244.N.0/24 (dev/kubelet/node.ts). */
export const CLUSTER_CIDR = DEFAULT_ADDRESS_PLAN.clusterCIDR;
/** kube-apiserver's --service-cluster-ip-range with serviceNetwork (kubeadm's default). */
export const SERVICE_CIDR = DEFAULT_ADDRESS_PLAN.serviceCIDR;
/** The `kubernetes` Service's ClusterIP: the first address of SERVICE_CIDR. */
export const KUBERNETES_SERVICE_IP = kubernetesServiceIP(DEFAULT_ADDRESS_PLAN);
/** The `kube-dns` Service's ClusterIP: what the process-mode kubelet writes into pods' resolv.conf. */
export const CLUSTER_DNS_IP = clusterDNSIP(DEFAULT_ADDRESS_PLAN);
export const CLUSTER_DOMAIN = 'cluster.local';
/** Outside CLUSTER_CIDR and SERVICE_CIDR: the API server is host traffic, not a pod. */
export const API_ADDRESS = DEFAULT_ADDRESS_PLAN.apiAddress;
export const API_LINK = 'neoset-api';
export const KUBE_PROXY_TABLES = [
  ['ip', 'kube-proxy'],
  ['ip6', 'kube-proxy'],
] as const;

const OWNER_DIR = join(STATE_ROOT, 'services');

export interface ServiceNetworkClaim {
  address: string;
  /** The ranges the claim was made for (the API server's service range, kube-proxy's cluster CIDR). */
  plan: AddressPlan;
  /** Removes the interface (and its address) and the claim; never throws. */
  release(): Promise<void>;
}

async function owner(): Promise<number | undefined> {
  const pid = Number((await readFile(join(OWNER_DIR, 'owner'), 'utf8').catch(() => '')).trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

export async function kubeProxyTables(): Promise<string[]> {
  const listed = (await execute('nft', ['list', 'tables'])).stdout;
  return KUBE_PROXY_TABLES.filter(([family, name]) => listed.includes(`table ${family} ${name}\n`)).map(([family, name]) => `${family} ${name}`);
}

/** Deletes kube-proxy's nftables tables by name (what `kube-proxy --cleanup` does in nftables mode). */
export async function deleteKubeProxyTables(): Promise<void> {
  for (const table of await kubeProxyTables()) await execute('nft', ['delete', 'table', ...table.split(' ')]);
}

/**
 * What a services stack whose process is gone left (its interface, kube-proxy's tables), removed;
 * what was removed, and whose it was. Refuses when another live process has the service network, or
 * when kube-proxy's tables are there and no stack of ours made them (a real kube-proxy on this host).
 */
export async function removeStaleServiceNetwork(): Promise<{ pid: number; link: boolean; tables: string[] } | undefined> {
  const pid = await owner();
  if (pid !== undefined && pid !== process.pid && pidAlive(pid)) {
    throw new Error(`the services network (${API_LINK}, nftables table kube-proxy) belongs to another live process (pid ${pid}): one services stack per machine`);
  }
  const tables = await kubeProxyTables();
  if (pid === undefined && tables.length > 0) {
    throw new Error(`nftables has ${tables.join(', ')} and no NeoSet stack made it: another kube-proxy runs on this machine`);
  }
  if (pid === undefined) return undefined;
  const link = (await execute('ip', ['link', 'del', API_LINK])).code === 0;
  await deleteKubeProxyTables();
  await rm(OWNER_DIR, { recursive: true, force: true });
  return { pid, link, tables };
}

/**
 * Takes the machine's service network for this process: refuses when another live process has it
 * or when one of the host's routes covers an address of `plan` (address-plan.ts), removes what a
 * crashed run left (its interface, kube-proxy's tables), then adds API_LINK with the plan's API address.
 */
export async function claimServiceNetwork(log: (line: string) => void, plan: AddressPlan = DEFAULT_ADDRESS_PLAN): Promise<ServiceNetworkClaim> {
  const stale = await removeStaleServiceNetwork();
  if (stale) log(`removed what an earlier services stack (pid ${stale.pid}) left: ${[API_LINK, ...stale.tables].join(', ')}`);
  // Before the host is changed: a refusal leaves it as it was.
  await checkHostRoutes(plan);
  await mkdir(OWNER_DIR, { recursive: true });
  await writeFile(join(OWNER_DIR, 'owner'), `${process.pid}\n`);
  const release = async () => {
    await execute('ip', ['link', 'del', API_LINK]);
    await rm(OWNER_DIR, { recursive: true, force: true });
    await rmdir(STATE_ROOT).catch(() => {}); // when no kubelet's state is left in it
  };
  for (const args of [['link', 'add', API_LINK, 'type', 'bridge'], ['addr', 'add', `${plan.apiAddress}/32`, 'dev', API_LINK], ['link', 'set', API_LINK, 'up']]) {
    const r = await execute('ip', args);
    if (r.code !== 0) {
      await release();
      throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
    }
  }
  return { address: plan.apiAddress, plan, release };
}

/**
 * Removes, synchronously, what this process owns of the machine's networking — the process-mode
 * kubelets' network namespaces (what still runs in them killed first: the pods' processes are in
 * process groups of their own and do not die with us), their bridges and state, the service
 * network's interface and kube-proxy's tables, and ip_forward as the host had it when no other node
 * network lives (ip-forward.ts) — for an exit that cannot wait for the parts' stops (a Ctrl-C
 * during startup, the stop's deadline). Names as dev/kubelet/process/network.ts gives
 * them (neoset<N>, neoset-<N>-<uid>). Never throws; what is not ours is not touched.
 */
export function sweepNow(): void {
  let dirs: string[] = [];
  try {
    dirs = readdirSync(STATE_ROOT);
  } catch {
    return; // nothing of anyone's
  }
  const nodes = dirs.filter((d) => /^neoset\d+$/.test(d) && ownerNow(join(STATE_ROOT, d)) === process.pid);
  const ownsNetwork = ownerNow(OWNER_DIR) === process.pid;
  if (nodes.length > 0 || ownsNetwork) removeOwned(nodes, ownsNetwork);
  // A node network's stop cut short by the exit (its directory's removal under way: the owner file
  // gone, pod directories not yet) leaves a state directory that is nobody's: its namespaces and
  // bridge went first.
  for (const dir of dirs.filter((d) => /^neoset\d+$/.test(d) && ownerNow(join(STATE_ROOT, d)) === undefined)) {
    rmSync(join(STATE_ROOT, dir), { recursive: true, force: true });
  }
  restoreIpForward();
  // A release() cut short by the exit may have removed the owner file and not yet its directory:
  // an empty claim is nobody's. Then STATE_ROOT itself, when nothing else is left in it.
  for (const dir of [OWNER_DIR, STATE_ROOT]) {
    try {
      rmdirSync(dir);
    } catch {
      // not empty (someone's), or gone
    }
  }
}

/** sweepNow's removal of `nodes` (their namespaces, what runs in them, bridges, state) and, when `network`, the service network. */
function removeOwned(nodes: string[], network: boolean): void {
  const sh = (file: string, args: string[], input?: string) => spawnSync(file, args, { encoding: 'utf8', timeout: 2000, input }).stdout ?? '';
  // A spawn costs this process milliseconds, tens of them on a loaded machine, and this runs at the
  // stop's deadline: a few `ip -batch` runs, however many namespaces (one pair per namespace took
  // seconds under CI load, past the 5 s a Ctrl-C is given).
  const batch = (lines: string[]) => (lines.length > 0 ? sh('ip', ['-force', '-batch', '-'], lines.map((line) => `${line}\n`).join('')) : '');
  const all = sh('ip', ['netns', 'list']).split('\n').map((line) => line.split(' ')[0]);
  const namespaces = all.filter((ns) => nodes.some((node) => ns.startsWith(`neoset-${node.slice('neoset'.length)}-`)));
  for (const pid of batch(namespaces.map((ns) => `netns pids ${ns}`)).split('\n').map(Number).filter((p) => p > 0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  batch([...namespaces.map((ns) => `netns del ${ns}`), ...nodes.map((node) => `link del ${node}`), ...(network ? [`link del ${API_LINK}`] : [])]);
  for (const node of nodes) rmSync(join(STATE_ROOT, node), { recursive: true, force: true });
  if (network) {
    for (const [family, name] of KUBE_PROXY_TABLES) sh('nft', ['delete', 'table', family, name]);
    rmSync(OWNER_DIR, { recursive: true, force: true });
  }
}
