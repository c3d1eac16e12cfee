// The host's programs the process-mode kubelet runs itself to start a container and to run an exec
// probe or hook (ip, unshare, sh, mount, mkdir, dirname, hostname, nsenter), each by an absolute path
// found once, and the environment they run with. Never by a pod's PATH: Node's spawn and a shell look
// a bare name up in the PATH of the environment they are given, and a pod that set its PATH to a
// folder of its own (another pod's ConfigMap volume under /run/neoset/…) had its `ip` run as root.
// The pod's environment is its program's only (container.ts hands it over at the very end).

import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

/** Where the tools are looked for first: the system's own directories, in the usual order. */
export const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The environment of the kubelet's tools: a fixed PATH and nothing else, of the kubelet's or of a pod's. */
export const TOOL_ENV: Readonly<Record<string, string>> = Object.freeze({ PATH: SYSTEM_PATH });

/** An executable regular file at `path`. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const found = new Map<string, string>();

/**
 * The absolute path of host program `name`: the first executable of that name in SYSTEM_PATH, else
 * in the kubelet's own PATH (its absolute directories: a host that keeps them elsewhere); found once.
 */
export function hostTool(name: string): string {
  const known = found.get(name);
  if (known) return known;
  const dirs = [...SYSTEM_PATH.split(':'), ...(process.env.PATH ?? '').split(':').filter((dir) => isAbsolute(dir))];
  const path = dirs.map((dir) => join(dir, name)).find(isExecutable);
  if (!path) throw new Error(`${name}: not found in ${SYSTEM_PATH} nor in the kubelet's PATH (the process-mode kubelet needs it)`);
  found.set(name, path);
  return path;
}
