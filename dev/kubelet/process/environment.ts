// A container's environment and command line as kubelet makes them (kubelet_pods.go
// makeEnvironmentVariables, kubecontainer.ExpandContainerCommandAndArgs): envFrom first, then env in
// order, each value expanded with $(VAR) against the variables defined before it; valueFrom resolved
// from the pod (fieldRef, resourceFieldRef) and from ConfigMaps and Secrets read from the API server.
// A missing non-optional ConfigMap or Secret (or key) is CreateContainerConfigError, as in kubelet.

import type { V1Container, V1Pod } from '@kubernetes/client-node';
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

/** Variables that make a program load other code than its own: refused for a fixedCommand image. */
const LOADS_CODE = ['NODE_OPTIONS', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT'];

/**
 * Refuses, for an image that runs only its own program (image-table.ts fixedCommand), a pod's
 * `command` (and its `args` when fixedArgs), a variable in LOADS_CODE, and a $(VAR) of the entrypoint
 * whose value is more than a name (`functions/$(NEOSET_FUNCTION)/server.ts` must not become a path of
 * the pod's choosing).
 */
function checkFixedCommand(container: V1Container, image: RunEntry, env: Record<string, string>): void {
  const refuse = (what: string) => {
    throw new ContainerConfigError(`${container.image}: ${what}: this image runs its own program only (process-mode pods run as root on this host)`);
  };
  if (container.command?.length) refuse('a command is not run');
  if (image.fixedArgs && container.args?.length) refuse('args are not passed');
  const loads = LOADS_CODE.find((name) => (container.env ?? []).some((e) => e.name === name) || Object.hasOwn(env, name) && !Object.hasOwn(image.env, name));
  if (loads) refuse(`${loads} is not honoured`);
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
  const env: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: '/root',
    HOSTNAME: hostname,
    ...image.env,
    ...specEnv,
  };
  if (image.fixedCommand) checkFixedCommand(container, image, env);
  const expandAll = (list: string[]) => list.map((s) => expand(s, env));
  const argv = container.command?.length
    ? [...expandAll(container.command), ...expandAll(container.args ?? [])]
    : [...expandAll(image.entrypoint), ...(container.args ? expandAll(container.args) : expandAll(image.cmd))];
  if (argv[0] === 'node') argv[0] = node24();
  return { argv, env, workingDir: container.workingDir || image.workingDir || '/' };
}
