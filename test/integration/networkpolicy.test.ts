// knative/networkpolicy.yaml (SPEC §2.3) against the real API server: the policies of the
// kustomization go through a server-side dry-run apply (in a test namespace, so this file shares no
// namespace with knative.test.ts), and what the API server answers is checked against the workloads
// of the same kustomization: each policy selects its pods, and opens only the ports it means to.
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, kubectl, type TestNamespace } from '../cluster/harness.ts';

const KNATIVE_DIR = new URL('../../knative/', import.meta.url).pathname;

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: any };
type Peer = { namespaceSelector?: { matchLabels?: Record<string, string> }; podSelector?: unknown; ipBlock?: unknown };
type Rule = { from?: Peer[]; ports?: { protocol?: string; port: number }[] };

let ns: TestNamespace;
let manifests: Obj[] = [];
/** The NetworkPolicies as the API server returned them from the dry-run (its defaults filled in). */
let policies: Obj[] = [];

async function run(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
  return r.stdout;
}

/** Does a matchLabels / matchExpressions (In, Exists) selector select these labels? */
function selects(selector: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] }, labels: Record<string, string>): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpr = (selector.matchExpressions ?? []).every((e) => (e.operator === 'In' ? e.values!.includes(labels[e.key]) : e.operator === 'Exists' ? e.key in labels : false));
  return byLabel && byExpr;
}

const podLabels = (kind: string, name: string): Record<string, string> => manifests.find((m) => m.kind === kind && m.metadata.name === name)!.spec.template.metadata.labels;
const policy = (name: string) => policies.find((p) => p.metadata.name === name)!;
const fromNamespaces = (rule: Rule) => (rule.from ?? []).map((p) => p.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name']);
const ports = (rule: Rule) => (rule.ports ?? []).map((p) => p.port).sort((a, b) => a - b);

beforeAll(async () => {
  ns = await createTestNamespace('netpol');
  manifests = parseAllDocuments(await run(['kustomize', KNATIVE_DIR])).map((d) => d.toJS() as Obj);
  const shipped = manifests.filter((m) => m.kind === 'NetworkPolicy');
  const input = shipped.map((m) => stringify({ ...m, metadata: { ...m.metadata, namespace: ns.name } })).join('---\n');
  const answer = JSON.parse(await run(['apply', '--dry-run=server', '-o', 'json', '-f', '-'], input)) as Obj | { items: Obj[] };
  policies = 'items' in answer ? answer.items : [answer];
}, 60_000);

afterAll(async () => {
  await ns?.cleanup();
});

describe('knative/networkpolicy.yaml', () => {
  it('is in the kustomization and passes a server-side dry-run apply as two NetworkPolicies in neoset-system', () => {
    const shipped = manifests.filter((m) => m.kind === 'NetworkPolicy');
    expect(shipped.map((m) => `${m.metadata.namespace}/${m.metadata.name}`).sort()).toEqual(['neoset-system/neoset-admission', 'neoset-system/neoset-functions']);
    expect(policies.map((p) => [p.kind, p.metadata.name, p.metadata.namespace]).sort()).toEqual([
      ['NetworkPolicy', 'neoset-admission', ns.name],
      ['NetworkPolicy', 'neoset-functions', ns.name],
    ]);
    for (const p of policies) expect(p.spec.policyTypes).toEqual(['Ingress']);
  });

  it("selects the reconcile and readiness pods, and admits them only from Knative's namespaces and Prometheus's", () => {
    const fns = policy('neoset-functions');
    expect(selects(fns.spec.podSelector, podLabels('Service', 'neoset-reconcile'))).toBe(true);
    expect(selects(fns.spec.podSelector, podLabels('Service', 'neoset-readiness'))).toBe(true);
    expect(selects(fns.spec.podSelector, podLabels('Deployment', 'neoset-admission'))).toBe(false);
    const rules = fns.spec.ingress as Rule[];
    // Every rule names its sources by namespace: none is open to the whole cluster.
    for (const rule of rules) {
      expect(rule.from?.length).toBeGreaterThan(0);
      for (const peer of rule.from!) expect(Object.keys(peer)).toEqual(['namespaceSelector']);
    }
    const byNamespace = Object.fromEntries(rules.flatMap((r) => fromNamespaces(r).map((n) => [n, ports(r)])));
    // Knative Serving's data path reaches queue-proxy (8012/8112) and its autoscaler metrics (9090), not the container.
    for (const n of ['knative-serving', 'kourier-system', 'istio-system']) expect(byNamespace[n]).toEqual([8012, 8112, 9090]);
    // The Broker filter straight to the container (plain Deployments): the container port of the functions.
    const containerPort = podTemplateContainerPort('neoset-reconcile');
    expect(byNamespace['knative-eventing']).toEqual([containerPort]);
    expect(podTemplateContainerPort('neoset-readiness')).toBe(containerPort);
    // Prometheus: METRICS_PORT (the NeoSets' series are served there only, SPEC §2.5) and queue-proxy's 9091 — not the event port.
    const metricsPort = podTemplateMetricsPort('neoset-reconcile');
    expect(podTemplateMetricsPort('neoset-readiness')).toBe(metricsPort);
    expect(metricsPort).not.toBe(containerPort);
    expect(byNamespace.monitoring).toEqual([metricsPort, 9091].sort((a, b) => a - b));
  });

  it('opens admission only on its webhook port to any source (no ipBlock can name the API server in general) and its metrics port to Prometheus', () => {
    const adm = policy('neoset-admission');
    expect(selects(adm.spec.podSelector, podLabels('Deployment', 'neoset-admission'))).toBe(true);
    expect(selects(adm.spec.podSelector, podLabels('Service', 'neoset-reconcile'))).toBe(false);
    const container = manifests.find((m) => m.kind === 'Deployment' && m.metadata.name === 'neoset-admission')!.spec.template.spec.containers[0];
    const portOf = (name: string) => (container.ports as { name: string; containerPort: number }[]).find((p) => p.name === name)!.containerPort;
    const rules = adm.spec.ingress as Rule[];
    const open = rules.filter((r) => !r.from);
    expect(open.map(ports)).toEqual([[portOf('https')]]);
    expect(rules.filter((r) => r.from).map((r) => [fromNamespaces(r), ports(r)])).toEqual([[['monitoring'], [portOf('metrics')]]]);
  });
});

function podTemplateMetricsPort(service: string): number {
  const svc = manifests.find((m) => m.kind === 'Service' && m.apiVersion === 'serving.knative.dev/v1' && m.metadata.name === service)!;
  return Number((svc.spec.template.spec.containers[0].env as { name: string; value?: string }[]).find((e) => e.name === 'METRICS_PORT')!.value);
}

function podTemplateContainerPort(service: string): number {
  const svc = manifests.find((m) => m.kind === 'Service' && m.apiVersion === 'serving.knative.dev/v1' && m.metadata.name === service)!;
  return svc.spec.template.spec.containers[0].ports[0].containerPort;
}
