// Where `npm run cluster:up` keeps its cluster: .neoset/cluster/ under the repository root
// (git-ignored), or NEOSET_CLUSTER_HOME. The daemon owns these files; the CLI only reads them, and
// cleans up after a daemon that could not (SIGKILL).
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export const REPO_ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
/** NEOSET_CLUSTER_HOME moves it (tests run a cluster of their own beside a user's). */
export const CLUSTER_HOME = process.env.NEOSET_CLUSTER_HOME || join(REPO_ROOT, '.neoset', 'cluster');

export const localCluster = {
  /** The control plane's working directory (certs, etcd data, process logs). */
  dataDir: join(CLUSTER_HOME, 'data'),
  kubeconfig: join(CLUSTER_HOME, 'kubeconfig'),
  /** Written by the CLI as soon as the daemon is spawned. */
  pidFile: join(CLUSTER_HOME, 'daemon.pid'),
  /** Written by the daemon once everything is ready: its presence means "up". */
  stateFile: join(CLUSTER_HOME, 'state.json'),
  daemonLog: join(CLUSTER_HOME, 'daemon.log'),
};

export interface LocalClusterState {
  pid: number;
  server: string;
  version: string;
  etcdVersion: string;
  kubeconfig: string;
  kubelet: string | null;
  logs: Record<string, string>;
  readyAt: string;
}

export function readState(): LocalClusterState | undefined {
  try {
    return JSON.parse(readFileSync(localCluster.stateFile, 'utf8')) as LocalClusterState;
  } catch {
    return undefined;
  }
}

export function readDaemonPid(): number | undefined {
  try {
    const pid = Number(readFileSync(localCluster.pidFile, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie (exited, not yet reaped by a PID 1 that may never reap) still answers signal 0.
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return true;
  }
}

/** Removes what says "a cluster runs here"; the daemon log (and the data dir's logs) stay for post-mortems. */
export function removeRunFiles(): void {
  for (const file of [localCluster.stateFile, localCluster.pidFile, localCluster.kubeconfig]) rmSync(file, { force: true });
}
