// A real Prometheus (test/cluster/prometheus.ts) scraping the dev stack's three functions every second
// during an in-place rollout of examples/mysql.yaml in a namespace of its own (issue 14). Scraped as
// knative/podmonitor.yaml has it: honour_labels, with the `namespace` target label the pod's
// (neoset-system), so the NeoSet's own `namespace` label must survive. Then every expression of
// knative/grafana-dashboard.json is run: each one parses, and each neoset_* one returns a series, with
// the rollout's namespace wherever the expression keeps that label (the Knative ones return theirs in
// prometheus-knative.test.ts, scraped from the real Broker and channel dispatcher). Last, the alert rules of
// knative/prometheus-rules.yaml through `promtool check rules` and `promtool test rules`.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../../dev/cluster/wait.ts';
import { startDevStack, type DevStack } from '../../dev/stack.ts';
import { run } from '../cluster/harness.ts';
import { promtool, startPrometheus, type Prometheus } from '../cluster/prometheus.ts';

const REPO_ROOT = new URL('../..', import.meta.url).pathname;
const EXAMPLE = join(REPO_ROOT, 'examples', 'mysql.yaml');
const DASHBOARD = join(REPO_ROOT, 'knative', 'grafana-dashboard.json');
const RULES = join(REPO_ROOT, 'knative', 'prometheus-rules.yaml');
const RULE_TESTS = join(REPO_ROOT, 'test', 'fixtures', 'prometheus-rules.test.yaml');
const NAMESPACE = 'prom-rollout';
/** Series only a NeoSet with canary steps (and a Prometheus analysis) has: checked by the canary e2e test. */
const CANARY_METRICS = /\bneoset_(canary_step|analysis_total)\b/;

/** Every target expression of the dashboard, with its panel's title. */
function dashboardExpressions(): { panel: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}

/** Grafana's variables, as a user looking at this rollout would have them. */
const instantiate = (expr: string) => expr.replaceAll('$__rate_interval', '15s').replaceAll('$namespace', NAMESPACE).replaceAll('$neoset', 'mysql');

let dir: string;
let stack: DevStack | undefined;
let prometheus: Prometheus | undefined;
const k = (args: string[], input?: string) => run('kubectl', ['--kubeconfig', stack!.kubeconfigPath, ...args], { input });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'neoset-prometheus-it-'));
  stack = await startDevStack({ dir, ports: { reconcile: 0, readiness: 0, admission: 0 }, resyncMs: 1000, log: () => {} });
  prometheus = await startPrometheus({
    scrapeIntervalMs: 1000,
    targets: Object.values(stack.functions).map((fn) => ({
      job: `neoset-${fn.name}`,
      url: fn.metricsUrl,
      // What the PodMonitor's service discovery adds: the pod's namespace and component.
      labels: { namespace: 'neoset-system', app_kubernetes_io_component: fn.name },
      honorLabels: true,
    })),
  });
  await prometheus.targetsUp();
}, 240_000);

afterAll(async () => {
  await prometheus?.stop();
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Prometheus scraping the functions during a rollout', () => {
  it("scrapes admission's plain-http metrics port (https stays for the API server)", () => {
    expect(stack!.functions.admission.url).toMatch(/^https:/);
    expect(stack!.functions.admission.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  });

  it("returns a series for every neoset_* expression of the Grafana dashboard, with the rollout's namespace", async () => {
    expect((await k(['create', 'namespace', NAMESPACE])).code).toBe(0);
    const applied = await k(['-n', NAMESPACE, 'apply', '-f', EXAMPLE]);
    expect(applied.code, applied.stderr).toBe(0);
    const neoset = async () => JSON.parse((await k(['-n', NAMESPACE, 'get', 'neo', 'mysql', '-o', 'json'])).stdout);
    const settled = (phase: string, image: string) => async () => {
      const n = await neoset();
      const s = n.status ?? {};
      return s.observedGeneration === n.metadata.generation && s.phase === phase && s.updatedReplicas === 5 && s.readyReplicas === 5 && s.currentImage === image ? true : undefined;
    };
    await poll('mysql ready on mysql:8.0', settled('Idle', 'mysql:8.0'), { timeoutMs: 90_000, intervalMs: 250 });
    const patch = [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'mysql:8.1' }];
    expect((await k(['-n', NAMESPACE, 'patch', 'neo', 'mysql', '--type', 'json', '-p', JSON.stringify(patch)])).code).toBe(0);
    await poll('the rollout to complete', settled('Completed', 'mysql:8.1'), { timeoutMs: 120_000, intervalMs: 250 });

    // The state gauges keep the NeoSet's namespace (honour_labels): the dashboard's $namespace lists it.
    const replicas = await poll('neoset_replicas of the rollout', async () => {
      const r = await prometheus!.query(`neoset_replicas{neoset="mysql"}`);
      return r.length > 0 ? r : undefined;
    }, { timeoutMs: 30_000, intervalMs: 500 });
    // One series per function that serves the gauges: reconcile's, and admission's (which stays warm
    // when reconcile scales to zero, SPEC §2.4); each with the NeoSet's namespace.
    expect(replicas.map((s) => s.metric.namespace)).toEqual(replicas.map(() => NAMESPACE));
    expect(replicas.map((s) => s.metric.job).sort()).toEqual(['neoset-admission', 'neoset-reconcile']);
    expect(replicas.every((s) => !('exported_namespace' in s.metric))).toBe(true);
    // The per-instance counters have no namespace of their own: they get the pod's.
    const reconciles = await prometheus!.query('neoset_reconcile_total');
    expect(new Set(reconciles.map((s) => s.metric.namespace))).toEqual(new Set(['neoset-system']));

    // Every expression parses; every neoset_* one answers, for this NeoSet where it keeps the labels.
    await new Promise((r) => setTimeout(r, 16_000)); // a full rate window of samples after the rollout
    const report: string[] = [];
    for (const { panel, expr } of dashboardExpressions()) {
      const result = await prometheus!.query(instantiate(expr));
      if (!/\bneoset_/.test(expr)) {
        report.push(`${panel}: parses (Knative's metric: scraped from the real Knative in prometheus-knative.test.ts)`);
        continue;
      }
      if (CANARY_METRICS.test(expr)) {
        report.push(`${panel}: parses (a canary with steps and analysis: test/integration/canary.test.ts)`);
        continue;
      }
      expect(result.length, `${panel}: ${expr}`).toBeGreaterThan(0);
      for (const name of new Set(expr.match(/\bneoset_[a-z_]+/g))) {
        const base = name.replace(/_(bucket|count|sum)$/, '');
        expect((await prometheus!.query(`count({__name__=~"${base}(_bucket|_count|_sum)?"})`)).length, `${panel}: ${name} is scraped`).toBe(1);
      }
      for (const s of result) {
        if ('namespace' in s.metric) expect(s.metric.namespace, `${panel}: ${expr}`).toBe(NAMESPACE);
        if ('neoset' in s.metric) expect(s.metric.neoset, `${panel}: ${expr}`).toBe('mysql');
      }
      report.push(`${panel}: ${result.length} series ${result.map((s) => JSON.stringify(s.metric)).join(' ')}`.slice(0, 300));
    }
    console.log(report.join('\n'));
  }, 300_000);
});

describe('the alert rules', () => {
  it('pass `promtool check rules` and `promtool test rules` (every alert, firing and not firing)', async () => {
    const work = mkdtempSync(join(tmpdir(), 'neoset-rules-'));
    try {
      const [doc] = parseAllDocuments(readFileSync(RULES, 'utf8')).map((d) => d.toJS());
      expect(doc.kind).toBe('PrometheusRule');
      writeFileSync(join(work, 'full.yaml'), JSON.stringify(doc.spec));
      const check = await promtool(['check', 'rules', 'full.yaml'], work);
      expect(check.code, check.output).toBe(0);
      // promtool compares rendered annotations too; the unit tests are about when alerts fire.
      const spec = structuredClone(doc.spec);
      for (const group of spec.groups) for (const rule of group.rules) delete rule.annotations;
      writeFileSync(join(work, 'rules.yaml'), JSON.stringify(spec));
      copyFileSync(RULE_TESTS, join(work, 'rules.test.yaml'));
      const tested = await promtool(['test', 'rules', 'rules.test.yaml'], work);
      expect(tested.code, tested.output).toBe(0);
      // Each alert is tested, and both ways.
      const alerts = spec.groups.flatMap((g: { rules: { alert: string }[] }) => g.rules.map((r) => r.alert));
      const cases = (parse(readFileSync(RULE_TESTS, 'utf8')) as { tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[] }).tests.flatMap((t) => t.alert_rule_test);
      for (const alert of alerts) {
        expect(cases.some((c) => c.alertname === alert && c.exp_alerts.length > 0), `${alert} fires in a test`).toBe(true);
        expect(cases.some((c) => c.alertname === alert && c.exp_alerts.length === 0), `${alert} stays quiet in a test`).toBe(true);
      }
      console.log(`${check.output.trim()}\n${tested.output.trim()}`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
