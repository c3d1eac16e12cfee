// What a Knative-mode `npm run dev` has on the machine, beyond its process group: the process-mode
// kubelet's network namespaces (and what runs in them: the pods' processes, in process groups of
// their own, so a terminal's Ctrl-C does not reach them), its bridge and the pods' veths, the service
// network's interface and kube-proxy's nftables tables. Only what belongs to the stack whose
// dev/main.ts is `ownerPid` is listed (other stacks of the machine keep theirs): the kubelet's and the
// service network's state directories name their owner's pid (dev/kubelet/process/network.ts,
// dev/cluster/service-network.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../../dev/cluster/local-cluster.ts';
import { processGroup, STOP_WITHIN_MS, type Dev } from './terminal.ts';

const STATE_ROOT = '/run/neoset';

export interface Footprint {
  /** `ip netns` names. */
  netns: string[];
  /** `ip link` names: the node's bridge, its veths, the service network's interface. */
  links: string[];
  /** `nft list tables` entries, e.g. `ip kube-proxy`. */
  tables: string[];
  /** `pid name` of the process group's members and of every process in the namespaces. */
  processes: string[];
}

const run = (file: string, args: string[]) => spawnSync(file, args, { encoding: 'utf8' }).stdout ?? '';
const ownerOf = (dir: string) => Number((existsSync(join(dir, 'owner')) ? readFileSync(join(dir, 'owner'), 'utf8') : '').trim());
const nameOf = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  } catch {
    return undefined;
  }
};

/** The pid of dev/main.ts in `npm run dev`'s process group `pgid`. */
export function devMainPid(pgid: number): number | undefined {
  return processGroup(pgid).find((p) => {
    try {
      return readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes('dev/main.ts');
    } catch {
      return false;
    }
  })?.pid;
}

/** What the stack of dev/main.ts `ownerPid` (process group `pgid`) has now. */
export function footprint(pgid: number, ownerPid: number): Footprint {
  const nodes = (existsSync(STATE_ROOT) ? readdirSync(STATE_ROOT) : []).filter((d) => /^neoset\d+$/.test(d) && ownerOf(join(STATE_ROOT, d)) === ownerPid);
  const allNetns = run('ip', ['netns', 'list']).split('\n').map((l) => l.split(' ')[0]).filter(Boolean);
  const netns = allNetns.filter((ns) => nodes.some((node) => ns.startsWith(`neoset-${node.slice('neoset'.length)}-`)));
  const links = run('ip', ['-o', 'link', 'show'])
    .split('\n')
    .map((line) => ({ line, name: /^\d+: ([^:@]+)/.exec(line)?.[1] }))
    .filter(({ line, name }) => name && (nodes.includes(name) || nodes.some((node) => line.includes(` master ${node} `))))
    .map(({ name }) => name!);
  const ownsServices = ownerOf(join(STATE_ROOT, 'services')) === ownerPid;
  if (ownsServices && run('ip', ['-o', 'link', 'show', 'neoset-api']).includes('neoset-api')) links.push('neoset-api');
  // kube-proxy's tables have fixed names: one services stack per machine, and it is ours.
  const tables = ownsServices || nodes.length > 0 ? run('nft', ['list', 'tables']).split('\n').filter((l) => /^table ip6? kube-proxy$/.test(l)).map((l) => l.slice('table '.length)) : [];
  const inNetns = netns.flatMap((ns) => run('ip', ['netns', 'pids', ns]).split('\n').map(Number).filter((pid) => pid > 0));
  const processes = [...processGroup(pgid).map((p) => `${p.pid} ${p.name}`), ...inNetns.flatMap((pid) => (nameOf(pid) ? [`${pid} ${nameOf(pid)}`] : []))];
  return { netns, links, tables, processes };
}

/** What of `before` is still there now (processes by pid, the rest by name). */
export function leftOf(before: Footprint): Footprint {
  const netnsNow = new Set(run('ip', ['netns', 'list']).split('\n').map((l) => l.split(' ')[0]));
  const linksNow = new Set(run('ip', ['-o', 'link', 'show']).split('\n').map((l) => /^\d+: ([^:@]+)/.exec(l)?.[1]));
  const tablesNow = run('nft', ['list', 'tables']);
  return {
    netns: before.netns.filter((ns) => netnsNow.has(ns)),
    links: before.links.filter((l) => linksNow.has(l)),
    tables: before.tables.filter((t) => tablesNow.includes(`table ${t}\n`)),
    processes: before.processes.filter((p) => {
      const [pid, name] = p.split(' ');
      return nameOf(Number(pid)) === name && isAlive(Number(pid));
    }),
  };
}

const empty = (f: Footprint) => Object.values(f).every((list) => list.length === 0);

/**
 * Ctrl-C of a Knative-mode `npm run dev`: SIGINT to its process group, as a terminal sends it; then how
 * long until everything of its footprint (taken just before) was gone, within STOP_WITHIN_MS.
 * Whatever is left then is killed, so no test leaves processes behind.
 */
export async function pressCtrlCOnKnative(dev: Dev): Promise<{ code: number | string; ms: number; before: Footprint; left: Footprint }> {
  const pgid = dev.child.pid!;
  const owner = devMainPid(pgid);
  if (owner === undefined) throw new Error(`no dev/main.ts in process group ${pgid}:\n${dev.output()}`);
  const before = footprint(pgid, owner);
  const started = Date.now();
  process.kill(-pgid, 'SIGINT');
  const code = await Promise.race([dev.exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), STOP_WITHIN_MS))]);
  let left = leftOf(before);
  while (!empty(left) && Date.now() - started < STOP_WITHIN_MS) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = leftOf(before);
  }
  const ms = Date.now() - started;
  if (processGroup(pgid).length > 0) process.kill(-pgid, 'SIGKILL');
  for (const p of left.processes) {
    try {
      process.kill(Number(p.split(' ')[0]), 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return { code, ms, before, left };
}
