// Ctrl-C in a terminal, as issue #15 found it: the terminal sends SIGINT to every process of the
// foreground process group at once — npm, dev/main.ts, etcd, kube-apiserver, kube-controller-manager,
// the three functions — so the API server goes away while the stack is still using it. Whatever the
// moment (starting, idle, mid-rollout), everything must be gone within 5 s, the kubeconfig removed,
// and `npm run dev` must exit 0. Likewise `npm run cluster:down` (and Ctrl-C of `cluster:up`).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { poll } from '../../dev/cluster/wait.ts';

const REPO_ROOT = new URL('../..', import.meta.url).pathname;
const EXAMPLE = join(REPO_ROOT, 'examples', 'mysql.yaml');
const STOP_WITHIN_MS = 5000;

/** Live (not zombie) processes whose process group is `pgid`. */
function processGroup(pgid: number): { pid: number; name: string }[] {
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

interface Leader {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | string>;
}

/** `npm run <script>` as a terminal runs it: the leader of its own process group. */
function startNpm(args: string[], env = process.env): Leader {
  const child = spawn('npm', ['run', ...args], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return { child, output: () => output, exited };
}

interface Dev extends Leader {
  dir: string;
}

function startDev(args: string[] = []): Dev {
  const dir = mkdtempSync(join(tmpdir(), 'neoset-dev-stop-'));
  return { dir, ...startNpm(['dev', '--', '--dir', dir, '--reconcile-port', '0', '--readiness-port', '0', '--admission-port', '0', ...args]) };
}

const untilOutput = (dev: Dev, text: string, timeoutMs = 180_000) =>
  poll(`"${text}" from npm run dev`, async () => {
    if (dev.child.exitCode !== null) throw new Error(`npm run dev exited ${dev.child.exitCode}:\n${dev.output()}`);
    return dev.output().includes(text) ? true : undefined;
  }, { timeoutMs, intervalMs: 50 });

/** Ctrl-C: SIGINT to the whole process group; then how long until every member of it was gone. */
async function pressCtrlC(dev: Dev): Promise<{ code: number | string; ms: number; left: string[]; before: string[] }> {
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

describe('Ctrl-C of npm run dev (SIGINT to the whole process group)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const expectStopped = async (dev: Dev, situation: string) => {
    dirs.push(dev.dir);
    const { code, ms, left, before } = await pressCtrlC(dev);
    console.log(`[dev-stop] ${situation}: ${before.length} processes (${before.map((p) => p.split(' ')[1]).join(', ')}) gone ${ms} ms after SIGINT, exit ${code}`);
    expect(left, `still running ${STOP_WITHIN_MS} ms after Ctrl-C ${situation}:\n${dev.output()}`).toEqual([]);
    expect(code, dev.output()).toBe(0);
    expect(existsSync(join(dev.dir, 'kubeconfig'))).toBe(false);
  };

  it('during startup, once kube-apiserver runs', async () => {
    const dev = startDev();
    await untilOutput(dev, 'started kube-apiserver');
    await expectStopped(dev, 'during startup');
  }, 240_000);

  it('during startup, once the functions run (the kubelet and the API server busy)', async () => {
    const dev = startDev();
    await untilOutput(dev, 'admission: https://');
    await expectStopped(dev, 'late in startup');
  }, 240_000);

  it('idle', async () => {
    const dev = startDev();
    await untilOutput(dev, 'NeoSet dev stack ready');
    await expectStopped(dev, 'idle');
  }, 240_000);

  it('mid-rollout', async () => {
    const dev = startDev(['--resync-ms', '1000']);
    await untilOutput(dev, 'NeoSet dev stack ready');
    const kubeconfig = join(dev.dir, 'kubeconfig');
    const kubectl = (args: string[]) => {
      const r = spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    const status = () => JSON.parse(kubectl(['get', 'neo', 'mysql', '-o', 'json'])).status ?? {};
    kubectl(['apply', '-f', EXAMPLE]);
    await poll('mysql to be ready', async () => (status().readyReplicas === 5 ? true : undefined), { timeoutMs: 90_000, intervalMs: 250 });
    kubectl(['patch', 'neo', 'mysql', '--type', 'json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'mysql:8.1' }])]);
    await poll('the rollout to be under way', async () => {
      const s = status();
      return s.phase === 'RollingOut' && s.updatedReplicas >= 1 && s.updatedReplicas < 5 ? true : undefined;
    }, { timeoutMs: 60_000, intervalMs: 100 });
    await expectStopped(dev, 'mid-rollout');
  }, 240_000);
});

describe('npm run cluster:down, and Ctrl-C of cluster:up', () => {
  const home = mkdtempSync(join(tmpdir(), 'neoset-cluster-stop-'));
  const env = { ...process.env, NEOSET_CLUSTER_HOME: home };
  afterAll(() => {
    spawnSync('npm', ['run', 'cluster:down'], { cwd: REPO_ROOT, env });
    rmSync(home, { recursive: true, force: true });
  });

  const startUp = () => {
    rmSync(join(home, 'daemon.log'), { force: true }); // the previous daemon's
    return startNpm(['cluster:up'], env);
  };
  const daemonPid = () => Number(readFileSync(join(home, 'daemon.pid'), 'utf8'));
  const daemonLog = () => (existsSync(join(home, 'daemon.log')) ? readFileSync(join(home, 'daemon.log'), 'utf8') : '');
  const untilDaemonLog = (text: string) => poll(`"${text}" in the daemon log`, async () => (daemonLog().includes(text) ? true : undefined), { timeoutMs: 180_000, intervalMs: 50 });

  /** Runs `stop`, then waits until nothing of the daemon's process group is left (at most 5 s). */
  const stopsWithin = async (stop: () => Promise<unknown>, situation: string) => {
    const pgid = daemonPid(); // cluster:up starts the daemon detached: it leads its own group
    const before = processGroup(pgid).map((p) => p.name);
    expect(before.length).toBeGreaterThan(1);
    const started = Date.now();
    await stop();
    while (processGroup(pgid).length > 0 && Date.now() - started < STOP_WITHIN_MS) await new Promise((resolve) => setTimeout(resolve, 50));
    const left = processGroup(pgid).map((p) => `${p.pid} ${p.name}`);
    console.log(`[cluster-stop] ${situation}: ${before.length} processes (${before.join(', ')}) gone ${Date.now() - started} ms after it`);
    if (left.length > 0) process.kill(-pgid, 'SIGKILL');
    expect(left, `${situation}: still running after ${STOP_WITHIN_MS} ms\n${daemonLog()}`).toEqual([]);
    for (const file of ['state.json', 'daemon.pid', 'kubeconfig']) expect(existsSync(join(home, file)), file).toBe(false);
  };
  const down = () => {
    const r = spawnSync('npm', ['run', 'cluster:down'], { cwd: REPO_ROOT, env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  };

  it('cluster:down while cluster:up is still starting', async () => {
    const up = startUp();
    await untilDaemonLog('started kube-apiserver');
    await stopsWithin(async () => down(), 'cluster:down during startup');
    expect(await up.exited).not.toBe(0);
  }, 240_000);

  it('Ctrl-C of cluster:up while it waits for the cluster: the cluster being started is stopped', async () => {
    const up = startUp();
    await untilDaemonLog('started kube-apiserver');
    await stopsWithin(async () => {
      process.kill(-up.child.pid!, 'SIGINT');
      await up.exited;
    }, 'Ctrl-C of cluster:up');
    expect(up.output()).toContain('interrupted: stopping the cluster being started');
  }, 240_000);

  it('cluster:down of a running cluster', async () => {
    const up = startUp();
    expect(await up.exited, up.output()).toBe(0);
    await stopsWithin(async () => down(), 'cluster:down idle');
  }, 240_000);
});
