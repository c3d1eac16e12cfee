// `npm run …` as a user runs it in a terminal: the leader of its own (foreground) process group, so
// that Ctrl-C — SIGINT to every process of the group at once — can be played as a terminal does.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { poll } from '../../dev/cluster/wait.ts';

const REPO_ROOT = new URL('../..', import.meta.url).pathname;
/** Issue #15: everything gone within 5 s of Ctrl-C. */
export const STOP_WITHIN_MS = 5000;

/** Live (not zombie) processes whose process group is `pgid`. */
export function processGroup(pgid: number): { pid: number; name: string }[] {
  const members = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(group) === pgid && state !== 'Z') members.push({ pid: Number(entry), name });
  }
  return members;
}

export interface Leader {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | string>;
}

/** `npm run <script>` as a terminal runs it: the leader of its own process group. */
export function startNpm(args: string[], env = process.env): Leader {
  const child = spawn('npm', ['run', ...args], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return { child, output: () => output, exited };
}

export interface Dev extends Leader {
  dir: string;
}

/** `npm run dev -- --bridge` (the light mode) on free ports in a new directory, plus `args`. */
export function startDev(args: string[] = []): Dev {
  const dir = mkdtempSync(join(tmpdir(), 'neoset-dev-stop-'));
  return { dir, ...startNpm(['dev', '--', '--bridge', '--dir', dir, '--reconcile-port', '0', '--readiness-port', '0', '--admission-port', '0', ...args]) };
}

/**
 * `npm run dev` in its default mode, on the real Knative, in a new directory. It claims the machine's
 * service network: run its tests under `flock /tmp/neoset-service-network.lock`.
 */
export function startKnativeDev(args: string[] = []): Dev {
  const dir = mkdtempSync(join(tmpdir(), 'neoset-dev-knative-'));
  return { dir, ...startNpm(['dev', '--', '--dir', dir, ...args]) };
}

export const untilOutput = (dev: Dev, text: string, timeoutMs = 180_000) =>
  poll(`"${text}" from npm run dev`, async () => {
    if (dev.child.exitCode !== null) throw new Error(`npm run dev exited ${dev.child.exitCode}:\n${dev.output()}`);
    return dev.output().includes(text) ? true : undefined;
  }, { timeoutMs, intervalMs: 50 });

/** Ctrl-C: SIGINT to the whole process group; then how long until every member of it was gone. */
export async function pressCtrlC(dev: Dev): Promise<{ code: number | string; ms: number; left: string[]; before: string[] }> {
  const pgid = dev.child.pid!;
  const before = processGroup(pgid).map((p) => `${p.pid} ${p.name}`);
  const started = Date.now();
  process.kill(-pgid, 'SIGINT');
  const code = await Promise.race([dev.exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), STOP_WITHIN_MS))]);
  while (processGroup(pgid).length > 0 && Date.now() - started < STOP_WITHIN_MS) await new Promise((resolve) => setTimeout(resolve, 50));
  const ms = Date.now() - started;
  const left = processGroup(pgid).map((p) => `${p.pid} ${p.name}`);
  // Whatever the outcome, nothing of this test outlives it.
  if (left.length > 0) process.kill(-pgid, 'SIGKILL');
  return { code, ms, left, before };
}
