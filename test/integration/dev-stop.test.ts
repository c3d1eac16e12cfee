// Ctrl-C in a terminal, as issue #15 found it: the terminal sends SIGINT to every process of the
// foreground process group at once — npm, dev/main.ts, etcd, kube-apiserver, kube-controller-manager,
// the three functions — so the API server goes away while the stack is still using it. Whatever the
// moment (starting, idle, mid-rollout), everything must be gone within 5 s, the kubeconfig removed,
// and `npm run dev` must exit 0. Likewise `npm run cluster:down` (and Ctrl-C of `cluster:up`).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../../dev/cluster/wait.ts';
import { imagePatch, kubectlOn } from '../e2e/readme-walkthrough.ts';
import { devMainPid, footprint, leftOf, pressCtrlCOnKnative } from '../e2e/footprint.ts';
import { pressCtrlC, processGroup, startDev, startKnativeDev, startNpm, STOP_WITHIN_MS, untilOutput, type Dev } from '../e2e/terminal.ts';

const processGroupGone = (pgid: number) => processGroup(pgid).length === 0;

const REPO_ROOT = new URL('../..', import.meta.url).pathname;
const EXAMPLE = join(REPO_ROOT, 'examples', 'mysql.yaml');

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

  it('idle, with no one reading its output any more (a closed terminal, `| head` done)', async () => {
    const dev = startDev();
    await untilOutput(dev, 'NeoSet dev stack ready');
    // Its lines now fail with EPIPE — "stopping (SIGINT)" first among them — which, unhandled, ended
    // dev/main.ts without its stop (exit 1; on the real Knative: pods and namespaces left behind).
    dev.child.stdout!.destroy();
    dev.child.stderr!.destroy();
    await expectStopped(dev, 'idle, its output unread');
  }, 240_000);

  it('mid-rollout', async () => {
    const dev = startDev(['--resync-ms', '1000']);
    await untilOutput(dev, 'NeoSet dev stack ready');
    const kubectl = kubectlOn(join(dev.dir, 'kubeconfig'));
    const status = () => JSON.parse(kubectl(['get', 'neo', 'mysql', '-o', 'json'])).status ?? {};
    kubectl(['apply', '-f', EXAMPLE]);
    await poll('mysql to be ready', async () => (status().readyReplicas === 5 ? true : undefined), { timeoutMs: 90_000, intervalMs: 250 });
    kubectl(['patch', 'neo', 'mysql', '--type', 'json', '-p', imagePatch('mysql:8.1')]);
    await poll('the rollout to be under way', async () => {
      const s = status();
      return s.phase === 'RollingOut' && s.updatedReplicas >= 1 && s.updatedReplicas < 5 ? true : undefined;
    }, { timeoutMs: 60_000, intervalMs: 100 });
    await expectStopped(dev, 'mid-rollout');
  }, 240_000);
});

// The default mode, on the real Knative (needs the machine's service network: run this file under
// `flock /tmp/neoset-service-network.lock`). Besides its process group it has pods' processes in
// process groups of their own, network namespaces, veths and a bridge, the service network's
// interface and kube-proxy's nftables tables (test/e2e/footprint.ts): all gone within 5 s too.
describe('Ctrl-C of npm run dev on the real Knative (its pods, network namespaces, veths, bridge, nftables tables)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const expectAllGone = async (dev: Dev, situation: string) => {
    dirs.push(dev.dir);
    const { code, ms, before, left } = await pressCtrlCOnKnative(dev);
    const count = (f: typeof before) => `${f.processes.length} processes, ${f.netns.length} network namespaces, ${f.links.length} links, ${f.tables.length} nftables tables`;
    console.log(`[dev-stop knative] ${situation}: ${count(before)} (${before.links.filter((l) => !l.startsWith('veth')).join(', ')}; ${before.tables.join(', ')}) gone ${ms} ms after SIGINT, exit ${code}; left: ${count(left)}`);
    expect(before.processes.length).toBeGreaterThan(2);
    expect(left, `still there ${STOP_WITHIN_MS} ms after Ctrl-C ${situation}:\n${dev.output()}`).toEqual({ netns: [], links: [], tables: [], processes: [] });
    expect(code, dev.output()).toBe(0);
    expect(existsSync(join(dev.dir, 'kubeconfig'))).toBe(false);
    return before;
  };

  it('during startup, once kube-apiserver runs', async () => {
    const dev = startKnativeDev();
    await untilOutput(dev, 'started kube-apiserver');
    await expectAllGone(dev, 'during startup');
  }, 120_000);

  it("during startup, while Knative's pods and the functions' pods start", async () => {
    const dev = startKnativeDev();
    await untilOutput(dev, 'admission certificate issued');
    const before = await expectAllGone(dev, 'while the pods start');
    expect(before.netns.length).toBeGreaterThan(0);
    expect(before.tables).toEqual(['ip kube-proxy', 'ip6 kube-proxy']);
  }, 120_000);

  it('idle, every pod running', async () => {
    const dev = startKnativeDev();
    await untilOutput(dev, 'NeoSet dev stack ready');
    const before = await expectAllGone(dev, 'idle');
    // CoreDNS, Knative's nine, NeoSet's five and the sources' adapters: each a namespace and a veth.
    expect(before.netns.length).toBeGreaterThanOrEqual(17);
    expect(before.links).toContain('neoset-api');
  }, 120_000);

  // SIGKILL leaves no stop to run: the pods' processes (in process groups of their own), their
  // namespaces and veths, the bridge, the API's interface, kube-proxy's tables and ip_forward turned
  // on by the CNI bridge all stay. The next start must remove every one of them, say so, and leave
  // ip_forward as the host had it before the first.
  it('after a SIGKILL of the whole stack: the next start removes what it left and says so; ip_forward as the host had it', async () => {
    const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';
    const hostForward = readFileSync(IP_FORWARD, 'utf8').trim();
    writeFileSync(IP_FORWARD, '0\n');
    try {
      const first = startKnativeDev();
      dirs.push(first.dir);
      await untilOutput(first, 'NeoSet dev stack ready');
      const pgid = first.child.pid!;
      const before = footprint(pgid, devMainPid(pgid)!);
      process.kill(-pgid, 'SIGKILL');
      await first.exited;
      await poll('the process group gone', async () => (processGroupGone(pgid) ? true : undefined), { timeoutMs: 5000, intervalMs: 50 });
      const stayed = leftOf(before);
      const count = (f: typeof before) => `${f.processes.length} processes, ${f.netns.length} network namespaces, ${f.links.length} links, ${f.tables.length} nftables tables`;
      console.log(`[dev-stop knative] SIGKILL left: ${count(stayed)}; ip_forward ${readFileSync(IP_FORWARD, 'utf8').trim()}`);
      expect(stayed.processes.length).toBeGreaterThan(10);
      expect(stayed.netns.length).toBeGreaterThanOrEqual(17);
      expect(stayed.tables).toEqual(['ip kube-proxy', 'ip6 kube-proxy']);

      const second = startKnativeDev();
      let said: string | undefined;
      let gone: typeof before;
      try {
        await untilOutput(second, 'NeoSet dev stack ready');
        said = second.output().split('\n').find((line) => line.includes('removed what an earlier dev stack left'));
        gone = leftOf(stayed);
      } catch (error) {
        await pressCtrlCOnKnative(second); // no test leaves a stack behind
        throw new Error(`${(error as Error).message}; its output:\n${second.output().slice(-3000)}`, { cause: error });
      }
      console.log(`[dev-stop knative] the next start: ${said ?? 'said nothing of what the killed stack left'}`);
      const leftovers = { netns: gone.netns, processes: gone.processes, veths: gone.links.filter((l) => l.startsWith('veth')) };
      const after = await expectAllGone(second, 'after the start that cleaned up');
      // The bridge, the interface and the tables are made again under the same names: the line names
      // them; the namespaces (named by pod uid), veths and processes are gone for good.
      expect(after.netns.filter((ns) => stayed.netns.includes(ns))).toEqual([]);
      expect(leftovers).toEqual({ netns: [], processes: [], veths: [] });
      expect(said ?? 'nothing said of what the killed stack left', second.output()).toMatch(new RegExp(`removed what an earlier dev stack left \\(pid \\d+, gone without its stop\\): \\d+ pod processes, ${stayed.netns.length} network namespaces \\(their veths with them\\), the bridge neoset\\d+, neoset-api, nftables table ip kube-proxy, nftables table ip6 kube-proxy, net.ipv4.ip_forward set back to 0`));
      expect(readFileSync(IP_FORWARD, 'utf8').trim()).toBe('0');
      // Its state under /run/neoset too (the only stack on this machine: nothing else keeps state there).
      expect(existsSync('/run/neoset'), `left: ${existsSync('/run/neoset') ? readdirSync('/run/neoset').join(', ') : ''}`).toBe(false);
    } finally {
      writeFileSync(IP_FORWARD, `${hostForward}\n`);
    }
  }, 420_000);
});

describe('npm run cluster:down, and Ctrl-C of cluster:up', () => {
  // Made in beforeAll, not when the file is collected: a run of other tests (-t) would leave it behind.
  let home = '';
  let env: NodeJS.ProcessEnv = {};
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'neoset-cluster-stop-'));
    env = { ...process.env, NEOSET_CLUSTER_HOME: home };
  });
  afterAll(() => {
    if (!home) return;
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
