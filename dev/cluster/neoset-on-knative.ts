// NeoSet deployed on the real Knative Eventing as a user deploys it without Knative Serving:
// knative/eventing-only/ (and its oidc component when asked) rendered by kustomize and applied, the
// admission certificate made as `npm run admission:cert` makes it, then waited for — the functions'
// pods Ready behind their Services, the Broker, Triggers, ApiServerSources and PingSource Ready. The
// stack beneath is the one test/integration/knative-eventing.test.ts brings up: a serviceNetwork
// control plane (KNATIVE_CONTROLLERS), a process-mode kubelet whose image table has
// knativeImageTable(dir) and neosetOnKnativeImageTable() (NeoSet's own image is in the default
// table: its functions run from this checkout), startServices, installKnativeEventing.
//
// The API server calls the admission webhook by its Service (clientConfig.service): with
// --enable-aggregator-routing it connects to the Service's endpoint, the admission pod's IP.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { rotate } from '../../scripts/admission-cert.ts';
import { KNATIVE_DIR, SYSTEM_NAMESPACE, type Manifest } from '../manifests.ts';
import type { ImageTableEntry } from '../kubelet/process/image-table.ts';
import { waitFor } from '../kubelet/wait-for.ts';
import type { ControlPlane } from './control-plane.ts';
import { applyUntilAccepted, KNATIVE_NAMESPACE, kubectl } from './knative.ts';

export const EVENTING_ONLY_DIR = join(KNATIVE_DIR, 'eventing-only');
const OIDC_COMPONENT_DIR = join(EVENTING_ONLY_DIR, 'oidc');

/** The audiences knative/eventing-only/oidc/ gives the Triggers' subscribers (and the functions' NEOSET_OIDC_AUDIENCE). */
export const OIDC_AUDIENCES = { reconcile: 'neoset-reconcile', readiness: 'neoset-readiness' } as const;

/**
 * Image-table entries for what knative/eventing-only/ runs besides NeoSet's image (which the default
 * table has): the dead-letter sink's event_display, not built here, is stood in for by the event
 * receiver (it keeps what it is sent: GET /events on its pod IP), on the same port.
 */
export function neosetOnKnativeImageTable(): ImageTableEntry[] {
  return [
    {
      image: 'gcr.io/knative-releases/knative.dev/eventing/cmd/event_display*',
      entrypoint: ['{node}', '{checkout}/test/fixtures/process-pods/event-receiver.ts'],
      env: { PORT: '8080' },
      fixedCommand: true,
    },
  ];
}

/**
 * The objects of knative/eventing-only/ (kustomize with LoadRestrictionsNone: it reads knative/'s
 * files, see its kustomization.yaml), with the oidc component when `oidc`. For a component, kustomize
 * wants an overlay naming it by a relative path: a throwaway one in the temp directory.
 */
export function eventingOnlyManifests(opts: { oidc?: boolean } = {}): Manifest[] {
  let dir = EVENTING_ONLY_DIR;
  let overlay: string | undefined;
  if (opts.oidc) {
    overlay = mkdtempSync(join(tmpdir(), 'neoset-eventing-only-'));
    const rel = (to: string) => relative(overlay!, to);
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [${rel(EVENTING_ONLY_DIR)}]\ncomponents: [${rel(OIDC_COMPONENT_DIR)}]\n`,
    );
    dir = overlay;
  }
  try {
    const r = spawnSync('kubectl', ['kustomize', '--load-restrictor=LoadRestrictionsNone', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${r.stderr || r.error?.message}`);
    return parseAllDocuments(r.stdout).map((d) => d.toJS() as Manifest);
  } finally {
    if (overlay) rmSync(overlay, { recursive: true, force: true });
  }
}

export interface NeoSetOnKnativeOptions {
  /**
   * Knative's OIDC end to end: Eventing's `authentication-oidc` feature enabled (config-features, as
   * README "Checking Knative's OIDC tokens" says), the oidc component (audiences on the Triggers,
   * NEOSET_OIDC=required on the functions, the EventPolicy on the Broker). Default false.
   */
  oidc?: boolean;
  /** Everything Ready within this. Default 120 s. */
  timeoutMs?: number;
  /**
   * prepareNeoSetOnKnative ran (with the same `oidc`): only Knative's objects are applied, the
   * admission certificate is not issued again. Default false.
   */
  prepared?: boolean;
  /**
   * Wait for the PingSource Ready too (default true). Its adapter's readiness probe has a 20 s
   * initialDelaySeconds, and its tick comes each minute anyway: the dev stack's ready line (issue 21:
   * within 30 s) does not wait on it.
   */
  waitPingSource?: boolean;
  log?: (line: string) => void;
}

export interface NeoSetOnKnative {
  /** What was applied. */
  manifests: Manifest[];
  /** The Broker's ingress URL (status.address.url: broker-ingress.knative-eventing.svc.cluster.local/neoset-system/neoset). */
  brokerURL: string;
  /** ClusterIP base URLs of the functions' Services, reachable from the host and from every pod. */
  serviceURLs: { reconcile: string; readiness: string; deadLetter: string; brokerIngress: string };
}

/** The Knative kinds NeoSet's manifests hold that have a Ready condition (a Knative Service on the Serving layout). */
const KNATIVE_OBJECTS = [
  { group: 'eventing.knative.dev', plural: 'brokers', kind: 'Broker' },
  { group: 'eventing.knative.dev', plural: 'triggers', kind: 'Trigger' },
  { group: 'sources.knative.dev', plural: 'apiserversources', kind: 'ApiServerSource' },
  { group: 'sources.knative.dev', plural: 'pingsources', kind: 'PingSource' },
  { group: 'eventing.knative.dev', plural: 'eventpolicies', kind: 'EventPolicy', version: 'v1alpha1' },
  { group: 'serving.knative.dev', plural: 'services', kind: 'Service' },
];

/** An object of Knative's kinds (Broker, Trigger, sources, EventPolicy, Knative Service): only Knative's webhooks, once serving, take it. */
export const knativeObject = (m: Manifest) => /(^|\.)knative\.dev\//.test(m.apiVersion);

/** scripts/admission-cert.ts's rotate(), as `npm run admission:cert` runs it: the TLS Secret and the webhooks' caBundle. */
export async function issueAdmissionCertificate(cp: ControlPlane, log: (line: string) => void): Promise<void> {
  await rotate({ kubectl: (args, input) => kubectl(cp.kubeconfigPath, args, input) });
  log('admission certificate issued, caBundle set');
}

type Conditioned = { metadata?: { name?: string }; status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[]; address?: { url?: string } } };

/**
 * Resolves, with the Broker's address, once every Knative object of `manifests` in neoset-system
 * (Broker, Triggers, sources, EventPolicy, Knative Services; the PingSource unless waitPingSource is
 * false) reads Ready; throws naming those that do not, with their Ready condition.
 */
export async function knativeObjectsReady(cp: ControlPlane, manifests: Manifest[], opts: { waitPingSource?: boolean; timeoutMs: number; log: (line: string) => void }): Promise<string> {
  const custom = cp.kubeConfig().makeApiClient(CustomObjectsApi);
  const waited = KNATIVE_OBJECTS.filter((o) => o.kind !== 'PingSource' || opts.waitPingSource !== false);
  const expected = waited.flatMap((o) => manifests.filter((m) => m.kind === o.kind && m.apiVersion.startsWith(`${o.group}/`)).map((m) => ({ ...o, name: m.metadata.name })));
  let notReady: string[] = [];
  let brokerURL = '';
  await waitFor(
    async () => {
      notReady = [];
      for (const o of expected) {
        const obj = (await custom.getNamespacedCustomObject({ group: o.group, version: o.version ?? 'v1', namespace: SYSTEM_NAMESPACE, plural: o.plural, name: o.name })) as Conditioned;
        const ready = obj.status?.conditions?.find((c) => c.type === 'Ready');
        if (ready?.status !== 'True') notReady.push(`${o.kind}/${o.name} (${ready ? `${ready.reason ?? ''} ${ready.message ?? ''}`.trim() : 'no Ready condition'})`);
        if (o.kind === 'Broker') brokerURL = obj.status?.address?.url ?? '';
      }
      return notReady.length === 0;
    },
    { what: `NeoSet's Knative objects Ready in ${SYSTEM_NAMESPACE}`, timeoutMs: opts.timeoutMs, intervalMs: 500 },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; not Ready: ${notReady.join('; ')}`, { cause: err });
  });
  opts.log(`NeoSet on Knative: ${expected.map((o) => `${o.kind}/${o.name}`).join(', ')} Ready`);
  return brokerURL;
}

/**
 * What of knative/eventing-only/ needs no Knative — the namespace, the CRD, RBAC, the functions'
 * Deployments and Services, the admission webhooks — applied, and the admission certificate issued,
 * so the functions' pods start while Knative is still installing (the dev stack, dev/knative-stack.ts).
 * Then deployNeoSetOnKnative with `prepared` applies Knative's objects and waits.
 */
export async function prepareNeoSetOnKnative(cp: ControlPlane, opts: Pick<NeoSetOnKnativeOptions, 'oidc' | 'timeoutMs' | 'log'> = {}): Promise<void> {
  const log = opts.log ?? (() => {});
  const manifests = eventingOnlyManifests({ oidc: opts.oidc }).filter((m) => !knativeObject(m));
  await applyUntilAccepted(cp.kubeconfigPath, manifests, "knative/eventing-only but Knative's objects", opts.timeoutMs ?? 120_000, log);
  await issueAdmissionCertificate(cp, log);
}

/**
 * Deploys knative/eventing-only/ on `cp` (a stack brought up as the top of this file says, Knative
 * installed) and resolves once NeoSet can roll out: its functions' Deployments Available, the admission
 * webhook serving (its TLS Secret and caBundle made by scripts/admission-cert.ts rotate()), and every
 * Broker, Trigger, source (and EventPolicy) of neoset-system Ready. Throws naming what is not, with
 * its conditions. Re-running it re-applies (kubectl apply) and keeps the admission CA.
 */
export async function deployNeoSetOnKnative(cp: ControlPlane, opts: NeoSetOnKnativeOptions = {}): Promise<NeoSetOnKnative> {
  const started = Date.now();
  const log = (line: string) => opts.log?.(`${line} (${Date.now() - started} ms)`);
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  const left = () => Math.max(1000, deadline - Date.now());
  if (opts.oidc) {
    // Before NeoSet's objects exist, so Knative creates the Triggers' and sources' OIDC identities
    // from their first reconcile on.
    const patch = await kubectl(cp.kubeconfigPath, ['-n', KNATIVE_NAMESPACE, 'patch', 'configmap', 'config-features', '--type=merge', '-p', '{"data":{"authentication-oidc":"enabled"}}']);
    if (patch.code !== 0) throw new Error(`enabling Knative's authentication-oidc failed: ${patch.out.trim()}`);
    log('Knative Eventing: authentication-oidc enabled');
  }
  const manifests = eventingOnlyManifests({ oidc: opts.oidc });
  // The CRD first (a NeoSet may be applied right after), then the rest; Knative's webhook judges the
  // Broker, sources and Triggers, so an apply refused while it is not serving yet is tried again.
  let certified: Promise<void> = Promise.resolve();
  if (opts.prepared) await applyUntilAccepted(cp.kubeconfigPath, manifests.filter(knativeObject), "knative/eventing-only: Knative's objects", left(), log);
  else {
    await applyUntilAccepted(cp.kubeconfigPath, manifests, 'knative/eventing-only', left(), log);
    // While Knative's objects come up (admission's pods wait for its Secret; nothing else does).
    certified = issueAdmissionCertificate(cp, log);
  }

  // The functions' pods and Knative's objects (the sources' adapters are pods too) come up at once: waited together.
  const apps = cp.kubeConfig().makeApiClient(AppsV1Api);
  const deployments = manifests.filter((m) => m.kind === 'Deployment').map((m) => m.metadata.name);
  let waiting: string[] = deployments;
  const functionsAvailable = waitFor(
    async () => {
      const items = (await apps.listNamespacedDeployment({ namespace: SYSTEM_NAMESPACE })).items;
      waiting = deployments.filter((name) => {
        const d = items.find((i) => i.metadata?.name === name);
        return !d || d.status?.observedGeneration !== d.metadata?.generation || !d.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') || (d.status?.updatedReplicas ?? 0) < (d.spec?.replicas ?? 1);
      });
      return waiting.length === 0;
    },
    { what: `NeoSet's Deployments Available in ${SYSTEM_NAMESPACE}`, timeoutMs: left(), intervalMs: 250 },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; not Available: ${waiting.join(', ')}`, { cause: err });
  }).then(() => log(`NeoSet's functions Available (${deployments.join(', ')})`));

  let brokerURL = '';
  const knativeReady = knativeObjectsReady(cp, manifests, { waitPingSource: opts.waitPingSource, timeoutMs: left(), log }).then((url) => void (brokerURL = url));
  await Promise.all([certified, functionsAvailable, knativeReady]);

  const core = cp.kubeConfig().makeApiClient(CoreV1Api);
  const clusterIP = async (namespace: string, name: string) => `http://${(await core.readNamespacedService({ namespace, name })).spec!.clusterIP}`;
  const [reconcile, readiness, deadLetter, brokerIngress] = await Promise.all([
    clusterIP(SYSTEM_NAMESPACE, 'neoset-reconcile'),
    clusterIP(SYSTEM_NAMESPACE, 'neoset-readiness'),
    clusterIP(SYSTEM_NAMESPACE, 'neoset-dead-letter'),
    clusterIP(KNATIVE_NAMESPACE, 'broker-ingress'),
  ]);
  return { manifests, brokerURL, serviceURLs: { reconcile, readiness, deadLetter, brokerIngress } };
}
