// The knative/ manifests against a real API server (issue #5): the real Knative CRDs are installed
// (test/fixtures/knative-crds, unchanged from the Knative projects), then every manifest goes through
// `kubectl apply --dry-run=server -k knative/`, so a schema mistake fails here rather than in a
// user's deploy. The ServiceAccounts and their RBAC are applied for real and each one's permissions
// are compared with `kubectl auth can-i --list` against the list its function's code needs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/cluster/crd.ts';
import { poll } from '../../dev/cluster/wait.ts';
import { rotate } from '../../scripts/admission-cert.ts';
import { createTestNamespace, kubeConfig, kubectl } from '../cluster/harness.ts';

const KNATIVE_DIR = new URL('../../knative/', import.meta.url).pathname;
const FIXTURES = new URL('../fixtures/knative-crds/', import.meta.url).pathname;
const OPERATOR_FIXTURES = new URL('../fixtures/prometheus-operator-crds/', import.meta.url).pathname;
/** For the Prometheus Operator, applied on their own (not in kustomization.yaml: they need its CRDs). */
const MONITORING = ['podmonitor.yaml', 'prometheus-rules.yaml'].map((f) => join(KNATIVE_DIR, f));
const NAMESPACE = 'neoset-system';

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: any };

/** resource → verbs, as `kubectl auth can-i --list` prints them (resource.group[/subresource]). */
type Permissions = Record<string, string[]>;

const EXPECTED: Record<string, Permissions> = {
  'neoset-reconcile': {
    'neosets.neo.io': ['get', 'list'],
    'neosets.neo.io/status': ['patch'],
    'neosets.neo.io/finalizers': ['update'],
    pods: ['create', 'delete', 'get', 'list', 'patch'],
    'pods/status': ['patch'],
    // SPEC §4.9: containers' cpu/memory in place.
    'pods/resize': ['patch'],
    // get: the object holding a name it creates, adopted or refused (shared/k8s/apply.ts createOrAdopt).
    'controllerrevisions.apps': ['create', 'delete', 'get', 'list', 'patch'],
    persistentvolumeclaims: ['create', 'get', 'list', 'patch'],
    events: ['create'],
    // Knative Eventing's OIDC tokens, checked by TokenReview (SPEC §2.3).
    'tokenreviews.authentication.k8s.io': ['create'],
  },
  // shared/k8s/pod-readiness.ts: the pod read before a write is decided, the gate and the end of an
  // update written; no list, no NeoSet, no Event.
  'neoset-readiness': {
    pods: ['get', 'patch'],
    'pods/status': ['patch'],
    'tokenreviews.authentication.k8s.io': ['create'],
  },
  // The dry-run pod create; the data-format rule's reads (SPEC §4.7).
  'neoset-admission': {
    pods: ['create', 'list'],
    'controllerrevisions.apps': ['list'],
    // The NeoSet state gauges on its metrics port (reconcile scales to zero, SPEC §2.4).
    'neosets.neo.io': ['list'],
  },
  'neoset-events': {
    'neosets.neo.io': ['get', 'list', 'watch'],
    pods: ['get', 'list', 'watch'],
  },
};

async function run(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
  return r.stdout;
}

/** The resource rows of `kubectl auth can-i --list` (non-resource URLs left out). */
function parseCanIList(table: string): Permissions {
  const rows: Permissions = {};
  for (const line of table.split('\n').slice(1)) {
    const m = /^(\S+)\s+\[\]\s+\[([^\]]*)\]\s+\[([^\]]*)\]\s*$/.exec(line);
    if (!m) continue; // a non-resource URL row, or blank
    const [, resource, names, verbs] = m;
    if (names !== '') throw new Error(`unexpected resourceNames restriction on ${resource}: ${names}`);
    rows[resource] = [...new Set([...(rows[resource] ?? []), ...verbs.split(' ').filter(Boolean)])].sort();
  }
  return rows;
}

const permissionsOf = async (serviceAccount: string) =>
  parseCanIList(await run(['auth', 'can-i', '--list', '-n', 'default', `--as=system:serviceaccount:${NAMESPACE}:${serviceAccount}`]));

let manifests: Manifest[] = [];

beforeAll(async () => {
  // The Knative CRDs (cluster-scoped, harmless to the other test files: nothing serves them).
  for (const dir of [FIXTURES, OPERATOR_FIXTURES]) {
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
      await installCrds(kubeConfig(), join(dir, file), { timeoutMs: 60_000 });
    }
  }
  // Namespaced objects can be dry-run only into a namespace that exists.
  await run(['apply', '-f', '-'], stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }));
  manifests = parseAllDocuments(await run(['kustomize', KNATIVE_DIR])).map((d) => d.toJS() as Manifest);
});

const CLUSTER_SCOPED = ['ClusterRole', 'ClusterRoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

afterAll(async () => {
  const rbac = manifests.filter((m) => CLUSTER_SCOPED.includes(m.kind));
  for (const m of rbac) await kubectl(['delete', m.kind.toLowerCase(), m.metadata.name, '--ignore-not-found', '--wait=false']);
  // Waited for: a later file applies knative/'s identities into neoset-system, refused while it terminates.
  await kubectl(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=120s']);
});

describe('knative/', () => {
  it('every manifest passes `kubectl apply --dry-run=server -k knative/` with the real Knative CRDs', async () => {
    const r = await kubectl(['apply', '--dry-run=server', '-k', KNATIVE_DIR]);
    expect(r.stderr.split('\n').filter((l) => /error/i.test(l))).toEqual([]);
    expect(r.code).toBe(0);
    const applied = r.stdout.split('\n').filter((l) => l.endsWith('(server dry run)'));
    expect(applied.length).toBe(manifests.length);
    for (const kind of ['Service', 'Broker', 'Trigger', 'ApiServerSource', 'PingSource', 'Deployment', 'ValidatingWebhookConfiguration']) {
      expect(manifests.some((m) => m.kind === kind), kind).toBe(true);
    }
  });

  it('ships a PodMonitor (honorLabels, admission on its plain-http metrics port) and a PrometheusRule that pass server-side validation with the Prometheus Operator CRDs', async () => {
    const r = await kubectl(['apply', '--dry-run=server', ...MONITORING.flatMap((f) => ['-f', f])]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('podmonitor.monitoring.coreos.com/neoset created (server dry run)');
    expect(r.stdout).toContain('prometheusrule.monitoring.coreos.com/neoset created (server dry run)');
    const [podMonitor] = parseAllDocuments(readFileSync(MONITORING[0], 'utf8')).map((d) => d.toJS());
    const endpoints = podMonitor.spec.podMetricsEndpoints as { port: string; honorLabels?: boolean }[];
    expect(endpoints.filter((e) => e.honorLabels).map((e) => e.port).sort()).toEqual(['metrics', 'user-port']);
    // admission: the scrape annotations and the PodMonitor name its plain-http port, not https 8080.
    const admission = manifests.find((m) => m.kind === 'Deployment' && m.metadata.name === 'neoset-admission')!;
    const [container] = admission.spec.template.spec.containers;
    expect(container.ports).toContainEqual({ name: 'metrics', containerPort: 9090 });
    expect(container.env).toContainEqual({ name: 'METRICS_PORT', value: '9090' });
    expect(admission.spec.template.metadata.annotations).toMatchObject({ 'prometheus.io/port': '9090', 'prometheus.io/path': '/metrics' });
    expect(admission.spec.template.metadata.annotations).not.toHaveProperty('prometheus.io/scheme');
    // Every image is pinned: a tag or a digest, never a bare name.
    for (const m of manifests.filter((m) => m.spec?.template?.spec?.containers)) {
      for (const c of m.spec.template.spec.containers) expect(c.image, `${m.kind} ${m.metadata.name}`).toMatch(/(:[\w.-]+|@sha256:[0-9a-f]{64})$/);
    }
  });

  it('knative/hooks.yaml (outside the kustomization) binds the reconcile Service\'s K_SINK to a Broker of lifecycle events (SPEC §4.10)', () => {
    const docs = parseAllDocuments(readFileSync(`${KNATIVE_DIR}hooks.yaml`, 'utf8')).map((d) => d.toJS());
    const binding = docs.find((d) => d.kind === 'SinkBinding');
    const reconcile = manifests.find((m) => m.kind === 'Service' && m.apiVersion === 'serving.knative.dev/v1' && m.metadata.name === 'neoset-reconcile');
    expect(reconcile, 'the reconcile Service of the kustomization').toBeDefined();
    expect(binding.spec.subject).toEqual({ apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: reconcile!.metadata.name });
    expect(binding.metadata.namespace).toBe(reconcile!.metadata.namespace);
    const broker = docs.find((d) => d.kind === 'Broker');
    expect(binding.spec.sink.ref).toEqual({ apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: broker.metadata.name });
    const types = docs.filter((d) => d.kind === 'Trigger').map((t) => t.spec.filter.attributes.type);
    expect(types).toEqual(['io.neo.neoset.lifecycle.PreparingUpdate', 'io.neo.neoset.lifecycle.Updated']);
  });

  it('wires events as SPEC §2 says: Resource-mode sources, filtered Triggers with retries and a dead-letter sink, a resync every minute', () => {
    const of = (kind: string) => manifests.filter((m) => m.kind === kind);
    const sources = of('ApiServerSource');
    expect(sources.map((s) => s.spec.resources.map((r: { kind: string }) => r.kind)).flat().sort()).toEqual(['NeoSet', 'Pod']);
    for (const s of sources) {
      expect(s.spec.mode).toBe('Resource');
      expect(s.spec.serviceAccountName).toBe('neoset-events');
      expect(s.spec.namespaceSelector).toEqual({}); // every namespace
    }
    const podSource = sources.find((s) => s.spec.resources[0].kind === 'Pod')!;
    expect(podSource.spec.resources[0].selector.matchExpressions).toEqual([{ key: 'neoset.neo.io/name', operator: 'Exists' }]);

    const ping = of('PingSource');
    // The slow tick (SPEC §2.4): the fast one is the reconcile function's (shared/k8s/fast-tick.ts).
    expect(ping.map((p) => p.spec.schedule)).toEqual(['*/10 * * * *']);

    const triggers = of('Trigger');
    const routes = triggers.map((t) => `${t.spec.filter.attributes.kind ?? t.spec.filter.attributes.type} -> ${t.spec.subscriber.ref.name}`).sort();
    expect(routes).toEqual([
      'NeoSet -> neoset-reconcile',
      'Pod -> neoset-readiness',
      'Pod -> neoset-reconcile',
      'dev.knative.sources.ping -> neoset-reconcile',
      'dev.knative.sources.ping -> neoset-reconcile',
    ]);
    // One Trigger per tick, each on its PingSource's source: the slow one and the fast one reconcile makes.
    expect(triggers.map((t) => t.spec.filter.attributes.source).filter(Boolean).sort()).toEqual(['/apis/v1/namespaces/neoset-system/pingsources/neoset-resync', '/apis/v1/namespaces/neoset-system/pingsources/neoset-rollout-tick']);
    for (const t of triggers) {
      expect(t.spec.delivery.retry, t.metadata.name).toBeGreaterThan(0);
      expect(t.spec.delivery.backoffPolicy).toBe('exponential');
      expect(t.spec.delivery.deadLetterSink.ref.name).toBe('neoset-dead-letter');
    }
  });

  it('runs reconcile and readiness as cluster-local Knative Services with autoscaling, timeouts, /healthz probes and scraping', () => {
    for (const name of ['neoset-reconcile', 'neoset-readiness']) {
      const svc = manifests.find((m) => m.kind === 'Service' && m.apiVersion === 'serving.knative.dev/v1' && m.metadata.name === name)!;
      expect(svc.metadata.labels?.['networking.knative.dev/visibility']).toBe('cluster-local');
      const { metadata, spec } = svc.spec.template;
      expect(Object.keys(metadata.annotations)).toEqual(
        expect.arrayContaining(['autoscaling.knative.dev/min-scale', 'autoscaling.knative.dev/max-scale', 'autoscaling.knative.dev/target', 'prometheus.io/scrape']),
      );
      expect(spec.timeoutSeconds).toBeGreaterThan(0);
      expect(spec.serviceAccountName).toBe(name);
      const [container] = spec.containers;
      expect(container.readinessProbe.httpGet.path).toBe('/healthz');
      expect(container.livenessProbe.httpGet.path).toBe('/healthz');
      expect(container.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    }
  });

  it("gives each ServiceAccount exactly its function's permissions (kubectl auth can-i --list)", async () => {
    const rbacKinds = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'];
    const rbac = manifests.filter((m) => rbacKinds.includes(m.kind));
    await run(['apply', '-f', '-'], rbac.map((m) => stringify(m)).join('---\n'));
    expect(rbac.filter((m) => m.kind === 'ServiceAccount').map((m) => m.metadata.name).sort()).toEqual(Object.keys(EXPECTED).sort());

    // What any authenticated identity may do (self reviews, discovery) is not the function's doing.
    const baseline = await permissionsOf('nobody');
    const own = (p: Permissions) => Object.fromEntries(Object.entries(p).filter(([resource, verbs]) => baseline[resource]?.join() !== verbs.join()));
    for (const [serviceAccount, expected] of Object.entries(EXPECTED)) {
      const sorted = Object.fromEntries(Object.entries(expected).map(([r, v]) => [r, [...v].sort()]));
      expect(own(await permissionsOf(serviceAccount)), serviceAccount).toEqual(sorted);
    }
  });

  it('keeps the admission ServiceAccount to dry-runs: a real pod create as it is refused, a dry-run allowed (ValidatingAdmissionPolicy)', async () => {
    const kinds = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];
    const objects = manifests.filter((m) => kinds.includes(m.kind));
    const policies = objects.filter((m) => m.kind.startsWith('ValidatingAdmissionPolicy')).map((m) => m.metadata.name);
    expect(policies.filter((n) => n === 'neoset-admission-dry-run-only')).toHaveLength(2);
    await run(['apply', '-f', '-'], objects.map((m) => stringify(m)).join('---\n'));
    const ns = await createTestNamespace('least-privilege');
    try {
      const as = (name: string) => `--as=system:serviceaccount:${NAMESPACE}:${name}`;
      const pod = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'main', image: 'mysql:8.0' }] } });
      // The policy takes effect asynchronously (the API server compiles it): probe until a real create
      // is refused, clear what the probes created, then try once more on a clean namespace.
      await poll('the policy to refuse a real create', async () => {
        const r = await kubectl(['-n', ns.name, 'create', '-f', '-', as('neoset-admission')], { input: pod(`probe-${Date.now()}`) });
        return r.code !== 0 ? true : undefined;
      }, { timeoutMs: 30_000, intervalMs: 250 });
      await run(['-n', ns.name, 'delete', 'pods', '--all', '--grace-period=0', '--force', '--wait=true']);
      const refused = await kubectl(['-n', ns.name, 'create', '-f', '-', as('neoset-admission')], { input: pod('real') });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("ValidatingAdmissionPolicy 'neoset-admission-dry-run-only' with binding 'neoset-admission-dry-run-only' denied request: the NeoSet admission ServiceAccount may only dry-run pod creates");
      const created = await kubectl(['-n', ns.name, 'get', 'pods', '-o', 'name']);
      expect(created.stdout.trim(), 'pods the admission account created for real').toBe('');
      console.log(`a real pod create as neoset-admission: ${refused.stderr.trim()}`);

      const dryRun = await kubectl(['-n', ns.name, 'create', '--dry-run=server', '-f', '-', as('neoset-admission')], { input: pod('dry') });
      expect(dryRun.code, dryRun.stderr).toBe(0);
      expect(dryRun.stdout).toContain('pod/dry created (server dry run)');
      // Nobody else is bound by it: the same real create by another identity that may create pods passes.
      // (Not reconcile's: knative/reconcile-policy.yaml refuses it a pod that is no NeoSet's.)
      const byAnother = await kubectl(['-n', ns.name, 'create', '-f', '-', '--as=someone-else', '--as-group=system:masters'], { input: pod('by-another') });
      expect(byAnother.code, byAnother.stderr).toBe(0);
    } finally {
      await ns.cleanup();
    }
  });

  it('has no caBundle in the webhook manifests, so `kubectl apply -k knative/` after `npm run admission:cert` keeps the CA', async () => {
    const webhooks = manifests.filter((m) => m.kind.endsWith('WebhookConfiguration'));
    expect(webhooks.map((m) => m.kind).sort()).toEqual(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
    for (const m of webhooks) for (const w of (m as any).webhooks) expect(w.clientConfig, `${m.kind} ${w.name}`).not.toHaveProperty('caBundle');
    const kinds = ['Service', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];
    const applyWebhooks = () => run(['apply', '-f', '-'], manifests.filter((m) => kinds.includes(m.kind)).map((m) => stringify(m)).join('---\n'));
    const caBundles = async () =>
      Promise.all(['mutatingwebhookconfiguration', 'validatingwebhookconfiguration'].map((kind) => run(['get', kind, 'neoset-admission', '-o', 'jsonpath={.webhooks[*].clientConfig.caBundle}'])));
    await applyWebhooks();
    const { bundlePem } = await rotate({ kubectl: (args, input) => kubectl(args, { input }) });
    const expected = Buffer.from(bundlePem).toString('base64');
    expect(await caBundles()).toEqual([expected, expected]);
    await applyWebhooks(); // an image bump, a GitOps sync
    expect(await caBundles()).toEqual([expected, expected]);
    // And the Secret the pods mount is the one admission:cert wrote, signed by that CA.
    const secret = JSON.parse(await run(['-n', NAMESPACE, 'get', 'secret', 'neoset-admission-tls', '-o', 'json']));
    expect(Object.keys(secret.data).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
  });
});
