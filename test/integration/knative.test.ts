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
import { kubeConfig, kubectl } from '../cluster/harness.ts';

const KNATIVE_DIR = new URL('../../knative/', import.meta.url).pathname;
const FIXTURES = new URL('../fixtures/knative-crds/', import.meta.url).pathname;
const NAMESPACE = 'neoset-system';

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: any };

/** resource → verbs, as `kubectl auth can-i --list` prints them (resource.group[/subresource]). */
type Permissions = Record<string, string[]>;

const EXPECTED: Record<string, Permissions> = {
  'neoset-reconcile': {
    'neosets.neo.io': ['get', 'list'],
    'neosets.neo.io/status': ['update'],
    'neosets.neo.io/finalizers': ['update'],
    pods: ['create', 'delete', 'get', 'list', 'patch'],
    'pods/status': ['patch'],
    // SPEC §4.9: containers' cpu/memory in place.
    'pods/resize': ['patch'],
    'controllerrevisions.apps': ['create', 'delete', 'list', 'patch'],
    persistentvolumeclaims: ['create', 'list', 'patch'],
    events: ['create'],
  },
  'neoset-readiness': {
    'neosets.neo.io': ['get', 'list'],
    pods: ['get', 'list', 'patch'],
    'pods/status': ['patch'],
    'controllerrevisions.apps': ['list'],
    persistentvolumeclaims: ['list'],
    events: ['create'],
  },
  'neoset-admission': {
    pods: ['create'],
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
  for (const file of readdirSync(FIXTURES).filter((f) => f.endsWith('.yaml'))) {
    await installCrds(kubeConfig(), join(FIXTURES, file), { timeoutMs: 60_000 });
  }
  // Namespaced objects can be dry-run only into a namespace that exists.
  await run(['apply', '-f', '-'], stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }));
  manifests = parseAllDocuments(await run(['kustomize', KNATIVE_DIR])).map((d) => d.toJS() as Manifest);
});

afterAll(async () => {
  const rbac = manifests.filter((m) => m.kind === 'ClusterRole' || m.kind === 'ClusterRoleBinding');
  for (const m of rbac) await kubectl(['delete', m.kind.toLowerCase(), m.metadata.name, '--ignore-not-found', '--wait=false']);
  await kubectl(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=false']);
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
    expect(ping.map((p) => p.spec.schedule)).toEqual(['* * * * *']);

    const triggers = of('Trigger');
    const routes = triggers.map((t) => `${t.spec.filter.attributes.kind ?? t.spec.filter.attributes.type} -> ${t.spec.subscriber.ref.name}`).sort();
    expect(routes).toEqual([
      'NeoSet -> neoset-reconcile',
      'Pod -> neoset-readiness',
      'Pod -> neoset-reconcile',
      'dev.knative.sources.ping -> neoset-reconcile',
    ]);
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
});
