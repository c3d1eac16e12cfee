// Knative Eventing installed as a user installs a release: its own manifests (config/core, the
// in-memory channel, the MT channel-based broker, out of the knative.dev/eventing module that
// build-knative.sh built the components from) applied in the release's order — the CRDs, then the
// core, then the channel, then the broker — each re-applied while the Knative webhook it needs is not
// serving yet, as a user re-runs `kubectl apply`. Beneath it: a process-mode kubelet given
// knativeImageTable (its pods run the built binaries) and the services stack (services.ts).
//
// What `ko resolve` does at release time is done here as text: every ko://knative.dev/eventing/cmd/X
// becomes the image neoset.local/knative-eventing/X:v<version>, which knativeImageTable maps to the
// binary X. Nothing else of the manifests is changed. One thing is added: the ConfigMaps
// eventing-integrations-images and eventing-transformations-images, which the controller's env
// names (configMapKeyRef, not optional) and which the release assembles from outside config/core;
// their images (IntegrationSource/Sink, EventTransform) are not built here, so those features stay
// unavailable.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, type V1Deployment } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { toYaml, type Manifest } from '../manifests.ts';
import type { ImageTableEntry } from '../kubelet/process/image-table.ts';
import { waitFor } from '../kubelet/wait-for.ts';
import { KNATIVE_EVENTING_COMMANDS } from './binaries.ts';
import { runProcess } from './processes.ts';
import { WORKLOAD_CONTROLLERS, type ControlPlane } from './control-plane.ts';

export const KNATIVE_EVENTING_VERSION = '0.50.0';
export const KNATIVE_NAMESPACE = 'knative-eventing';
const IMAGE_REPO = 'neoset.local/knative-eventing';
const KO_REFERENCE = /ko:\/\/knative\.dev\/eventing\/cmd\/([a-z0-9_]+(?:\/[a-z0-9_]+)*)/g;

/**
 * The kube-controller-manager loops Knative needs besides the control plane's own (its
 * extraControllers): Deployments and ReplicaSets; request-reply is a StatefulSet; and RBAC's
 * aggregated ClusterRoles (Knative grants its controllers the channel and source kinds by
 * aggregationRule labels, e.g. the IMC's channelable-manipulator, which only the
 * clusterrole-aggregation loop fills in).
 */
export const KNATIVE_CONTROLLERS = [...WORKLOAD_CONTROLLERS, 'statefulset-controller', 'clusterrole-aggregation-controller'];

/** The image a ko:// reference of cmd `cmd` resolves to (what the image table maps to its binary). */
export const knativeImage = (cmd: string, version = KNATIVE_EVENTING_VERSION) => `${IMAGE_REPO}/${cmd}:v${version}`;

/**
 * Image-table entries running each component's image as its binary in `dir` (resolveKnativeEventing).
 * fixedArgs: Knative's commands take --kubeconfig (knative.dev/pkg's sharedmain), and a pod that named
 * this host's admin kubeconfig would run as the cluster's admin; the release passes no args to any.
 */
export function knativeImageTable(dir: string): ImageTableEntry[] {
  return KNATIVE_EVENTING_COMMANDS.map((cmd) => ({ image: `${IMAGE_REPO}/${cmd}:*`, entrypoint: [join(dir, cmd.split('/').at(-1)!)], fixedCommand: true, fixedArgs: true }));
}

/** The .yaml files under `dir` in ko's order (a lexical walk, directories where they sort), as one release file. */
function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return yamlFiles(path);
      return /\.ya?ml$/.test(name) ? [path] : [];
    });
}

/** How a release's ko:// references become images: the reference's pattern (cmd captured) and the image of a cmd. */
export interface KoResolution {
  reference: RegExp;
  image: (cmd: string) => string;
}

/** The objects of the manifests under `dir`, ko:// references resolved to our images (Eventing's unless `ko` says otherwise). */
export function releaseManifests(dir: string, version = KNATIVE_EVENTING_VERSION, ko: KoResolution = { reference: KO_REFERENCE, image: (cmd) => knativeImage(cmd, version) }): Manifest[] {
  return yamlFiles(dir).flatMap((file) => {
    const text = readFileSync(file, 'utf8').replace(ko.reference, (_match, cmd: string) => ko.image(cmd));
    return parseAllDocuments(text)
      .map((doc) => doc.toJS() as Manifest | null)
      .filter((m): m is Manifest => m !== null && typeof m === 'object' && typeof m.kind === 'string');
  });
}

/** The ConfigMaps the controller's env names that config/core lacks (see the top of this file). */
function missingImageConfigMaps(version: string): Manifest[] {
  const configMap = (name: string, keys: string[]): Manifest => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: KNATIVE_NAMESPACE, labels: { 'app.kubernetes.io/name': 'knative-eventing', 'app.kubernetes.io/version': version } },
    data: Object.fromEntries(keys.map((key) => [key, `${IMAGE_REPO}/not-built/${key}:v${version}`])),
  });
  return [
    configMap('eventing-integrations-images', ['timer-source', 'aws-s3-source', 'aws-sqs-source', 'aws-ddb-streams-source', 'log-sink', 'aws-s3-sink', 'aws-sqs-sink', 'aws-sns-sink']),
    configMap('eventing-transformations-images', ['transform-jsonata']),
  ];
}

/** The release in its install order: CRDs, core, in-memory channel, MT channel-based broker. */
export function knativeEventingRelease(dir: string, version = KNATIVE_EVENTING_VERSION): { what: string; manifests: Manifest[] }[] {
  const config = join(dir, 'config');
  return [
    { what: 'eventing-crds', manifests: releaseManifests(join(config, 'core', 'resources'), version) },
    { what: 'eventing-core', manifests: [...releaseManifests(join(config, 'core'), version), ...missingImageConfigMaps(version)] },
    { what: 'in-memory-channel', manifests: releaseManifests(join(config, 'channels', 'in-memory-channel'), version) },
    { what: 'mt-channel-broker', manifests: releaseManifests(join(config, 'brokers', 'mt-channel-broker'), version) },
  ];
}

/** kubectl against `kubeconfig` (at most 60 s, and never past this process: runProcess); never rejects: `out` is stdout then stderr. */
export async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string; out: string }> {
  const r = await runProcess('kubectl', ['--kubeconfig', kubeconfig, ...args], { input, timeoutMs: 60_000 });
  const stderr = r.error?.message ?? r.stderr;
  return { code: r.status ?? 1, stdout: r.stdout, stderr, out: `${r.stdout}${stderr}` };
}

/** An apply refused because a webhook (Knative's own, not serving yet) could not be called: worth applying again. */
export const webhookNotServing = (out: string) => /failed calling webhook|no endpoints available|connection refused|context deadline exceeded|x509/.test(out);

export async function applyUntilAccepted(kubeconfig: string, manifests: Manifest[], what: string, timeoutMs: number, log: (line: string) => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    const r = await kubectl(kubeconfig, ['apply', '-f', '-'], toYaml(manifests));
    if (r.code === 0) return log(`applied ${what} (${manifests.length} objects${attempt > 1 ? `, attempt ${attempt}` : ''})`);
    if (!webhookNotServing(r.out) || Date.now() > deadline) throw new Error(`kubectl apply of ${what} failed: ${r.out.trim().split('\n').slice(-5).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

const available = (d: V1Deployment) => (d.spec?.replicas ?? 1) === 0 || d.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');

/** Resolves once the Deployments `names` (every one when undefined) of `namespace` are Available. */
export async function deploymentsAvailable(cp: ControlPlane, names: string[] | undefined, timeoutMs: number, namespace = KNATIVE_NAMESPACE): Promise<void> {
  const apps = cp.kubeConfig().makeApiClient(AppsV1Api);
  let waiting: string[] = [];
  await waitFor(
    async () => {
      const all = (await apps.listNamespacedDeployment({ namespace })).items.filter((d) => !names || names.includes(d.metadata!.name!));
      waiting = all.filter((d) => !available(d)).map((d) => d.metadata!.name!);
      return all.length >= (names?.length ?? 1) && waiting.length === 0;
    },
    { what: `Deployments Available in ${namespace}`, timeoutMs, intervalMs: 250 },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; not Available: ${waiting.join(', ') || 'none listed'}`, { cause: err });
  });
}

export interface InstallOptions {
  /** resolveKnativeEventing's directory (binaries and config/). */
  dir: string;
  version?: string;
  /** The whole install within this. Default 180 s. */
  timeoutMs?: number;
  /**
   * Wait, at the end, for every Deployment of knative-eventing to be Available (default true). False
   * returns once the release is applied (the webhook serving): the controllers work before their
   * readiness probes' 20 s initial delay has passed, so a caller that waits for what it needs of them
   * (a Broker or a Trigger Ready) need not wait for that too (the dev stack's ready line, issue 21).
   */
  waitAvailable?: boolean;
  /**
   * Apply the four parts of the release in one `kubectl apply` (as `kubectl apply -f` of all four
   * files), then wait for the webhook, instead of part by part with the webhook waited for before the
   * channel and the broker (default false). Safe: no part holds an object of Knative's own kinds,
   * which only the serving webhook may take, and the one webhook that sees the rest (config
   * validation, of knative-eventing's ConfigMaps) is failurePolicy Ignore. The workloads go last, so
   * no pod starts before the ConfigMaps and Secrets it names exist. Saves the dev stack ~3 s.
   */
  together?: boolean;
  log?: (line: string) => void;
}

const WORKLOADS = ['Deployment', 'StatefulSet'];

/** The parts as one apply: each object once (core repeats the CRDs), the workloads last. */
function asOneApply(parts: { manifests: Manifest[] }[]): Manifest[] {
  const seen = new Set<string>();
  const all = parts.flatMap((p) => p.manifests).filter((m) => {
    const key = `${m.apiVersion}/${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`;
    return !seen.has(key) && seen.add(key);
  });
  return [...all.filter((m) => !WORKLOADS.includes(m.kind)), ...all.filter((m) => WORKLOADS.includes(m.kind))];
}

/**
 * Installs Knative Eventing on `cp` (a serviceNetwork control plane started with KNATIVE_CONTROLLERS,
 * a process-mode kubelet given knativeImageTable(dir), and the services stack): the release applied in order, waiting as its
 * install docs say — the webhook serving before the channel and the broker are applied, and every
 * Deployment of knative-eventing Available at the end.
 */
export async function installKnativeEventing(cp: ControlPlane, opts: InstallOptions): Promise<void> {
  const log = opts.log ?? (() => {});
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  const left = () => Math.max(1000, deadline - Date.now());
  const parts = knativeEventingRelease(opts.dir, opts.version);
  if (opts.together) {
    await applyUntilAccepted(cp.kubeconfigPath, asOneApply(parts), 'the release (eventing-crds, eventing-core, in-memory-channel, mt-channel-broker)', left(), log);
    await deploymentsAvailable(cp, ['eventing-webhook'], left());
    log('eventing-webhook Available');
  } else await installPartByPart(cp, parts, left, log);
  if (opts.waitAvailable === false) return log(`Knative Eventing v${opts.version ?? KNATIVE_EVENTING_VERSION} applied (the webhook serving)`);
  await deploymentsAvailable(cp, undefined, left());
  log(`Knative Eventing v${opts.version ?? KNATIVE_EVENTING_VERSION}: every Deployment of ${KNATIVE_NAMESPACE} Available`);
}

async function installPartByPart(cp: ControlPlane, [crds, core, channel, broker]: { what: string; manifests: Manifest[] }[], left: () => number, log: (line: string) => void): Promise<void> {
  await applyUntilAccepted(cp.kubeconfigPath, crds.manifests, crds.what, left(), log);
  const established = await kubectl(cp.kubeconfigPath, ['wait', '--for=condition=Established', '--timeout=60s', ...crds.manifests.map((m) => `crd/${m.metadata.name}`)]);
  if (established.code !== 0) throw new Error(`Knative's CRDs not Established: ${established.out}`);
  await applyUntilAccepted(cp.kubeconfigPath, core.manifests, core.what, left(), log);
  await deploymentsAvailable(cp, ['eventing-webhook'], left());
  log('eventing-webhook Available');
  // The channel and the broker need only the core (and its webhook), not each other.
  await Promise.all([channel, broker].map((part) => applyUntilAccepted(cp.kubeconfigPath, part.manifests, part.what, left(), log)));
}
