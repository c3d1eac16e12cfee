// NeoSet deployed on Knative Serving and Eventing as README "Deploy to Knative" tells users to: the
// reconcile and readiness functions (and the dead-letter sink) as the Knative Services of knative/,
// admission as its Deployment, knative/eventing.yaml's Broker, sources and Triggers calling the
// Knative Services. Two ways, both the README's:
//   - `kubectl apply -k knative/` (the default);
//   - with kn: the objects that are no Knative Service, then
//     `kn service apply -n neoset-system --filename knative/{reconcile,readiness}.yaml`, then
//     `kubectl apply -f knative/eventing.yaml`;
// then the admission certificate as `npm run admission:cert` issues it, and waited for: both
// functions' Knative Services Ready (their first revision's pod: the function beside Serving's
// queue-proxy), admission Available, the Broker, Triggers and sources Ready. The image
// (ghcr.io/neoset/neoset) is run from this checkout by the process-mode image table; Serving skips
// its tag resolution (serving.ts servingConfig: no registry answers here).
//
// The stack beneath: a serviceNetwork control plane with SERVING_CONTROLLERS, a process-mode kubelet
// with Serving's and Traefik's programs (and a process grace cap that lets queue-proxy drain:
// dev/knative-stack.ts), the services stack, Eventing (knative.ts), Serving (serving.ts) and Traefik
// (traefik.ts), which routes the cluster-local Knative Services of neoset-system.

import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { KNATIVE_DIR, kustomize, SYSTEM_NAMESPACE, type Manifest } from '../manifests.ts';
import { waitFor } from '../kubelet/wait-for.ts';
import type { ControlPlane } from './control-plane.ts';
import { applyUntilAccepted, KNATIVE_NAMESPACE, kubectl, webhookNotServing } from './knative.ts';
import { issueAdmissionCertificate, knativeObject, knativeObjectsReady } from './neoset-on-knative.ts';
import { runProcess } from './processes.ts';

/** The functions' Knative Services (knative/reconcile.yaml, readiness.yaml): what `kn` deploys. */
export const FUNCTION_SERVICES = ['neoset-reconcile', 'neoset-readiness'] as const;
const FUNCTION_FILES = FUNCTION_SERVICES.map((name) => join(KNATIVE_DIR, `${name.replace(/^neoset-/, '')}.yaml`));
const EVENTING_FILE = join(KNATIVE_DIR, 'eventing.yaml');

/** How the functions get deployed: `kubectl apply -k knative/`, or with `kn service apply`. */
export type ServingDeployer = 'kubectl' | 'kn';

export interface NeoSetOnServingOptions {
  /** Default 'kubectl'. */
  deployer?: ServingDeployer;
  /** The kn binary (resolveKn()); required with deployer 'kn'. */
  kn?: string;
  /** Everything Ready within this. Default 180 s. */
  timeoutMs?: number;
  /** prepareNeoSetOnServing ran: what needs no Knative is there and the admission certificate issued. Default false. */
  prepared?: boolean;
  /** deployFunctions ran (with the same deployer): the Knative Services are there. Default false. */
  functionsDeployed?: boolean;
  /** Wait for the PingSource Ready too (default true; see NeoSetOnKnativeOptions.waitPingSource). */
  waitPingSource?: boolean;
  log?: (line: string) => void;
}

export interface NeoSetOnServing {
  /** What `kubectl kustomize knative/` renders: what was deployed. */
  manifests: Manifest[];
  /** The Broker's ingress URL (status.address.url). */
  brokerURL: string;
  /**
   * The Knative Services' cluster-local URLs (status.address.url:
   * http://neoset-reconcile.neoset-system.svc.cluster.local): the cluster DNS makes each a CNAME to
   * Traefik's private Service, which routes by Host. The Broker ingress's ClusterIP, reachable from the host.
   */
  serviceURLs: { reconcile: string; readiness: string; deadLetter: string; brokerIngress: string };
}

/** The objects of knative/ (kustomize), as `kubectl apply -k knative/` applies them. */
export const servingManifests = (): Manifest[] => kustomize(KNATIVE_DIR);

/**
 * What of knative/ needs neither Knative webhook — the namespace, the CRD, RBAC, the policies, the
 * admission Deployment and webhooks, the network policies, the dashboard's ConfigMap — applied and
 * the admission certificate issued, so admission's pods start while Knative is still installing.
 * With kn this is the README's first step; with kubectl, `kubectl apply -k knative/` applies it all
 * again, unchanged.
 */
export async function prepareNeoSetOnServing(cp: ControlPlane, opts: Pick<NeoSetOnServingOptions, 'timeoutMs' | 'log'> = {}): Promise<void> {
  const log = opts.log ?? (() => {});
  await applyUntilAccepted(cp.kubeconfigPath, servingManifests().filter((m) => !knativeObject(m)), "knative/ but Knative's objects", opts.timeoutMs ?? 120_000, log);
  await issueAdmissionCertificate(cp, log);
}

/** Runs `command` until it succeeds, again while a Knative webhook it needs is not serving yet (as a user runs it again). */
async function untilAccepted(what: string, run: () => Promise<{ code: number; out: string }>, deadline: number, log: (line: string) => void): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const r = await run();
    if (r.code === 0) return log(`${what}${attempt > 1 ? ` (attempt ${attempt})` : ''}`);
    if (!webhookNotServing(r.out) || Date.now() > deadline) throw new Error(`${what} failed: ${r.out.trim().split('\n').slice(-5).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

/** `kn` against `kubeconfig`, never past this process (runProcess). */
async function kn(binary: string, kubeconfig: string, args: string[], timeoutMs: number): Promise<{ code: number; out: string }> {
  const r = await runProcess(binary, [...args, '--kubeconfig', kubeconfig], { timeoutMs });
  return { code: r.status ?? 1, out: `${r.stdout}${r.error?.message ?? r.stderr}` };
}

/**
 * The functions' Knative Services, for the dev stack to start their first revisions as soon as
 * Serving's webhook serves, while Eventing still installs (the Triggers then find their subscribers'
 * addresses at once). With kn, `kn service apply` of each function's manifest, side by side, each
 * waited for Ready by kn (its --wait default); with kubectl, the Knative Services of
 * `kubectl kustomize knative/` applied (`kubectl apply -k knative/` then leaves them unchanged).
 */
export async function deployFunctions(cp: ControlPlane, opts: Pick<NeoSetOnServingOptions, 'deployer' | 'kn' | 'timeoutMs' | 'log'> = {}): Promise<void> {
  const log = opts.log ?? (() => {});
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  if (opts.deployer !== 'kn') {
    const services = servingManifests().filter((m) => m.kind === 'Service' && m.apiVersion.startsWith('serving.knative.dev/'));
    return applyUntilAccepted(cp.kubeconfigPath, services, `knative/'s Knative Services (${services.map((m) => m.metadata.name).join(', ')})`, deadline - Date.now(), log);
  }
  const binary = opts.kn;
  if (!binary) throw new Error('deploying with kn needs the kn binary (resolveKn())');
  const seconds = () => Math.max(10, Math.round((deadline - Date.now()) / 1000));
  await Promise.all(
    FUNCTION_FILES.map((file) => {
      const args = ['service', 'apply', '-n', SYSTEM_NAMESPACE, '--filename', file, '--wait-timeout', String(seconds())];
      return untilAccepted(`kn ${args.slice(0, 6).join(' ')}`, () => kn(binary, cp.kubeconfigPath, args, seconds() * 1000 + 10_000), deadline, log);
    }),
  );
}

/**
 * Deploys knative/ on `cp` (the stack of the top of this file, Knative Serving, Eventing and Traefik
 * installed or installing) and resolves once NeoSet can roll out. Throws naming what is not Ready.
 * Re-running it re-applies and keeps the admission CA.
 */
export async function deployNeoSetOnServing(cp: ControlPlane, opts: NeoSetOnServingOptions = {}): Promise<NeoSetOnServing> {
  const started = Date.now();
  const log = (line: string) => opts.log?.(`${line} (${Date.now() - started} ms)`);
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  const left = () => Math.max(1000, deadline - Date.now());
  const manifests = servingManifests();
  if (!opts.prepared) await prepareNeoSetOnServing(cp, { timeoutMs: left(), log });

  if (opts.deployer === 'kn') {
    if (!opts.functionsDeployed) await deployFunctions(cp, { deployer: 'kn', kn: opts.kn, timeoutMs: left(), log });
    await untilAccepted(`kubectl apply -f ${EVENTING_FILE}`, () => kubectl(cp.kubeconfigPath, ['apply', '-f', EVENTING_FILE]), deadline, log);
  } else {
    await untilAccepted(`kubectl apply -k ${KNATIVE_DIR}`, () => kubectl(cp.kubeconfigPath, ['apply', '-k', KNATIVE_DIR]), deadline, log);
  }

  const apps = cp.kubeConfig().makeApiClient(AppsV1Api);
  const admission = waitFor(
    async () => {
      const d = await apps.readNamespacedDeployment({ namespace: SYSTEM_NAMESPACE, name: 'neoset-admission' });
      return d.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false;
    },
    { what: `neoset-admission Available in ${SYSTEM_NAMESPACE}`, timeoutMs: left(), intervalMs: 250 },
  );
  const [brokerURL] = await Promise.all([knativeObjectsReady(cp, manifests, { waitPingSource: opts.waitPingSource, timeoutMs: left(), log }), admission]);

  const custom = cp.kubeConfig().makeApiClient(CustomObjectsApi);
  const address = async (name: string) => ((await custom.getNamespacedCustomObject({ group: 'serving.knative.dev', version: 'v1', namespace: SYSTEM_NAMESPACE, plural: 'services', name })) as { status?: { address?: { url?: string } } }).status?.address?.url ?? '';
  const core = cp.kubeConfig().makeApiClient(CoreV1Api);
  const [reconcile, readiness, deadLetter, ingress] = await Promise.all([
    address('neoset-reconcile'),
    address('neoset-readiness'),
    address('neoset-dead-letter'),
    core.readNamespacedService({ namespace: KNATIVE_NAMESPACE, name: 'broker-ingress' }),
  ]);
  return { manifests, brokerURL, serviceURLs: { reconcile, readiness, deadLetter, brokerIngress: `http://${ingress.spec!.clusterIP}` } };
}
