// Where the process-mode kubelets' node networks and the service network keep their host state, each
// in a directory with an `owner` file naming its process's pid: what a crashed run left is told from
// what a live one has. A tmpfs, gone with a reboot like the state it describes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const STATE_ROOT = '/run/neoset';

/**
 * Whether `pid` is a running process. A zombie is not: a stack killed with SIGKILL leaves its dev/main.ts
 * an orphan until init reaps it, and signal 0 still reaches it meanwhile — the next start then refused
 * with "belongs to another live process" (a CI run of dev-stop.test's SIGKILL case).
 */
export const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return processState(pid) !== 'Z';
};

/** The state letter of /proc/<pid>/stat (R, S, D, Z, …), after the command name, which may hold spaces and parentheses. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2];
  } catch {
    return undefined;
  }
}

/** The pid in `dir`/owner, read synchronously (a stop's deadline runs this); undefined when there is none. */
export function ownerNow(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'owner'), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
