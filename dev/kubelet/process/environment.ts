// A container's environment and command line as kubelet makes them (kubelet_pods.go
// makeEnvironmentVariables, kubecontainer.ExpandContainerCommandAndArgs): envFrom first, then env in
// order, each value expanded with $(VAR) against the variables defined before it; valueFrom resolved
// from the pod (fieldRef, resourceFieldRef) and from ConfigMaps and Secrets read from the API server.
// A missing non-optional ConfigMap or Secret (or key) is CreateContainerConfigError, as in kubelet.

import { normalize } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { SYSTEM_PATH } from './host-tools.ts';
import type { ImageEntry } from './image-table.ts';
import { node24 } from './image-table.ts';

/** What the environment reads from the API server: undefined when the object does not exist. */
export interface ObjectSource {
  configMap(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /** The Secret's data, decoded. */
  secret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
}

/** A container that cannot start yet: its waiting reason and message, as kubelet reports them. */
export class ContainerConfigError extends Error {
  readonly reason = 'CreateContainerConfigError';
}

/** `$(VAR)` replaced by VAR's value when defined, `$$(VAR)` kept as `$(VAR)`, anything else left as written. */
export function expand(input: string, vars: Record<string, string>): string {
  return input.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (name === undefined) return '$';
    return Object.hasOwn(vars, name) ? vars[name] : match;
  });
}

/** A downward-API field of the pod (fieldRef.fieldPath), as kubelet's podFieldSelectorRuntimeValue. */
export function podField(pod: V1Pod, fieldPath: string, podIP: string): string {
  const meta = pod.metadata ?? {};
  const selected = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (selected) return (selected[1] === 'labels' ? meta.labels : meta.annotations)?.[selected[2]] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'metadata.labels':
    case 'metadata.annotations':
      return Object.entries((fieldPath === 'metadata.labels' ? meta.labels : meta.annotations) ?? {})
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .sort()
        .join('\n');
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? 'default';
    case 'status.hostIP':
    case 'status.hostIPs':
      return pod.status?.hostIP ?? '';
    case 'status.podIP':
    case 'status.podIPs':
      return podIP;
    default:
      throw new ContainerConfigError(`unsupported fieldPath: ${fieldPath}`);
  }
}

async function keyOf(
  source: ObjectSource,
  kind: 'configMap' | 'secret',
  namespace: string,
  ref: { name?: string; key: string; optional?: boolean },
): Promise<string | undefined> {
  const data = await source[kind](namespace, ref.name ?? '');
  const value = data?.[ref.key];
  if (value === undefined && !ref.optional) {
    const what = kind === 'configMap' ? 'configmap' : 'secret';
    throw new ContainerConfigError(data ? `couldn't find key ${ref.key} in ${what} ${namespace}/${ref.name}` : `${what} "${ref.name}" not found`);
  }
  return value;
}

/**
 * The spec's environment of `container` (what the process sees on top of the image's env), with the
 * Service variables (service-env.ts) under it: `$(VAR)` may name them, a container's own VAR wins.
 */
export async function containerEnv(
  pod: V1Pod,
  container: V1Container,
  podIP: string,
  source: ObjectSource,
  serviceVars: Record<string, string> = {},
): Promise<Record<string, string>> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const vars: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const kind = from.configMapRef ? 'configMap' : 'secret';
    const data = await source[kind](namespace, ref.name ?? '');
    if (!data && !ref.optional) throw new ContainerConfigError(`${kind === 'configMap' ? 'configmap' : 'secret'} "${ref.name}" not found`);
    for (const [k, v] of Object.entries(data ?? {})) vars[`${from.prefix ?? ''}${k}`] = v;
  }
  for (const env of container.env ?? []) {
    const from = env.valueFrom;
    let value: string | undefined;
    if (!from) value = expand(env.value ?? '', { ...serviceVars, ...vars });
    else if (from.fieldRef) value = podField(pod, from.fieldRef.fieldPath, podIP);
    else if (from.configMapKeyRef) value = await keyOf(source, 'configMap', namespace, from.configMapKeyRef);
    else if (from.secretKeyRef) value = await keyOf(source, 'secret', namespace, from.secretKeyRef);
    else if (from.resourceFieldRef) value = resourceField(container, from.resourceFieldRef.resource);
    if (value !== undefined) vars[env.name] = value;
  }
  return { ...serviceVars, ...vars };
}

/** limits.cpu / requests.memory …, in kubelet's default divisor (cpu in whole cores rounded up, memory in bytes). */
function resourceField(container: V1Container, resource: string): string {
  const [list, name] = resource.split('.');
  const raw = (list === 'limits' ? container.resources?.limits : container.resources?.requests)?.[name];
  if (raw === undefined) return name === 'cpu' ? '0' : '0';
  const q = String(raw);
  if (name === 'cpu') return String(Math.ceil(q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q)));
  const units: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  const unit = /([KMGT]i?|k)$/.exec(q)?.[1];
  return String(unit ? Number(q.slice(0, -unit.length)) * units[unit] : Number(q));
}

/** An image table entry as commandLine reads it (fixedCommand: false when absent). */
type RunEntry = Omit<ImageEntry, 'fixedCommand'> & { fixedCommand?: boolean };

/**
 * glibc's own list of the variables it drops for a privileged program (sysdeps/generic/unsecvars.h,
 * UNSECURE_ENVVARS, 2.36; LD_PROFILE_OUTPUT from later releases): each chooses code the loader or libc
 * loads (LD_PRELOAD, LD_AUDIT, GCONV_PATH's iconv modules…), files they read (LOCPATH, TZDIR,
 * HOSTALIASES…) or write (LD_DEBUG_OUTPUT, MALLOC_TRACE). A process-mode program runs as root without
 * being privileged in glibc's sense (no setuid), so glibc honours them: the kubelet refuses them.
 */
const GLIBC_UNSECURE = [
  'GCONV_PATH', 'GETCONF_DIR', 'GLIBC_TUNABLES', 'HOSTALIASES', 'LD_AUDIT', 'LD_DEBUG', 'LD_DEBUG_OUTPUT', 'LD_DYNAMIC_WEAK',
  'LD_HWCAP_MASK', 'LD_LIBRARY_PATH', 'LD_ORIGIN_PATH', 'LD_PRELOAD', 'LD_PROFILE', 'LD_PROFILE_OUTPUT', 'LD_SHOW_AUXV',
  'LD_USE_LOAD_BIAS', 'LOCALDOMAIN', 'LOCPATH', 'MALLOC_TRACE', 'NIS_PATH', 'NLSPATH', 'RESOLV_HOST_CONF', 'RES_OPTIONS',
  'TMPDIR', 'TZDIR',
];

/**
 * Variables a fixedCommand image's program is not given by a pod, and why: each makes the program (as
 * root, on the host's file system) load code other than its own, look for it or for its credentials
 * in a place of the pod's choosing, read a host file the pod names, or write where the pod says. A
 * value equal to the image's (or the kubelet's default) is no change and is let through. Not in the
 * list, and the pod's as in any container: PATH (the kubelet's own programs never use it:
 * host-tools.ts), TZ, LANG and LC_*, NODE_ENV, proxies, GODEBUG.
 */
const NOT_HONOURED: Record<string, string> = {
  ...Object.fromEntries(GLIBC_UNSECURE.map((name) => [name, 'glibc ignores it for privileged programs: it chooses code or files the loader and libc load, read or write'])),
  NODE_OPTIONS: 'Node takes options from it (--import, --require: code to load)',
  NODE_PATH: 'Node looks for modules in its directories',
  NODE_PRESERVE_SYMLINKS: 'it changes where Node resolves modules from',
  NODE_COMPILE_CACHE: 'Node loads compiled code from that directory, and writes there',
  NODE_ICU_DATA: 'Node loads that data file',
  NODE_EXTRA_CA_CERTS: 'Node reads that host file, and trusts what it holds',
  NODE_REPL_EXTERNAL_MODULE: 'Node loads that module',
  NODE_V8_COVERAGE: 'Node writes into that directory',
  NODE_REDIRECT_WARNINGS: 'Node writes to that file',
  OPENSSL_CONF: 'OpenSSL reads that file, which can load engines and providers (shared objects)',
  OPENSSL_CONF_INCLUDE: 'OpenSSL reads configuration files from there',
  OPENSSL_MODULES: 'OpenSSL loads providers from that directory',
  OPENSSL_ENGINES: 'OpenSSL loads engines from that directory',
  SSL_CERT_FILE: 'the program reads that host file, and trusts what it holds',
  SSL_CERT_DIR: 'the program reads that host directory, and trusts what it holds',
  ZONEINFO: "Go's time package reads that host file",
  GOCOVERDIR: 'a Go program built for coverage writes into that directory',
  KUBECONFIG: "the Kubernetes clients (client-node, client-go) read it, and run the command a user's exec credential plugin names",
  HOME: 'Node loads modules from $HOME/.node_modules and $HOME/.node_libraries; the Kubernetes clients read $HOME/.kube/config',
};

/** The environment every container starts from, under the image's and the pod's (commandLine). */
const KUBELET_ENV = { PATH: SYSTEM_PATH, HOME: '/root' };

const PROBES = ['readinessProbe', 'livenessProbe', 'startupProbe'] as const;
const HOOKS = ['postStart', 'preStop'] as const;

/**
 * Refuses, for an image that runs only its own program (image-table.ts fixedCommand), what would make
 * it run another or load other code: a pod's `command` (and its `args` when fixedArgs); an exec
 * probe or exec lifecycle hook (a command run as root in the container's namespaces); a workingDir
 * other than the image's (NeoSet's entrypoint names `functions/<name>/server.ts` relative to it); a
 * variable of NOT_HONOURED set by the pod (`given`: its env, envFrom and Service variables) to other
 * than the image's value; a $(VAR) of the entrypoint whose value is more than a name
 * (`functions/$(NEOSET_FUNCTION)/server.ts` must not become a path of the pod's choosing).
 */
function checkFixedCommand(container: V1Container, image: RunEntry, env: Record<string, string>, given: Record<string, string>): void {
  const refuse = (what: string) => {
    throw new ContainerConfigError(`${container.image}: ${what}: this image runs its own program only (process-mode pods run as root on this host)`);
  };
  if (container.command?.length) refuse('a command is not run');
  if (image.fixedArgs && container.args?.length) refuse('args are not passed');
  for (const probe of PROBES) if (container[probe]?.exec) refuse(`an exec ${probe} is not run`);
  for (const hook of HOOKS) if (container.lifecycle?.[hook]?.exec) refuse(`an exec ${hook} hook is not run`);
  const imageDir = image.workingDir ?? '/';
  if (container.workingDir && normalize(container.workingDir).replace(/(.)\/$/, '$1') !== imageDir) {
    refuse(`workingDir ${container.workingDir.slice(0, 256)} is not the image's (${imageDir})`);
  }
  const defaults: Record<string, string> = { ...KUBELET_ENV, ...image.env };
  for (const name of Object.keys(NOT_HONOURED)) {
    if (Object.hasOwn(given, name) && given[name] !== defaults[name]) refuse(`${name} is not honoured (${NOT_HONOURED[name]})`);
  }
  for (const part of [...image.entrypoint, ...image.cmd]) {
    for (const [, name] of part.matchAll(/\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g)) {
      if (Object.hasOwn(env, name) && !/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(env[name])) refuse(`${name}=${JSON.stringify(env[name].slice(0, 64))} is not a name`);
    }
  }
}

/**
 * The process's argv and env: the spec's command replaces the image's entrypoint (and then its cmd
 * too), the spec's args replace the image's cmd; both expanded with the container's env. `node` as
 * the program is this repository's Node 24 (the image table's images are run from the checkout).
 * An image that runs only its own program refuses what would change it (checkFixedCommand).
 */
export function commandLine(container: V1Container, image: RunEntry, specEnv: Record<string, string>, hostname: string) {
  const env: Record<string, string> = { ...KUBELET_ENV, HOSTNAME: hostname, ...image.env, ...specEnv };
  if (image.fixedCommand) checkFixedCommand(container, image, env, specEnv);
  const expandAll = (list: string[]) => list.map((s) => expand(s, env));
  const argv = container.command?.length
    ? [...expandAll(container.command), ...expandAll(container.args ?? [])]
    : [...expandAll(image.entrypoint), ...(container.args ? expandAll(container.args) : expandAll(image.cmd))];
  if (argv[0] === 'node') argv[0] = node24();
  return { argv, env, workingDir: container.workingDir || image.workingDir || '/' };
}
