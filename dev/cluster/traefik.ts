// Traefik as Knative Serving's KIngress implementation on the dev stack: a process-mode pod running
// our build (build-traefik.sh, resolveTraefik) through the image table's neoset.local/traefik entry,
// whose one flag names the static configuration dev/cluster/traefik.yaml. Installed as Traefik's
// Knative docs say (docs/content/reference/install-configuration/providers/kubernetes/knative.md):
// the RBAC of kubernetes-knative-rbac.yml, here bound only in the namespaces the provider watches,
// and a Deployment with the two Services its KIngress statuses name — the public one and the private
// one, to which Serving points every cluster-local route (an ExternalName Service, port 80).
// Cluster infrastructure, not NeoSet's product: nothing here is under knative/.

import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parse } from 'yaml';
import type { Manifest } from '../manifests.ts';
import type { ControlPlane } from './control-plane.ts';
import { applyUntilAccepted, deploymentsAvailable } from './knative.ts';

export const TRAEFIK_VERSION = '3.7.13';
/** The image the table runs as Traefik (any tag): image-table.ts. */
export const TRAEFIK_IMAGE = `neoset.local/traefik:v${TRAEFIK_VERSION}`;
/** config-network's ingress-class for KIngresses Traefik takes (the provider's traefikIngressClassName). */
export const TRAEFIK_INGRESS_CLASS = 'traefik.ingress.networking.knative.dev';
export const TRAEFIK_STATIC_CONFIG = new URL('./traefik.yaml', import.meta.url).pathname;

const serviceRef = z.object({ name: z.string().min(1), namespace: z.string().min(1) });
const staticConfig = z.object({
  entryPoints: z.record(z.string(), z.object({ address: z.string().regex(/^:\d+$/) })),
  ping: z.object({ entryPoint: z.string() }),
  providers: z.object({
    knative: z.object({
      namespaces: z.array(z.string().min(1)).min(1),
      publicEntrypoints: z.array(z.string()).length(1),
      privateEntrypoints: z.array(z.string()).length(1),
      publicService: serviceRef,
      privateService: serviceRef,
    }),
  }),
});

export interface TraefikLayout {
  namespace: string;
  /** The namespaces whose KIngresses it routes (and whose Services and Secrets it reads). */
  watched: string[];
  publicService: string;
  privateService: string;
  /** Container ports of the public and private entrypoints and of ping. */
  ports: { public: number; private: number; ping: number };
}

/** What traefik.yaml says of where Traefik runs and listens (the manifests must agree with it). */
export function traefikLayout(path = TRAEFIK_STATIC_CONFIG): TraefikLayout {
  const config = staticConfig.parse(parse(readFileSync(path, 'utf8')));
  const knative = config.providers.knative;
  if (knative.publicService.namespace !== knative.privateService.namespace) throw new Error(`${path}: the public and private Services must share Traefik's namespace`);
  const port = (entryPoint: string) => {
    const address = config.entryPoints[entryPoint]?.address;
    if (!address) throw new Error(`${path}: no entrypoint ${entryPoint}`);
    return Number(address.slice(1));
  };
  return {
    namespace: knative.publicService.namespace,
    watched: knative.namespaces,
    publicService: knative.publicService.name,
    privateService: knative.privateService.name,
    ports: { public: port(knative.publicEntrypoints[0]), private: port(knative.privateEntrypoints[0]), ping: port(config.ping.entryPoint) },
  };
}

/** The programs the image table's Traefik entry names ({program:traefik}): resolveTraefik's binary. */
export const traefikPrograms = (binary: string): Record<string, string> => ({ traefik: binary });

const labels = { 'app.kubernetes.io/name': 'traefik', 'app.kubernetes.io/component': 'knative-ingress' };

/** Traefik's namespace, ServiceAccount, RBAC, Deployment and Services, as traefik.yaml lays them out. */
export function traefikManifests(layout = traefikLayout()): Manifest[] {
  const { namespace } = layout;
  const service = (name: string, targetPort: string): Manifest => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels },
    spec: { selector: { app: 'traefik' }, ports: [{ name: 'http', port: 80, targetPort }] },
  });
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels } },
    // The watched namespaces must exist for their RoleBindings (NeoSet's manifests apply theirs later, unchanged).
    ...layout.watched.map((name): Manifest => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'traefik', namespace, labels } },
    {
      // kubernetes-knative-rbac.yml's ClusterRole, as the module's docs give it.
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'traefik-knative-networking', labels },
      rules: [
        { apiGroups: [''], resources: ['services', 'secrets'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['networking.internal.knative.dev'], resources: ['ingresses'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['networking.internal.knative.dev'], resources: ['ingresses/status'], verbs: ['update'] },
      ],
    },
    // Bound per watched namespace, not cluster-wide as the docs' ClusterRoleBinding: it reads Secrets.
    ...layout.watched.map(
      (watched): Manifest => ({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'traefik-knative-networking', namespace: watched, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'traefik-knative-networking' },
        subjects: [{ kind: 'ServiceAccount', name: 'traefik', namespace }],
      }),
    ),
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'traefik', namespace, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'traefik' } },
        template: {
          metadata: { labels: { app: 'traefik', ...labels } },
          spec: {
            serviceAccountName: 'traefik',
            terminationGracePeriodSeconds: 10,
            containers: [
              {
                name: 'traefik',
                image: TRAEFIK_IMAGE,
                ports: [
                  { name: 'web', containerPort: layout.ports.public },
                  { name: 'private', containerPort: layout.ports.private },
                  { name: 'ping', containerPort: layout.ports.ping },
                ],
                readinessProbe: { httpGet: { path: '/ping', port: 'ping' }, periodSeconds: 1, failureThreshold: 3 },
                livenessProbe: { httpGet: { path: '/ping', port: 'ping' }, periodSeconds: 10, failureThreshold: 3 },
                resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '256Mi' } },
              },
            ],
          },
        },
      },
    },
    service(layout.publicService, 'web'),
    service(layout.privateService, 'private'),
  ];
}

export interface TraefikInstallOptions {
  /** Applied and its Deployment Available within this. Default 120 s. */
  timeoutMs?: number;
  log?: (line: string) => void;
}

/**
 * Runs Traefik on `cp` (a process-mode kubelet given traefikPrograms(resolveTraefik()), the services
 * stack): its objects applied, resolved once its Deployment is Available (/ping answering).
 */
export async function installTraefik(cp: ControlPlane, opts: TraefikInstallOptions = {}): Promise<void> {
  const log = opts.log ?? (() => {});
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  const layout = traefikLayout();
  await applyUntilAccepted(cp.kubeconfigPath, traefikManifests(layout), 'traefik', deadline - Date.now(), log);
  await deploymentsAvailable(cp, ['traefik'], Math.max(1000, deadline - Date.now()), layout.namespace);
  log(`Traefik v${TRAEFIK_VERSION} Available in ${layout.namespace} (KIngresses of ${layout.watched.join(', ')})`);
}
