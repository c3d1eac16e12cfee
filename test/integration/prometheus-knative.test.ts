// Knative Eventing's own metrics (v0.50.0: OpenTelemetry, exported for Prometheus when
// config-observability says `metrics-protocol: prometheus`) scraped by a real Prometheus
// (test/cluster/prometheus.ts) from the real Broker ingress, Broker filter and in-memory channel
// dispatcher pods (test/cluster/knative-stack.ts), while knative/eventing.yaml's sources, Broker and
// Triggers carry the walkthrough's events to a receiver (test/cluster/neoset-events.ts) that answers
// the first delivery to the readiness Trigger with a 503 (the Broker retries it). Then every Knative
// Eventing expression of knative/grafana-dashboard.json and knative/prometheus-rules.yaml returns a
// series. (The Knative Serving ones — queue-proxy's, the autoscaler's, the activator's — need Knative
// Serving, which this Eventing-only stack does not run: they are only checked to parse here;
// knative-e2e.test.ts scrapes the activator and the autoscaler on the Serving layout.) Claims the service network: run under
// flock /tmp/neoset-service-network.lock. The functions' own metrics: prometheus.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNATIVE_NAMESPACE } from '../../dev/cluster/knative.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';
import { run } from '../cluster/harness.ts';
import { SYSTEM_NAMESPACE } from '../../dev/manifests.ts';
import { startKnativeStack, type KnativeStack } from '../cluster/knative-stack.ts';
import { addTriggers, DEAD_LETTER, failingTrigger, installNeoSetEventing, runWalkthroughChanges, type NeoSetEventing } from '../cluster/neoset-events.ts';
import { startPrometheus, type Prometheus } from '../cluster/prometheus.ts';

const REPO_ROOT = new URL('../..', import.meta.url).pathname;
const DASHBOARD = join(REPO_ROOT, 'knative', 'grafana-dashboard.json');
const RULES = join(REPO_ROOT, 'knative', 'prometheus-rules.yaml');
/** The data plane whose metrics the dashboard and the rules read, by Deployment. */
const COMPONENTS = ['mt-broker-ingress', 'mt-broker-filter', 'imc-dispatcher'];
/** Knative Serving's series (queue-proxy, the autoscaler, the activator's requests): no Serving here; knative-e2e.test checks them. */
const SERVING = /\bkn_(serving|revision)_|\bhttp_server_request_duration_seconds/;

let stack: KnativeStack | undefined;
let eventing: NeoSetEventing;
let prometheus: Prometheus | undefined;
const metricsUrls: Record<string, string> = {};
const k = async (args: string[]) => {
  const r = await run('kubectl', ['--kubeconfig', stack!.cp.kubeconfigPath, ...args]);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/** Every Knative expression of the dashboard and of the rules, with where it is. */
function knativeExpressions(): { where: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
  const panels = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `dashboard "${p.title}"`, expr: t.expr })));
  const [rules] = parseAllDocuments(readFileSync(RULES, 'utf8')).map((d) => d.toJS() as { spec: { groups: { rules: { alert: string; expr: string }[] }[] } });
  const alerts = rules.spec.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));
  // Knative's: every one not on NeoSet's own series (those: prometheus.test.ts).
  return [...panels, ...alerts].filter(({ expr }) => !/\bneoset_/.test(expr));
}

/** Grafana's variables as the dashboard has them (an alert's expression as it is: a series is an alert firing). */
const instantiate = (expr: string) => expr.replaceAll('$__rate_interval', '30s');

beforeAll(async () => {
  stack = await startKnativeStack({ nodeName: 'prom-kn' });
  // Knative's metrics are off by default (metrics-protocol: none): what a user sets to scrape them.
  await k(['-n', KNATIVE_NAMESPACE, 'patch', 'configmap', 'config-observability', '--type', 'merge', '-p', JSON.stringify({ data: { 'metrics-protocol': 'prometheus' } })]);
  await k(['-n', KNATIVE_NAMESPACE, 'rollout', 'restart', ...COMPONENTS.map((c) => `deployment/${c}`)]);
  for (const c of COMPONENTS) await k(['-n', KNATIVE_NAMESPACE, 'rollout', 'status', `deployment/${c}`, '--timeout=90s']);
  eventing = await installNeoSetEventing(stack, { uriOf: (t) => (t === 'neoset-readiness-pods' ? `/${t}?fail=first` : `/${t}`) });
  // Its events go to knative/eventing.yaml's dead-letter sink at once (the alert's and the panel's dead letters).
  await addTriggers(stack, [failingTrigger()]);
  // Each component's pod, at the container port its manifest names `metrics` (9092 for the Broker's
  // ingress and filter, 9090 for the dispatcher): what a PodMonitor selects.
  const pods = (await stack.cp.kubeConfig().makeApiClient(CoreV1Api).listNamespacedPod({ namespace: KNATIVE_NAMESPACE })).items.filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase === 'Running');
  for (const c of COMPONENTS) {
    const pod = pods.find((p) => p.metadata?.ownerReferences?.[0]?.name?.startsWith(`${c}-`))!;
    const port = pod.spec!.containers.flatMap((ct) => ct.ports ?? []).find((p) => p.name === 'metrics')!.containerPort;
    metricsUrls[c] = `http://${pod.status!.podIP}:${port}/metrics`;
  }
  prometheus = await startPrometheus({
    scrapeIntervalMs: 1000,
    targets: COMPONENTS.map((c) => ({ job: c, url: metricsUrls[c], labels: { namespace: KNATIVE_NAMESPACE } })),
  });
  await prometheus.targetsUp();
}, 400_000);

afterAll(async () => {
  await prometheus?.stop();
  if (process.env.KNATIVE_LOG && stack) console.log(stack.log.join('\n'), '\n', stack.containerLogTails());
  await stack?.stop();
}, 60_000);

describe("Knative Eventing's metrics in Prometheus", () => {
  it("are served for Prometheus by the Broker ingress, the Broker filter and the IMC dispatcher, on their manifests' metrics ports", async () => {
    // targetsUp (beforeAll): every one scraped. What each says about itself: the OpenTelemetry resource.
    const info = await prometheus!.query('target_info');
    expect(info.map((s) => s.metric.job).sort()).toEqual([...COMPONENTS].sort());
    console.log(Object.entries(metricsUrls).map(([c, url]) => `${c}: ${url}`).join('\n'));
  });

  it('every Knative Eventing expression of the dashboard and of the alert rules returns a series once events flowed', async () => {
    await runWalkthroughChanges(stack!, 'default', async (verb, kind, name, test = () => true) => {
      await waitFor(async () => (await eventing.events()).some((e) => e.attributes.type === `dev.knative.apiserver.resource.${verb}` && e.attributes.kind === kind && e.attributes.name === name && test(JSON.parse(e.data))), {
        what: `${kind} ${name} ${verb} at the receiver`,
        timeoutMs: 30_000,
        intervalMs: 250,
      });
    });
    await new Promise((r) => setTimeout(r, 20_000)); // samples over a rate window after the events
    const report: string[] = [];
    const empty: string[] = [];
    for (const { where, expr } of knativeExpressions()) {
      const result = await prometheus!.query(instantiate(expr)); // throws on a PromQL error: every one parses
      if (SERVING.test(expr)) {
        report.push(`${where}: parses (Knative Serving's series: no Serving here)`);
        continue;
      }
      if (result.length === 0) empty.push(`${where}: ${expr}`);
      report.push(`${where}: ${result.length} series ${result.map((s) => JSON.stringify(s.metric)).join(' ')}`.slice(0, 400));
    }
    console.log(report.join('\n'));
    expect(empty).toEqual([]);
    // Each of the three dispatches what it got, counted by kn.eventing.dispatch.duration: the ingress
    // to the channel, the channel's dispatcher to the filter (one Subscription per Trigger), the filter
    // to each Trigger's subscriber; the dispatcher also to the dead-letter sink.
    const by = async (expr: string) => (await prometheus!.query(expr)).map((s) => s.metric);
    expect((await by('sum by (job) (kn_eventing_dispatch_duration_seconds_count)')).map((m) => m.job).sort()).toEqual([...COMPONENTS].sort());
    const failed = await by('sum by (messaging_destination_name, http_response_status_code) (kn_eventing_dispatch_duration_seconds_count{job="mt-broker-filter", http_response_status_code="503"})');
    expect(failed.map((m) => m.messaging_destination_name).sort()).toEqual(['trigger:neoset-failing.neoset-system', 'trigger:neoset-readiness-pods.neoset-system']);
    const deadLetters = await by(`sum by (job, server_address) (http_client_request_duration_seconds_count{server_address=~"${DEAD_LETTER}[.].+"})`);
    expect(deadLetters).toEqual([{ job: 'imc-dispatcher', server_address: `${DEAD_LETTER}.${SYSTEM_NAMESPACE}.svc.cluster.local` }]);
    // What the dead-letter sink got: the failing Trigger's NeoSet events, each with Knative's error extensions.
    const dead = (await eventing.events()).filter((e) => e.path === '/dead-letter');
    expect(dead.map((e) => e.attributes.type).sort()).toEqual(['dev.knative.apiserver.resource.add', 'dev.knative.apiserver.resource.delete', 'dev.knative.apiserver.resource.update']);
    console.log(`dead letters' extensions: ${Object.keys(dead[0].attributes).filter((a) => a.startsWith('knativeerror')).join(', ')}; code ${dead[0].attributes.knativeerrorcode}`);
  }, 180_000);
});
