// A pod's volumes as files in its own directory, made once when its sandbox is set up, and the bind
// mounts that put them where each container's volumeMounts say (done in the container's own mount
// namespace: see container.ts). Like kubelet: ConfigMap and Secret keys become files (items
// choose keys and paths), a projected volume merges its sources, a ServiceAccount token comes from
// the TokenRequest API bound to the pod, emptyDir is an empty directory. Unlike kubelet, hostPath is
// the host's path only under the directory the kubelet is given (hostPathRoot, the dev stack's own),
// symlinks resolved, and refused elsewhere (CreateContainerConfigError): these pods' processes run as
// root on the host's file system, and whoever may create a pod in the dev cluster is not thereby
// given the host's /etc or /root. For the same reason a mountPath where a volume would change what
// the container runs (the checkout, its program, Node, the system's libraries…) is refused, symlinks
// resolved in the container's view (mount-targets.ts), and a subPath must stay in its volume.
// Not done in this step: refreshing tokens (kubelet rewrites them at 80 % of their life; ours live
// expirationSeconds, default 1 h) and updating ConfigMap/Secret files after a change.

import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, normalize } from 'node:path';
import type { CoreV1Api, V1Container, V1KeyToPath, V1Pod, V1Volume } from '@kubernetes/client-node';
import { ContainerConfigError, podField, type ObjectSource } from './environment.ts';
import type { ImageEntry } from './image-table.ts';
import { mountTarget, programOf, protectedPaths } from './mount-targets.ts';

export interface Mount {
  source: string;
  target: string;
  readOnly: boolean;
}

/** A relative path inside a volume; `..` or an absolute path is refused (the API server refuses them too). */
function inside(root: string, path: string): string {
  const clean = normalize(path);
  if (clean.startsWith('/') || clean === '..' || clean.startsWith('../')) throw new ContainerConfigError(`path ${path} leaves its volume`);
  return join(root, clean);
}

async function writeKeys(root: string, data: Record<string, string>, items: V1KeyToPath[] | undefined, what: string, optional?: boolean): Promise<void> {
  const chosen: V1KeyToPath[] = items?.length ? items : Object.keys(data).map((key) => ({ key, path: key }));
  for (const item of chosen) {
    const value = data[item.key];
    if (value === undefined) {
      if (optional) continue;
      throw new ContainerConfigError(`configmap/secret ${what}: no key ${item.key}`);
    }
    const file = inside(root, item.path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, value, { mode: item.mode ?? 0o644 });
  }
}

async function objectData(source: ObjectSource, kind: 'configMap' | 'secret', namespace: string, name: string, optional?: boolean) {
  const data = await source[kind](namespace, name);
  if (!data && !optional) throw new ContainerConfigError(`${kind === 'configMap' ? 'configmap' : 'secret'} "${name}" not found`);
  return data ?? {};
}

/** `path` with every symlink resolved, as far as it exists (the rest as written: a mount of it fails). */
async function resolved(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(await resolved(parent), basename(path));
  }
}

/** A hostPath volume's path, resolved, when it lies under `allowed` (resolved too); else a ContainerConfigError. */
async function hostPathUnder(path: string, allowed: string | undefined): Promise<string> {
  if (!allowed) throw new ContainerConfigError(`hostPath ${path}: hostPath volumes are not run here (process-mode pods run as root on this host)`);
  const real = isAbsolute(path) ? await resolved(normalize(path)) : undefined;
  const root = await resolved(allowed);
  if (real === undefined || (real !== root && !real.startsWith(`${root}/`))) {
    throw new ContainerConfigError(`hostPath ${path} is outside ${allowed}: process-mode pods run as root on this host, and bind-mount host paths only from the dev stack's directory`);
  }
  return real;
}

/**
 * Writes the pod's volumes under `root` (one directory each); returns each volume's host path. A
 * hostPath is honoured only under `hostPathRoot` (none: no hostPath at all).
 */
export async function writeVolumes(pod: V1Pod, podIP: string, root: string, source: ObjectSource, core: CoreV1Api, hostPathRoot?: string): Promise<Map<string, string>> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const paths = new Map<string, string>();
  for (const volume of pod.spec?.volumes ?? []) {
    if (volume.hostPath) {
      paths.set(volume.name, await hostPathUnder(volume.hostPath.path, hostPathRoot));
      continue;
    }
    const dir = inside(root, volume.name);
    await mkdir(dir, { recursive: true });
    paths.set(volume.name, dir);
    await writeVolume(volume, dir, { pod, podIP, namespace, source, core });
  }
  return paths;
}

interface VolumeContext {
  pod: V1Pod;
  podIP: string;
  namespace: string;
  source: ObjectSource;
  core: CoreV1Api;
}

async function writeVolume(volume: V1Volume, dir: string, ctx: VolumeContext): Promise<void> {
  const { namespace, source } = ctx;
  if (volume.configMap) {
    const { name = '', items, optional } = volume.configMap;
    await writeKeys(dir, await objectData(source, 'configMap', namespace, name, optional), items, name, optional);
  } else if (volume.secret) {
    const { secretName = '', items, optional } = volume.secret;
    await writeKeys(dir, await objectData(source, 'secret', namespace, secretName, optional), items, secretName, optional);
  } else if (volume.downwardAPI) {
    await writeDownward(dir, volume.downwardAPI.items ?? [], ctx);
  } else if (volume.projected) {
    for (const s of volume.projected.sources ?? []) {
      if (s.configMap) await writeKeys(dir, await objectData(source, 'configMap', namespace, s.configMap.name ?? '', s.configMap.optional), s.configMap.items, s.configMap.name ?? '', s.configMap.optional);
      if (s.secret) await writeKeys(dir, await objectData(source, 'secret', namespace, s.secret.name ?? '', s.secret.optional), s.secret.items, s.secret.name ?? '', s.secret.optional);
      if (s.downwardAPI) await writeDownward(dir, s.downwardAPI.items ?? [], ctx);
      if (s.serviceAccountToken) {
        const token = await requestToken(ctx, s.serviceAccountToken.audience, s.serviceAccountToken.expirationSeconds);
        await writeFile(inside(dir, s.serviceAccountToken.path), token, { mode: 0o600 });
      }
    }
  }
  // emptyDir: the directory itself. Other volume types have nothing on this machine to come from.
}

async function writeDownward(dir: string, items: { path: string; fieldRef?: { fieldPath: string } }[], ctx: VolumeContext): Promise<void> {
  for (const item of items) {
    if (!item.fieldRef) continue;
    const file = inside(dir, item.path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, podField(ctx.pod, item.fieldRef.fieldPath, ctx.podIP));
  }
}

/** A token of the pod's ServiceAccount bound to the pod, as kubelet's token manager asks for it. */
async function requestToken({ pod, namespace, core }: VolumeContext, audience: string | undefined, expirationSeconds: number | undefined): Promise<string> {
  const serviceAccount = pod.spec?.serviceAccountName || 'default';
  const answer = await core.createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: {
      spec: {
        audiences: audience ? [audience] : [],
        expirationSeconds: expirationSeconds ?? 3607,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata!.name!, uid: pod.metadata!.uid! },
      },
    },
  });
  const token = answer.status?.token;
  if (!token) throw new ContainerConfigError(`no token for serviceaccount ${namespace}/${serviceAccount}`);
  return token;
}

/** A subPath's host path: inside its volume as written and with its symlinks followed (kubelet's safe subpath, CVE-2017-1002101). */
async function subPathOf(root: string, subPath: string, volume: string): Promise<string> {
  const [path, top] = await Promise.all([resolved(inside(root, subPath)), resolved(root)]);
  if (path !== top && !path.startsWith(`${top}/`)) throw new ContainerConfigError(`subPath ${subPath} leaves volume ${volume} (it leads to ${path})`);
  return path;
}

/**
 * The container's volumeMounts as bind mounts, in order: a subPath inside its volume, each mountPath
 * resolved in the container's view and refused where a volume would change what the container runs
 * (mount-targets.ts: the checkout, its program, Node, the system's programs and libraries, …).
 */
export async function mountsOf(container: V1Container, volumes: Map<string, string>, image: ImageEntry, line: { argv: string[]; env: Record<string, string>; workingDir: string }): Promise<Mount[]> {
  const protect = await protectedPaths(programOf(container, image, line));
  const mounts: Mount[] = [];
  for (const m of container.volumeMounts ?? []) {
    const root = volumes.get(m.name);
    if (root === undefined) continue;
    const source = m.subPath ? await subPathOf(root, m.subPath, m.name) : root;
    mounts.push({ source, target: await mountTarget(m.mountPath, mounts, protect), readOnly: m.readOnly ?? false });
  }
  return mounts;
}
