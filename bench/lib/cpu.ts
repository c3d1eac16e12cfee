// CPU time of processes from /proc/<pid>/stat (utime + stime: what the kernel charged them, whatever
// else the machine runs), in ms. On a machine shared with other work wall times are noise; this is not.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

interface Stat {
  comm: string;
  ppid: number;
  cpuMs: number;
}

function stat(pid: number): Stat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // comm is in parentheses and may itself hold spaces or parentheses: split after the last ')'.
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
  return { comm: text.slice(text.indexOf('(') + 1, close), ppid: Number(fields[1]), cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND };
}

/** CPU ms a process has used so far (0 once it is gone). */
export const cpuMs = (pid: number): number => stat(pid)?.cpuMs ?? 0;

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
}

function processes(): Proc[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .flatMap((pid) => {
      const s = stat(pid);
      return s ? [{ pid, ppid: s.ppid, comm: s.comm }] : [];
    });
}

/** Our own child processes named `comm` (as /proc shows it: at most 15 characters), e.g. kube-apiserver. */
export function childrenNamed(comm: string, parent = process.pid): number[] {
  return processes()
    .filter((p) => p.ppid === parent && p.comm === comm)
    .map((p) => p.pid);
}

/**
 * Every process below `root` (children, their children, …) with its command line: e.g. the
 * containers a process-mode kubelet of this process runs (each in a process group of its own, so
 * not found by group).
 */
export function descendants(root = process.pid): { pid: number; comm: string; argv: string[] }[] {
  const all = processes();
  const below = new Set([root]);
  // /proc lists parents before their children mostly, not always: repeat until nothing is added.
  for (let grown = true; grown; ) {
    grown = false;
    for (const p of all) {
      if (!below.has(p.pid) && below.has(p.ppid)) {
        below.add(p.pid);
        grown = true;
      }
    }
  }
  below.delete(root);
  return all.filter((p) => below.has(p.pid)).map((p) => ({ ...p, argv: commandLine(p.pid) }));
}

function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** A group of processes whose CPU is summed, e.g. the three functions. */
export interface CpuGroup {
  name: string;
  pids: number[];
}

export type CpuSample = Map<string, number>;

export function sampleCpu(groups: CpuGroup[]): CpuSample {
  return new Map(groups.map((g) => [g.name, g.pids.reduce((sum, pid) => sum + cpuMs(pid), 0)]));
}

/** CPU ms each group used between two samples. */
export function cpuDelta(before: CpuSample, after: CpuSample): Map<string, number> {
  return new Map([...after].map(([name, ms]) => [name, ms - (before.get(name) ?? 0)]));
}
