// Finds etcd, kube-apiserver and kube-controller-manager for the test control plane.
// Precedence per binary: TEST_ASSET_* (controller-runtime envtest's variables), then the
// KUBEBUILDER_ASSETS directory (envtest's layout; it ships no kube-controller-manager), then our own
// build (build-binaries.sh), which is run only when something is still missing.
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';

export interface Binaries {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
}

const BUILD_SCRIPT = new URL('./build-binaries.sh', import.meta.url).pathname;

const FILES: Record<keyof Binaries, { file: string; env: string }> = {
  etcd: { file: 'etcd', env: 'TEST_ASSET_ETCD' },
  kubeApiserver: { file: 'kube-apiserver', env: 'TEST_ASSET_KUBE_APISERVER' },
  kubeControllerManager: { file: 'kube-controller-manager', env: 'TEST_ASSET_KUBE_CONTROLLER_MANAGER' },
};

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where a binary comes from without building: its TEST_ASSET_* variable, else KUBEBUILDER_ASSETS. */
function fromEnvironment({ file, env: variable }: { file: string; env: string }, env: NodeJS.ProcessEnv): string | undefined {
  const explicit = env[variable];
  if (explicit) {
    if (!isExecutable(explicit)) throw new Error(`${variable}=${explicit} is not an executable file`);
    return explicit;
  }
  const assets = env.KUBEBUILDER_ASSETS;
  if (assets && isExecutable(join(assets, file))) return join(assets, file);
  return undefined;
}

/** Runs build-binaries.sh (a no-op when the cache is complete) and returns the directory it prints. */
export function buildBinaries(): Promise<string> {
  return runBuildScript(BUILD_SCRIPT);
}

/** Runs one of the build scripts (a no-op when its cache is complete): the directory it prints last. */
function runBuildScript(script: string, args: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    // stderr goes straight to ours: a first build takes many minutes and must show progress.
    const child = spawn('bash', [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const dir = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && dir) resolve(dir);
      else reject(new Error(`${script} exited with ${code}${dir ? `: ${dir}` : ''}`));
    });
  });
}

export async function resolveBinaries(
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = (line) => console.error(line),
): Promise<Binaries> {
  const keys = Object.keys(FILES) as (keyof Binaries)[];
  const found = Object.fromEntries(keys.map((key) => [key, fromEnvironment(FILES[key], env)]));
  const missing = keys.filter((key) => !found[key]);
  if (missing.length > 0) {
    if (env.KUBEBUILDER_ASSETS) {
      log(`KUBEBUILDER_ASSETS lacks ${missing.map((key) => FILES[key].file).join(', ')}: using build-binaries.sh for it`);
    }
    const dir = await buildBinaries();
    for (const key of missing) found[key] = join(dir, FILES[key].file);
  }
  return found as unknown as Binaries;
}

const CNI_BUILD_SCRIPT = new URL('./build-cni.sh', import.meta.url).pathname;
/** The CNI plugins the process-mode kubelet invokes (dev/kubelet/process/cni.ts). */
export const CNI_PLUGINS = ['bridge', 'host-local', 'loopback'] as const;

/**
 * The directory of the CNI plugins: NEOSET_CNI_PATH when set (a prebuilt directory such as
 * /opt/cni/bin: it must hold every plugin), else our cached build from the Go module proxy
 * (build-cni.sh, run only when something is missing).
 */
export async function resolveCniPlugins(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const explicit = env.NEOSET_CNI_PATH;
  if (explicit) {
    const missing = CNI_PLUGINS.filter((plugin) => !isExecutable(join(explicit, plugin)));
    if (missing.length > 0) throw new Error(`NEOSET_CNI_PATH=${explicit} lacks ${missing.join(', ')}`);
    return explicit;
  }
  return runBuildScript(CNI_BUILD_SCRIPT);
}

/**
 * kube-proxy for the services stack (services.ts): TEST_ASSET_KUBE_PROXY, else KUBEBUILDER_ASSETS'
 * kube-proxy when it has one, else our build beside the control plane's (build-binaries.sh
 * kube-proxy, which builds only what is missing). Not part of resolveBinaries: the control plane
 * alone never needs it.
 */
export async function resolveKubeProxy(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return fromEnvironment({ file: 'kube-proxy', env: 'TEST_ASSET_KUBE_PROXY' }, env) ?? join(await runBuildScript(BUILD_SCRIPT, ['kube-proxy']), 'kube-proxy');
}

const COREDNS_BUILD_SCRIPT = new URL('./build-coredns.sh', import.meta.url).pathname;

/** The cluster DNS's binary: NEOSET_COREDNS when set, else our cached build (build-coredns.sh, run only when missing). */
export function resolveCoreDns(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return programFrom('NEOSET_COREDNS', COREDNS_BUILD_SCRIPT, 'coredns', env);
}

/** One program: the executable its variable names when set, else `file` in the directory its build script prints. */
async function programFrom(variable: string, script: string, file: string, env: NodeJS.ProcessEnv): Promise<string> {
  const explicit = env[variable];
  if (explicit) {
    if (!isExecutable(explicit)) throw new Error(`${variable}=${explicit} is not an executable file`);
    return explicit;
  }
  return join(await runBuildScript(script), file);
}

const KNATIVE_BUILD_SCRIPT = new URL('./build-knative.sh', import.meta.url).pathname;
/** Knative Eventing's components build-knative.sh builds (each binary named after its cmd/ package's last element). */
export const KNATIVE_EVENTING_COMMANDS = [
  'controller',
  'webhook',
  'jobsink',
  'requestreply',
  'auth_proxy',
  'mtping',
  'apiserver_receive_adapter',
  'mtchannel_broker',
  'broker/ingress',
  'broker/filter',
  'in_memory/channel_controller',
  'in_memory/channel_dispatcher',
] as const;
/** The release manifests' directories, under config/ of the build (as in the module). */
export const KNATIVE_EVENTING_CONFIG = ['core', 'channels/in-memory-channel', 'brokers/mt-channel-broker'] as const;

/**
 * Knative Eventing's directory (dev/cluster/knative.ts installs from it): its components' binaries
 * and the release manifests in config/. NEOSET_KNATIVE_EVENTING when set (a prebuilt directory laid
 * out as build-knative.sh's: it must hold every component and config/), else our cached build from
 * the Go module proxy (build-knative.sh, run only when something is missing).
 */
export function resolveKnativeEventing(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const binaries = KNATIVE_EVENTING_COMMANDS.map((cmd) => cmd.split('/').at(-1)!);
  return releaseFrom('NEOSET_KNATIVE_EVENTING', KNATIVE_BUILD_SCRIPT, { binaries, config: KNATIVE_EVENTING_CONFIG }, env);
}

/**
 * A release's directory laid out as its build script's: the directory its variable names when set
 * (it must hold every binary and config/ directory), else the one the build script prints.
 */
async function releaseFrom(
  variable: string,
  script: string,
  layout: { binaries: readonly string[]; config: readonly string[] },
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const explicit = env[variable];
  if (!explicit) return runBuildScript(script);
  const missing = [
    ...layout.binaries.filter((bin) => !isExecutable(join(explicit, bin))),
    ...layout.config.map((dir) => `config/${dir}`).filter((dir) => !isDirectory(join(explicit, dir))),
  ];
  if (missing.length > 0) throw new Error(`${variable}=${explicit} lacks ${missing.join(', ')}`);
  return explicit;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

const SERVING_BUILD_SCRIPT = new URL('./build-serving.sh', import.meta.url).pathname;
/** Knative Serving's components build-serving.sh builds (each binary named after its cmd/ package; queue is the queue-proxy). */
export const KNATIVE_SERVING_COMMANDS = ['controller', 'activator', 'autoscaler', 'webhook', 'queue'] as const;
/** The release manifests' directories, under config/ of the build (as in the module). */
export const KNATIVE_SERVING_CONFIG = ['core'] as const;

/**
 * Knative Serving's directory: its components' binaries and the release manifests in config/core.
 * NEOSET_KNATIVE_SERVING when set (a prebuilt directory laid out as build-serving.sh's: it must hold
 * every component and config/core), else our cached build from the Go module proxy
 * (build-serving.sh, run only when something is missing).
 */
export function resolveKnativeServing(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return releaseFrom('NEOSET_KNATIVE_SERVING', SERVING_BUILD_SCRIPT, { binaries: KNATIVE_SERVING_COMMANDS, config: KNATIVE_SERVING_CONFIG }, env);
}

const TRAEFIK_BUILD_SCRIPT = new URL('./build-traefik.sh', import.meta.url).pathname;
/** Traefik, Serving's KIngress implementation here (its Knative provider): NEOSET_TRAEFIK when set, else our cached build (build-traefik.sh). */
export function resolveTraefik(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return programFrom('NEOSET_TRAEFIK', TRAEFIK_BUILD_SCRIPT, 'traefik', env);
}

const KN_BUILD_SCRIPT = new URL('./build-kn.sh', import.meta.url).pathname;
/** Knative's CLI: NEOSET_KN when set, else our cached build (build-kn.sh: knative.dev/client v0.42.0, see its header). */
export function resolveKn(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return programFrom('NEOSET_KN', KN_BUILD_SCRIPT, 'kn', env);
}
