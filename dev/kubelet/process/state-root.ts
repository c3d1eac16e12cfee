// Where the process-mode kubelets' node networks and the service network keep their host state, each
// in a directory with an `owner` file naming its process's pid: what a crashed run left is told from
// what a live one has. A tmpfs, gone with a reboot like the state it describes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const STATE_ROOT = '/run/neoset';

export const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The pid in `dir`/owner, read synchronously (a stop's deadline runs this); undefined when there is none. */
export function ownerNow(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'owner'), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
