// Knative Serving installed as a user installs a release: its own manifests (config/core of the
// knative.dev/serving module build-serving.sh built the components from, with the six files the
// module zip lacks put back) applied in the release's order — the CRDs (serving-crds.yaml), then the
// core (serving-core.yaml) — re-applied while Serving's webhook is not serving yet, as knative.ts does
// for Eventing. Beneath it: a process-mode kubelet given servingPrograms(dir) (the image table's
// neoset.local/knative-serving/* entries run the built binaries), the services stack (services.ts),
// and Traefik as the KIngress implementation (traefik.ts).
//
// `ko resolve` is done as text: ko://knative.dev/serving/cmd/X becomes
// neoset.local/knative-serving/X:v<version> (Eventing's are neoset.local/knative-eventing/…: both
// releases have a controller and a webhook). Besides that, keys are set in four of the release's
// ConfigMaps before they are applied — what a user does with `kubectl patch` after installing, here
// done first so that no component starts with Istio's ingress class (servingConfig below).

import { join } from 'node:path';
import type { Manifest } from '../manifests.ts';
import { KNATIVE_SERVING_COMMANDS } from './binaries.ts';
import type { ControlPlane } from './control-plane.ts';
import { applyUntilAccepted, deploymentsAvailable, KNATIVE_CONTROLLERS, kubectl, releaseManifests } from './knative.ts';
import { TRAEFIK_INGRESS_CLASS } from './traefik.ts';

export const KNATIVE_SERVING_VERSION = '0.50.0';
export const SERVING_NAMESPACE = 'knative-serving';
const IMAGE_REPO = 'neoset.local/knative-serving';
const KO_REFERENCE = /ko:\/\/knative\.dev\/serving\/cmd\/([a-z0-9_]+)/g;

/**
 * The kube-controller-manager loops Serving needs (its control plane's extraControllers), a superset
 * of KNATIVE_CONTROLLERS so that one list serves a stack with Eventing too: Deployments and
 * ReplicaSets (every component and every revision), the clusterrole-aggregation loop (the controller's
 * knative-serving-admin ClusterRole is aggregated), endpoints-controller (the activator and the SKS
 * reconciler watch v1 Endpoints of revisions' private Services) and endpointslice-mirroring-controller
 * (the SKS writes the Endpoints of each revision's public Service, which has no selector; kube-proxy
 * reads EndpointSlices).
 */
export const SERVING_CONTROLLERS = [...KNATIVE_CONTROLLERS, 'endpoints-controller', 'endpointslice-mirroring-controller'];

/** The image a ko://knative.dev/serving/cmd/<cmd> reference resolves to (image-table.ts runs it). */
export const servingImage = (cmd: string, version = KNATIVE_SERVING_VERSION) => `${IMAGE_REPO}/${cmd}:v${version}`;

/** The programs the image table's Serving entries name ({program:knative-serving-<cmd>}): the binaries in `dir` (resolveKnativeServing). */
export function servingPrograms(dir: string): Record<string, string> {
  return Object.fromEntries(KNATIVE_SERVING_COMMANDS.map((cmd) => [`knative-serving-${cmd}`, join(dir, cmd)]));
}

/**
 * config-autoscaler keys for tests that wait for scale to zero: the stable window at its minimum
 * (6 s, autoscaling.WindowMin; default 60 s) and the grace period for the activator to be put in the
 * path before the last pod goes (default 30 s; must be positive). An idle revision then reaches 0
 * pods in about 15 s instead of 90 s. Never for `npm run dev`: a function would start cold far more often.
 */
export const SHORT_AUTOSCALER_WINDOWS: Record<string, string> = { 'stable-window': '6s', 'scale-to-zero-grace-period': '6s' };

export interface ServingConfigOptions {
  /** config-domain's domain for external routes. Default `neoset.example` (RFC 2606: never resolves outside). */
  domain?: string;
  /** Registries whose image tags are not resolved to digests. Default: Serving's (kind.local, ko.local, dev.local), neoset.local, ghcr.io. */
  registriesSkippingTagResolving?: string[];
  /** Keys added to config-autoscaler, e.g. SHORT_AUTOSCALER_WINDOWS. Default none. */
  autoscaler?: Record<string, string>;
}

/**
 * The keys set in the release's ConfigMaps, by ConfigMap:
 * - config-network `ingress-class`: Traefik's class (the default is Istio's, which nothing here serves);
 * - config-domain: one domain, for routes that are not cluster-local (NeoSet's are);
 * - config-deployment `registries-skipping-tag-resolving`: the controller resolves every other image
 *   tag to a digest from its registry, which no registry here can answer — the revision would fail;
 *   neoset.local (the stack's images) and ghcr.io (NeoSet's image) are run from the image table;
 * - config-autoscaler: `opts.autoscaler` (SHORT_AUTOSCALER_WINDOWS in tests).
 */
export function servingConfig(opts: ServingConfigOptions = {}): Record<string, Record<string, string>> {
  const registries = opts.registriesSkippingTagResolving ?? ['kind.local', 'ko.local', 'dev.local', 'neoset.local', 'ghcr.io'];
  return {
    'config-network': { 'ingress-class': TRAEFIK_INGRESS_CLASS },
    'config-domain': { [opts.domain ?? 'neoset.example']: '' },
    'config-deployment': { 'registries-skipping-tag-resolving': registries.join(',') },
    'config-autoscaler': opts.autoscaler ?? {},
  };
}

/** `manifests` with `config`'s keys added to the data of the ConfigMaps of knative-serving it names (each must be there). */
function withConfig(manifests: Manifest[], config: Record<string, Record<string, string>>): Manifest[] {
  const configMaps = manifests.filter((m) => m.kind === 'ConfigMap' && m.metadata.namespace === SERVING_NAMESPACE);
  const missing = Object.keys(config).filter((name) => !configMaps.some((m) => m.metadata.name === name));
  if (missing.length > 0) throw new Error(`Serving's config/core lacks the ConfigMaps ${missing.join(', ')}`);
  return manifests.map((m) => (configMaps.includes(m) && config[m.metadata.name] ? { ...m, data: { ...(m.data as Record<string, string>), ...config[m.metadata.name] } } : m));
}

/** The release in its install order: the CRDs (serving-crds.yaml), then the core (serving-core.yaml, which repeats them) with servingConfig's keys. */
export function knativeServingRelease(dir: string, opts: ServingConfigOptions & { version?: string } = {}): { what: string; manifests: Manifest[] }[] {
  const version = opts.version ?? KNATIVE_SERVING_VERSION;
  const ko = { reference: KO_REFERENCE, image: (cmd: string) => servingImage(cmd, version) };
  const core = releaseManifests(join(dir, 'config', 'core'), version, ko);
  // serving-crds.yaml: 300-resources/ and caching's Image (300-imagecache.yaml, 999-cache.yaml's kind).
  return [
    { what: 'serving-crds', manifests: core.filter((m) => m.kind === 'CustomResourceDefinition') },
    { what: 'serving-core', manifests: withConfig(core, servingConfig(opts)) },
  ];
}

export interface ServingInstallOptions extends ServingConfigOptions {
  /** resolveKnativeServing's directory (binaries and config/core). */
  dir: string;
  version?: string;
  /** The whole install within this. Default 240 s. */
  timeoutMs?: number;
  /** Wait, at the end, for every Deployment of knative-serving to be Available (default true); false returns once the webhook serves. */
  waitAvailable?: boolean;
  log?: (line: string) => void;
}

/**
 * Installs Knative Serving on `cp` (a serviceNetwork control plane started with SERVING_CONTROLLERS,
 * a process-mode kubelet given servingPrograms(dir), the services stack; Traefik, installTraefik, for
 * routes to work): the CRDs, Established, then the core until Serving's webhook accepts it, then the
 * webhook Available and — unless waitAvailable is false — the controller, activator and autoscaler
 * too (the activator is Ready once its stats websocket to the autoscaler is up, through the cluster DNS).
 */
export async function installKnativeServing(cp: ControlPlane, opts: ServingInstallOptions): Promise<void> {
  const log = opts.log ?? (() => {});
  const deadline = Date.now() + (opts.timeoutMs ?? 240_000);
  const left = () => Math.max(1000, deadline - Date.now());
  const [crds, core] = knativeServingRelease(opts.dir, opts);
  await applyUntilAccepted(cp.kubeconfigPath, crds.manifests, crds.what, left(), log);
  const established = await kubectl(cp.kubeconfigPath, ['wait', '--for=condition=Established', '--timeout=60s', ...crds.manifests.map((m) => `crd/${m.metadata.name}`)]);
  if (established.code !== 0) throw new Error(`Knative Serving's CRDs not Established: ${established.out}`);
  await applyUntilAccepted(cp.kubeconfigPath, core.manifests, core.what, left(), log);
  await deploymentsAvailable(cp, ['webhook'], left(), SERVING_NAMESPACE);
  log('Serving webhook Available');
  if (opts.waitAvailable === false) return;
  await deploymentsAvailable(cp, undefined, left(), SERVING_NAMESPACE);
  log(`Knative Serving v${opts.version ?? KNATIVE_SERVING_VERSION}: every Deployment of ${SERVING_NAMESPACE} Available`);
}
