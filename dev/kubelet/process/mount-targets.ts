// Where a process-mode container may mount a volume. A real container's volumes go into its own root
// file system; here they go over the host's, in the container's own mount namespace (container.ts),
// and the process started there is the image table's program, run as root. A volume over that
// program, over a file it loads, or over the system it runs on would make it run code of the pod's
// choosing as root on the host (a ConfigMap over functions/reconcile/server.ts is NeoSet's function
// no more). So a mountPath — every symlink followed, in the container's view: its earlier mounts
// included — may not be, lie inside or contain a protected path:
//   - the checkout: NeoSet's functions and whatever else the stack runs from it (Traefik's
//     configuration, the test fixtures' programs), and the node_modules directories above it, which
//     Node's module resolution reaches from the checkout's files;
//   - the container's program (the table's, or a user entry's command), every symlink on the way to
//     it and its directory; the paths its fixed command line names (relative ones from its working
//     directory: NeoSet's `functions/<name>/server.ts`) and the image's working directory;
//   - Node 24, its directory and its install, and where Node looks for modules outside a package's
//     node_modules: $HOME/.node_modules, $HOME/.node_libraries and NODE_PATH of the container's
//     environment (a failed optional require — ws's bufferutil — is looked for there);
//   - the system a process needs to be what it claims (SYSTEM_PATHS): the kernel's views (/proc,
//     /sys, /dev), programs and libraries with the dynamic loader (/usr, /bin, /sbin, /lib*), what
//     the loader and libc read to choose code (/etc/ld.so.*, /etc/nsswitch.conf: NSS modules), and
//     OpenSSL's directory /etc/ssl (Node's OPENSSLDIR: its openssl.cnf can load a provider module).
// So `/`, `/etc`, `/work` or `/root` are refused too (they contain one). Everything else mounts as
// before: /etc/config, /etc/coredns, /etc/hosts, /var/run/secrets/…, /tmp/…, /mnt/….
// A mountPath must be absolute, without `..`; the container's mount goes to the path resolved here.
// What is not covered: a symlink made between this check and the mount (by a process writing into a
// volume shared with a running container, or the host's owner), and the program's environment and
// working directory themselves (environment.ts decides what a pod may set there).

import { lstat, readlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import type { V1Container } from '@kubernetes/client-node';
import { ContainerConfigError } from './environment.ts';
import { CHECKOUT, node24, type ImageEntry } from './image-table.ts';

/** A path the container may not mount at, over or above, and what it is (for the refusal's message). */
export interface Protected {
  path: string;
  what: string;
}

/** What the container runs, as commandLine made it (environment.ts). */
export interface Program {
  argv: string[];
  /** How many of argv's first strings are the image table's (the rest are the pod's args). */
  fixed: number;
  env: Record<string, string>;
  workingDir: string;
  /** The image table entry's own working directory, if it names one. */
  imageWorkingDir?: string;
}

/** What `container` runs, by the entry `image` and its command line `line` (commandLine's). */
export function programOf(container: V1Container, image: ImageEntry, line: { argv: string[]; env: Record<string, string>; workingDir: string }): Program {
  // commandLine: a pod's command replaces entrypoint and cmd, its args (even empty) replace cmd.
  const fixed = container.command?.length ? 1 : image.entrypoint.length + (container.args ? 0 : image.cmd.length);
  return { ...line, fixed, imageWorkingDir: image.workingDir };
}

/** A mount already made in the container's view: what is at `target` (resolved) is `source` on the host. */
export interface ViewMount {
  target: string;
  source: string;
}

export const SYSTEM_PATHS: Protected[] = [
  ...['/proc', '/sys', '/dev'].map((path) => ({ path, what: "the kernel's view" })),
  ...['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'].map((path) => ({ path, what: "the host's programs and libraries" })),
  ...['/etc/ld.so.preload', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d'].map((path) => ({ path, what: "the dynamic loader's configuration" })),
  { path: '/etc/nsswitch.conf', what: "libc's NSS configuration (it names modules to load)" },
  { path: '/etc/ssl', what: "OpenSSL's directory (Node's OPENSSLDIR)" },
];

/** Symlinks followed before giving up (the kernel's MAXSYMLINKS). */
const MAX_LINKS = 40;
/** The longest mountPath looked at (Linux's PATH_MAX: mount(2) refuses a longer one anyway). */
const PATH_MAX = 4096;

/** The host path of container path `path`: under the latest earlier mount at or above it, else the host's own. */
function hostPathOf(path: string, mounts: ViewMount[]): string {
  for (let i = mounts.length - 1; i >= 0; i--) {
    const { target, source } = mounts[i];
    if (path === target) return source;
    if (target === '/' || path.startsWith(`${target}/`)) return join(source, path.slice(target === '/' ? 0 : target.length));
  }
  return path;
}

/**
 * `path` (absolute) in the container's view with every symlink followed as far as the path exists
 * (the rest as written: the container's setup makes it), and each symlink met on the way.
 */
export async function resolveInView(path: string, mounts: ViewMount[] = []): Promise<{ path: string; links: string[] }> {
  let pending = path.split('/');
  let parts: string[] = [];
  const links: string[] = [];
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      parts.pop();
      continue;
    }
    const here = `/${[...parts, name].join('/')}`;
    const host = hostPathOf(here, mounts);
    // Each name looked at, even below one that does not exist: an earlier mount may be there.
    if (await lstat(host).then((s) => s.isSymbolicLink(), () => false)) {
      if (links.length >= MAX_LINKS) throw new ContainerConfigError(`${path}: too many levels of symbolic links`);
      links.push(here);
      const to = await readlink(host);
      if (to.startsWith('/')) parts = [];
      pending = [...to.split('/'), ...pending];
      continue;
    }
    parts.push(name);
  }
  return { path: `/${parts.join('/')}`, links };
}

/** Paths a command line names: a string with a slash, or a `--flag=` value with one (Traefik's --configFile=). */
function namedPaths(argv: string[], workingDir: string): string[] {
  return argv.flatMap((arg) => {
    const value = /^-[^=]*=(.*)$/.exec(arg)?.[1] ?? (arg.startsWith('-') ? '' : arg);
    if (!value.includes('/')) return [];
    return [isAbsolute(value) ? value : join(workingDir, value)];
  });
}

/** What `program` needs left as the host has it: the list above, each resolved with its symlinks. */
export async function protectedPaths(program: Program): Promise<Protected[]> {
  const node = node24();
  const home = program.env.HOME || '/root';
  const homes = isAbsolute(home) ? ['.node_modules', '.node_libraries'].map((name) => ({ path: join(home, name), what: "Node's global module folder ($HOME)" })) : [];
  const above = [];
  for (let dir = dirname(CHECKOUT); ; dir = dirname(dir)) {
    above.push({ path: join(dir, 'node_modules'), what: 'a node_modules directory above the checkout' });
    if (dir === '/') break;
  }
  const [binary] = program.argv;
  const programPath = binary && binary.includes('/') ? (isAbsolute(binary) ? binary : join(program.workingDir, binary)) : undefined;
  const listed: Protected[] = [
    { path: CHECKOUT, what: 'the checkout' },
    ...above,
    ...(programPath ? [{ path: programPath, what: "the container's program" }, { path: dirname(programPath), what: "the container's program's directory" }] : []),
    ...namedPaths(program.argv.slice(1, program.fixed), program.workingDir).map((path) => ({ path, what: "a file the image's command line names" })),
    ...(program.imageWorkingDir ? [{ path: program.imageWorkingDir, what: "the image's working directory" }] : []),
    { path: node, what: 'Node' },
    { path: dirname(node), what: "Node's directory" },
    { path: dirname(dirname(node)), what: "Node's install" },
    ...homes,
    ...(program.env.NODE_PATH ?? '').split(':').filter((p) => isAbsolute(p)).map((path) => ({ path, what: 'a NODE_PATH directory' })),
    ...SYSTEM_PATHS,
  ];
  const resolved = await Promise.all(
    listed.map(async ({ path, what }) => {
      const { path: real, links } = await resolveInView(normalize(path));
      // The program's realpath, and each symlink that leads to it (a mount over /etc/alternatives
      // changes where /usr/bin/node leads as much as one over the binary).
      return [{ path: real, what }, ...links.map((link) => ({ path: link, what: `${what} (a symlink to it)` }))];
    }),
  );
  // The root itself is never one: what it holds that matters is listed (a program at /tool must not
  // make every mount lie inside its "directory").
  return resolved.flat().filter((p) => p.path !== '/');
}

/** How `target` meets `path`, if it does: is, lies inside or contains it. */
function overlap(target: string, path: string): string | undefined {
  if (target === path) return 'is';
  if (path === '/' || target.startsWith(`${path}/`)) return 'lies inside';
  if (target === '/' || path.startsWith(`${target}/`)) return 'contains';
  return undefined;
}

/**
 * The container-view path where a volume may be mounted for `mountPath` (symlinks resolved, the
 * container's earlier mounts `before` included), or a ContainerConfigError naming the protected path
 * it meets.
 */
export async function mountTarget(mountPath: string, before: ViewMount[], protect: Protected[]): Promise<string> {
  if (mountPath.length > PATH_MAX) throw new ContainerConfigError(`mountPath ${mountPath.slice(0, 64)}…: longer than ${PATH_MAX} characters`);
  if (!isAbsolute(mountPath) || mountPath.split('/').includes('..')) {
    throw new ContainerConfigError(`mountPath ${mountPath}: must be an absolute path without '..'`);
  }
  const { path } = await resolveInView(mountPath, before);
  // The closest of the protected paths it meets names the refusal: the one it is, else lies inside, else contains.
  for (const how of ['is', 'lies inside', 'contains']) {
    const p = protect.find((p) => overlap(path, p.path) === how);
    if (!p) continue;
    const shown = path === mountPath ? mountPath : `${mountPath} (${path})`;
    throw new ContainerConfigError(
      `mountPath ${shown} ${how} ${p.what} ${p.path}: process-mode containers run as root on this host, where a volume there would change what they run`,
    );
  }
  return path;
}
