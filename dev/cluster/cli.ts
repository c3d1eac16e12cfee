// `npm run cluster:up` / `npm run cluster:down`: a local control plane (with the NeoSet CRD and the
// simulated kubelet) that keeps running in the background between commands, for `npm run dev`,
// kubectl and manual experiments.
//
//   up    start the daemon (daemon.ts), wait until it is ready, print `export KUBECONFIG=...`
//   down  stop it: SIGTERM, then SIGKILL; no etcd/kube-* process is left (they die with the daemon)
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import {
  CLUSTER_HOME,
  isAlive,
  localCluster,
  readDaemonPid,
  readState,
  removeRunFiles,
  REPO_ROOT,
} from './local-cluster.ts';
import { STOP_DEADLINE_MS } from './shutdown.ts';

const DAEMON = new URL('./daemon.ts', import.meta.url).pathname;
// A first run may build the binaries from source (build-binaries.sh): many minutes on 2 cores.
const UP_TIMEOUT_MS = 45 * 60_000;
// The daemon's own stop is bounded (shutdown.ts); past that, SIGKILL takes its children along.
const DOWN_GRACE_MS = STOP_DEADLINE_MS;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string) => process.stderr.write(`${line}\n`);

/** Copies what the daemon appends to its log onto our stderr, so a long first build shows progress. */
function logFollower(path: string, from: number) {
  let offset = from;
  const buffer = Buffer.alloc(64 * 1024);
  return () => {
    const fd = openSync(path, 'r');
    try {
      for (let n; (n = readSync(fd, buffer, 0, buffer.length, offset)) > 0; offset += n) process.stderr.write(buffer.subarray(0, n));
    } finally {
      closeSync(fd);
    }
  };
}

function printReady(): void {
  const state = readState()!;
  say(`kube-apiserver ${state.version} (etcd ${state.etcdVersion}) at ${state.server}; kubelet: ${state.kubelet ?? 'none'}; daemon pid ${state.pid}`);
  process.stdout.write(`export KUBECONFIG=${state.kubeconfig}\n`);
}

async function waitUntilReady(pid: number, follow: () => void, abandoned = () => false): Promise<number> {
  const deadline = Date.now() + UP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (abandoned()) return 1;
    follow();
    if (readState()?.pid === pid) return 0;
    if (!isAlive(pid)) {
      follow();
      say(`cluster daemon (pid ${pid}) exited before it was ready; see ${localCluster.daemonLog}`);
      removeRunFiles();
      return 1;
    }
    await sleep(200);
  }
  say(`cluster daemon (pid ${pid}) not ready after ${UP_TIMEOUT_MS / 60_000} min; see ${localCluster.daemonLog} (npm run cluster:down stops it)`);
  return 1;
}

async function up(): Promise<number> {
  mkdirSync(CLUSTER_HOME, { recursive: true });
  const running = readDaemonPid();
  if (running !== undefined && isAlive(running)) {
    if (readState()?.pid === running) {
      say(`a cluster is already running (daemon pid ${running})`);
      printReady();
      return 0;
    }
    say(`a cluster is already starting (daemon pid ${running}); waiting for it`);
    const code = await waitUntilReady(running, () => {});
    if (code === 0) printReady();
    return code;
  }
  removeRunFiles(); // left by a daemon that was killed
  const log = openSync(localCluster.daemonLog, 'w');
  const daemon = spawn(process.execPath, [DAEMON], { cwd: REPO_ROOT, detached: true, stdio: ['ignore', log, log] });
  closeSync(log);
  daemon.unref();
  writeFileSync(localCluster.pidFile, `${daemon.pid}\n`);
  say(`starting the cluster daemon (pid ${daemon.pid}); log ${localCluster.daemonLog}`);
  // The daemon is detached, out of reach of a terminal's Ctrl-C: pressing it while we wait means
  // "never mind", so the cluster being started is stopped rather than left running unannounced.
  let stopped: Promise<number> | undefined;
  const interrupt = () => {
    if (stopped) return; // npm forwards the terminal's SIGINT: the same Ctrl-C reaches us twice
    say('interrupted: stopping the cluster being started');
    stopped = down().then(() => 1);
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  const code = await waitUntilReady(daemon.pid!, logFollower(localCluster.daemonLog, 0), () => stopped !== undefined);
  if (stopped) return stopped;
  if (code === 0) printReady();
  return code;
}

async function down(): Promise<number> {
  const pid = readDaemonPid() ?? readState()?.pid;
  if (pid === undefined || !isAlive(pid)) {
    say('no cluster is running');
    removeRunFiles();
    return 0;
  }
  say(`stopping the cluster daemon (pid ${pid})`);
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + DOWN_GRACE_MS;
  while (isAlive(pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(pid)) {
    say(`still running after ${DOWN_GRACE_MS / 1000} s: SIGKILL (its etcd and kube-* processes die with it)`);
    process.kill(pid, 'SIGKILL');
    while (isAlive(pid)) await sleep(100);
    removeRunFiles();
    if (!process.env.KEEP_CLUSTER_DIR) rmSync(localCluster.dataDir, { recursive: true, force: true });
  }
  say('cluster stopped');
  return 0;
}

const commands: Record<string, () => Promise<number>> = { up, down };
const command = commands[process.argv[2] ?? ''];
if (!command) {
  say('usage: node dev/cluster/cli.ts up|down');
  process.exit(2);
}
process.exit(await command());
