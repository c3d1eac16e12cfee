// The end-to-end tier on the real Knative (issue 21 "Tests on the real Knative", issue 35): one stack
// (test/cluster/knative-stack.ts with `serving`: serviceNetwork control plane, process-mode kubelet,
// kube-proxy + CoreDNS, Knative Eventing and Serving v0.50.0 from their release manifests, Traefik as
// Serving's ingress) with NeoSet deployed as users deploy it on Knative, the functions with kn
// (dev/cluster/neoset-on-serving.ts: `kn service apply -f knative/{reconcile,readiness}.yaml`, then
// `kubectl apply -f knative/eventing.yaml`; npm run dev's default, `kubectl apply -k knative/`, is
// dev.test's), brought up once for seven scenarios, every state of the app namespace checked by the
// invariant observer (test/e2e/observer.ts):
//   1. the automated canary with a timed pause, through the real Broker to the Knative Services;
//   2. the update hooks example (examples/hooks/): its owner as a process-mode pod, NeoSet's
//      lifecycle CloudEvents through knative/hooks.yaml's Broker, K_SINK set by Knative's SinkBinding
//      on the neoset-reconcile Knative Service (a new revision);
//   3. several instances of each function (kn service update --scale-min: 3 reconcile, 2 readiness)
//      behind the Broker: a rollout, a scale and a pause/resume; then, while the rollouts finish,
//      back to 1 and 0 (new revisions: the old ones' five pods scale in, queue-proxy draining each
//      for its 30 s): no event dead-lettered;
//   4. Knative's own pods killed mid-rollout (the ApiServerSource adapters, the Broker ingress, the
//      filter, the IMC dispatcher), each once: every rollout completes;
//   5. a new function image, `kn service update --image` mid-rollout (issue 35 point 5): new
//      revisions take over, the old one began the rollout and the new one ends it, nothing
//      dead-lettered;
//   6. at rest: the fast tick deleted, both functions at zero, the Knative cold start; then an event
//      lost at rest (the NeoSet Trigger deleted), recovered by the slow tick (made every minute here);
//   7. Knative Serving's metrics (metrics-protocol: prometheus in knative-serving's config-observability,
//      the activator and the autoscaler scraped by a real Prometheus from the start): the activator's
//      requests to the functions, its latency and queue, the autoscaler's pods; every Serving expression
//      of knative/grafana-dashboard.json on them returns a series, every alert of prometheus-rules.yaml parses.
// The dead-letter sink (eventing.yaml's Knative Service, min-scale 0) is kept at one pod here, so
// that what it received can be counted. OIDC is off here (knative-neoset.test.ts proves it, on the
// eventing-only layout): the reconcile function sends its lifecycle events to K_SINK without a token,
// as a Broker without an EventPolicy takes them.
// Claims the service network: `flock /tmp/neoset-service-network.lock npx vitest run --project integration-services test/integration/knative-e2e.test.ts`.
// KNATIVE_LOG=1 prints the stack's log and the containers' log tails at the end.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { resolveKn } from '../../dev/cluster/binaries.ts';
import { kubectl as kubectlOn, KNATIVE_NAMESPACE } from '../../dev/cluster/knative.ts';
import { neosetOnKnativeImageTable } from '../../dev/cluster/neoset-on-knative.ts';
import { deployNeoSetOnServing } from '../../dev/cluster/neoset-on-serving.ts';
import { SERVING_NAMESPACE, SHORT_AUTOSCALER_WINDOWS } from '../../dev/cluster/serving.ts';
import { runProcess } from '../../dev/cluster/processes.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';
import { KNATIVE_DIR, SYSTEM_NAMESPACE } from '../../dev/manifests.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { knativeComplaints } from '../../dev/kubelet/process/container-logs.ts';
import { readyObject, startKnativeStack, startReceiver, type KnativeStack, type ReceivedEvent } from '../cluster/knative-stack.ts';
import { imageOf, inPlace, settledOn } from '../e2e/helpers.ts';
import { LABEL_NEOSET_NAME } from '../../shared/api/names.ts';
import { startObserver, type NeoSetObject, type Observer } from '../e2e/observer.ts';
import { neosetManifest } from '../e2e/stack.ts';
import { startPrometheus, type Prometheus } from '../cluster/prometheus.ts';

const NODE = 'kn-e2e';
const APP = 'kn-e2e';
const HOOK_OWNER_IMAGE = 'neoset.local/hook-owner:1';
let stack: KnativeStack | undefined;
let knBinary = '';
let observer: Observer;
let ticks: { events(): Promise<ReceivedEvent[]> };
let prometheus: Prometheus | undefined;
/** Knative Serving's components whose metrics the dashboard and the alert rules read (port 9090, `metrics`). */
const SERVING_METRICS = ['activator', 'autoscaler'];
const timings: string[] = [];
const core = () => stack!.cp.kubeConfig().makeApiClient(CoreV1Api);
const custom = () => stack!.cp.kubeConfig().makeApiClient(CustomObjectsApi);
const kubectl = async (args: string[], input?: string) => {
  const r = await kubectlOn(stack!.cp.kubeconfigPath, args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.out}`);
  return r;
};
const note = (line: string) => (timings.push(line), console.log(line));

const apply = (manifest: Record<string, unknown>) => kubectl(['-n', APP, 'apply', '-f', '-'], JSON.stringify(manifest));
const patchNeoSet = (name: string, spec: Record<string, unknown>) => kubectl(['-n', APP, 'patch', 'neoset', name, '--type=merge', '-p', JSON.stringify({ spec })]);
const setImage = (name: string, image: string) =>
  kubectl(['-n', APP, 'patch', 'neoset', name, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }])]);

/** Waits on the observer's states until the NeoSet's status is for its generation and `predicate` holds. */
function until(name: string, what: string, predicate: (n: NeoSetObject, pods: Pod[]) => boolean, timeoutMs = 60_000) {
  return observer.until(
    `${name}: ${what}`,
    () => {
      const n = observer.neoset(name);
      if (!n || n.status?.observedGeneration !== n.metadata.generation) return false;
      return predicate(n, observer.pods(name)) ? n : false;
    },
    timeoutMs,
  );
}
const completed = (replicas: number) => (n: NeoSetObject, pods: Pod[]) =>
  n.status?.phase === 'Completed' && n.status?.updatedReplicas === replicas && n.status?.readyReplicas === replicas && pods.length === replicas && pods.every((p) => settledOn(p, n.status?.updateRevision));

/** Now on the API server's clock (a created object's creationTimestamp: whole seconds, rounded down). */
let clockObjects = 0;
async function apiNow(): Promise<number> {
  const cm = await core().createNamespacedConfigMap({ namespace: APP, body: { metadata: { name: `clock-${++clockObjects}` } } });
  return cm.metadata!.creationTimestamp!.getTime();
}

/** `kn` on the stack, as a user types it; throws with its output on a failure. */
async function kn(args: string[]): Promise<string> {
  const r = await runProcess(knBinary, [...args, '--kubeconfig', stack!.cp.kubeconfigPath], { timeoutMs: 240_000 });
  const out = `${r.stdout}${r.stderr}`;
  if (r.status !== 0) throw new Error(`kn ${args.join(' ')} (exit ${r.status ?? r.signal}): ${out}`);
  return out;
}

type KnativeService = { metadata: { generation?: number }; status?: { observedGeneration?: number; latestReadyRevisionName?: string; latestCreatedRevisionName?: string; traffic?: { revisionName?: string; percent?: number }[]; conditions?: { type: string; status: string }[] } };
const ksvc = async (name: string) => (await custom().getNamespacedCustomObject({ group: 'serving.knative.dev', version: 'v1', namespace: SYSTEM_NAMESPACE, plural: 'services', name })) as KnativeService;

/**
 * Resolves, with its revision, once the Knative Service `name` serves its latest spec: Ready for its
 * generation, all traffic on its latest created revision, `pods` of that revision Ready (at least).
 */
async function ksvcRolledOut(name: string, pods: number, timeoutMs = 120_000): Promise<string> {
  return waitFor(
    async () => {
      const s = await ksvc(name);
      const revision = s.status?.latestCreatedRevisionName;
      const serving = s.status?.observedGeneration === s.metadata.generation && s.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && revision === s.status?.latestReadyRevisionName && s.status?.traffic?.every((t) => t.revisionName === revision);
      if (!serving) return false;
      const ready = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `serving.knative.dev/revision=${revision}` })).items.filter((p) => !p.metadata?.deletionTimestamp && isReady(p));
      return ready.length >= pods && revision!;
    },
    { what: `ksvc ${name}: its latest revision serving, ${pods} pod(s) Ready`, timeoutMs, intervalMs: 250 },
  );
}

const isReady = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const live = async (namespace: string, prefix: string) => (await core().listNamespacedPod({ namespace })).items.filter((p) => p.metadata!.name!.startsWith(prefix) && !p.metadata?.deletionTimestamp);
const deadLetters = async () => {
  const dl = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: 'app.kubernetes.io/component=dead-letter' })).items.find((p) => !p.metadata?.deletionTimestamp)!;
  return ((await (await fetch(`http://${dl.status!.podIP}:8080/events`, { signal: AbortSignal.timeout(3000) })).json()) as ReceivedEvent[]).length;
};

beforeAll(async () => {
  const started = Date.now();
  knBinary = await resolveKn();
  stack = await startKnativeStack({
    nodeName: NODE,
    serving: true,
    imageTable: [
      ...neosetOnKnativeImageTable(),
      // examples/hooks/server.ts as a pod: in-cluster config from its ServiceAccount token, on the pod IP.
      { image: 'neoset.local/hook-owner:*', entrypoint: ['{node}', '{checkout}/examples/hooks/server.ts'], workingDir: '{checkout}', env: { PORT: '8090', HOST: '0.0.0.0' } },
    ],
  });
  note(`stack with Knative Eventing, Serving and Traefik in ${Date.now() - started} ms`);
  // Serving's metrics are off by default (metrics-protocol: none): what an operator sets to scrape
  // them; read at start, so the two components are restarted.
  await kubectl(['-n', SERVING_NAMESPACE, 'patch', 'configmap', 'config-observability', '--type=merge', '-p', JSON.stringify({ data: { 'metrics-protocol': 'prometheus' } })]);
  await kubectl(['-n', SERVING_NAMESPACE, 'rollout', 'restart', ...SERVING_METRICS.map((d) => `deployment/${d}`)]);
  for (const d of SERVING_METRICS) await kubectl(['-n', SERVING_NAMESPACE, 'rollout', 'status', `deployment/${d}`, '--timeout=120s']);
  const servingPods = (await core().listNamespacedPod({ namespace: SERVING_NAMESPACE })).items.filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase === 'Running');
  prometheus = await startPrometheus({
    scrapeIntervalMs: 2000,
    targets: SERVING_METRICS.map((d) => {
      const pod = servingPods.find((p) => p.metadata?.labels?.app === d)!;
      const port = pod.spec!.containers.flatMap((c) => c.ports ?? []).find((p) => p.name === 'metrics')!.containerPort;
      return { job: d, url: `http://${pod.status!.podIP}:${port}/metrics`, labels: { namespace: SERVING_NAMESPACE } };
    }),
  });
  await prometheus.targetsUp();
  const deployStarted = Date.now();
  try {
    await deployNeoSetOnServing(stack.cp, { deployer: 'kn', kn: knBinary, log: (l) => stack!.log.push(l), timeoutMs: 200_000 });
    note(`knative/ deployed with kn and Ready in ${Date.now() - deployStarted} ms`);
    note(`kn service list -n ${SYSTEM_NAMESPACE}:\n${await kn(['service', 'list', '-n', SYSTEM_NAMESPACE])}`);
    // What is dead-lettered is counted from the sink's memory: one pod kept, not scaled to zero.
    await kn(['service', 'update', 'neoset-dead-letter', '-n', SYSTEM_NAMESPACE, '--scale-min', '1']);
    await ksvcRolledOut('neoset-dead-letter', 1);
  } catch (err) {
    console.log(stack.log.slice(-40).join('\n'), '\n', stack.containerLogTails());
    throw err;
  }
  await core().createNamespace({ body: { metadata: { name: APP } } });
  observer = startObserver(stack.cp.kubeConfig(), APP);
  await observer.ready;
  // The PingSource's ticks as the Broker delivers them: when each resync came (for the faults' recovery).
  ticks = await startReceiver(stack.cp, SYSTEM_NAMESPACE, 'ticks');
  await trigger(SYSTEM_NAMESPACE, 'ticks', 'neoset', { type: 'dev.knative.sources.ping' }, { ref: { apiVersion: 'v1', kind: 'Service', name: 'ticks' } });
}, 400_000);

afterAll(async () => {
  observer?.stop();
  await prometheus?.stop();
  console.log(timings.join('\n'));
  if (process.env.KNATIVE_LOG) console.log(stack?.log.join('\n'), '\n', stack?.containerLogTails());
  await stack?.stop();
}, 90_000);

async function trigger(namespace: string, name: string, broker: string, attributes: Record<string, string>, subscriber: Record<string, unknown>): Promise<void> {
  await custom().createNamespacedCustomObject({
    group: 'eventing.knative.dev',
    version: 'v1',
    namespace,
    plural: 'triggers',
    body: { apiVersion: 'eventing.knative.dev/v1', kind: 'Trigger', metadata: { name }, spec: { broker, filter: { attributes }, subscriber } },
  });
  await readyObject(stack!.cp, { group: 'eventing.knative.dev', version: 'v1', plural: 'triggers', namespace, name });
}

/** neoset_api_requests_total of each pod of `revisions` (its own /metrics at its pod IP): what each instance did. */
async function requestsPerInstance(revisions: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const revision of revisions) {
    const pods = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `serving.knative.dev/revision=${revision}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
    for (const p of pods) {
      const metrics = await (await fetch(`http://${p.status!.podIP}:8080/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      counts[p.metadata!.name!] = [...metrics.matchAll(/^neoset_api_requests_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    }
  }
  return counts;
}

const canaryOf = (n: NeoSetObject) => (n.status?.canary?.revision === n.status?.updateRevision ? n.status?.canary : undefined);

describe('NeoSet end to end on the real Knative Serving and Eventing', () => {
  it('the automated canary: partition 2, a 5 s pause, partition 0 — the pause lasts its 5 s on the API server clock, Completed', async () => {
    const name = 'canary';
    const steps = [{ partition: 2 }, { pause: { duration: '5s' } }, { partition: 0 }];
    await apply(neosetManifest({ name, replicas: 3, image: 'mysql:8.0', updateStrategy: { canary: { steps } } }));
    await until(name, '3 ready pods', (n) => n.status?.readyReplicas === 3 && n.status?.phase === 'Idle', 90_000);
    const edited = Date.now();
    await setImage(name, 'mysql:8.1');
    const paused = await until(name, 'pod 2 on 8.1, the timed pause running', (n) => canaryOf(n)?.stepIndex === 1);
    const pauseSeen = Date.now();
    expect(observer.pods(name).map(imageOf)).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.1']);
    const pauseStarted = Date.parse(canaryOf(paused)!.stepStartedAt);
    const next = await until(name, 'the pause over', (n) => (canaryOf(n)?.stepIndex ?? 0) >= 2, 30_000);
    const pauseEndSeen = Date.now();
    const apiAtEnd = await apiNow();
    const done = await until(name, 'Completed', completed(3), 60_000);
    const measured = {
      'image patched → pause started, seen (ms)': pauseSeen - edited,
      'pause: stamped start → next step stamped (ms, API server clock)': Date.parse(canaryOf(next)!.stepStartedAt) - pauseStarted,
      'pause: stamped start → API server clock once seen over (ms)': apiAtEnd - pauseStarted,
      'pause: seen started → seen over (ms, this machine)': pauseEndSeen - pauseSeen,
      'pause over → Completed (ms)': Date.now() - pauseEndSeen,
    };
    note(`[canary] ${JSON.stringify(measured)}`);
    // Never shorter than 5 s on the API server's clock (both stamps are NeoSet's, on that clock).
    expect(Date.parse(canaryOf(next)!.stepStartedAt) - pauseStarted).toBeGreaterThanOrEqual(5000);
    // creationTimestamp rounds down to the second, as the stamps do: the API server's now, once seen over.
    expect(apiAtEnd - pauseStarted).toBeGreaterThanOrEqual(5000);
    // Over by the reconcile function's own re-check: the PingSource's minute is not what ends it.
    expect(pauseEndSeen - pauseSeen).toBeLessThan(5000 + 5000);
    expect(canaryOf(done)?.stepIndex).toBe(3);
    expect(observer.violations).toEqual([]);
  }, 180_000);

  it('the update hooks example: lifecycle CloudEvents to the owner pod through the Broker of knative/hooks.yaml, K_SINK set by its SinkBinding; the primary moved before its drain', async () => {
    // knative/hooks.yaml as written (its SinkBinding on the neoset-reconcile Knative Service), but its
    // Triggers' subscriber: the owner here is a plain pod behind a v1 Service.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a manifest, edited in place
    const objects = parseAllDocuments(readFileSync(join(KNATIVE_DIR, 'hooks.yaml'), 'utf8')).map((d) => d.toJS() as Record<string, any>);
    const broker = objects.find((o) => o.kind === 'Broker')!;
    const binding = objects.find((o) => o.kind === 'SinkBinding')!;
    expect(binding.spec.subject).toEqual({ apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'neoset-reconcile' });
    const triggers = objects.filter((o) => o.kind === 'Trigger');
    for (const t of triggers) t.spec.subscriber.ref = { apiVersion: 'v1', kind: 'Service', name: 'mysql-hook-owner', namespace: APP };
    expect(triggers.map((t) => t.spec.filter.attributes.type)).toEqual(['io.neo.neoset.lifecycle.PreparingUpdate', 'io.neo.neoset.lifecycle.Updated']);

    // The owner: examples/hooks/server.ts in a pod of the app's namespace, allowed to read and label its pods.
    const owner = 'mysql-hook-owner';
    await kubectl(['apply', '-f', '-'], JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: owner, namespace: APP } },
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: owner, namespace: APP }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'patch', 'update'] }] },
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: owner, namespace: APP }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: owner }, subjects: [{ kind: 'ServiceAccount', name: owner, namespace: APP }] },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: owner, namespace: APP }, spec: { selector: { app: owner }, ports: [{ port: 80, targetPort: 8090 }] } },
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: owner, namespace: APP, labels: { app: owner } },
          spec: {
            serviceAccountName: owner,
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'owner', image: HOOK_OWNER_IMAGE, env: [{ name: 'NAMESPACE', value: APP }, { name: 'NEOSET', value: 'mysql' }], readinessProbe: { httpGet: { path: '/healthz', port: 8090 }, periodSeconds: 1 } }],
          },
        },
      ],
    }));
    await waitFor(async () => isReady(await core().readNamespacedPod({ namespace: APP, name: owner })), { what: 'the hook owner pod Ready', timeoutMs: 30_000 });

    const t0 = Date.now();
    await kubectl(['apply', '-f', '-'], JSON.stringify(broker));
    await readyObject(stack!.cp, { group: 'eventing.knative.dev', version: 'v1', plural: 'brokers', namespace: SYSTEM_NAMESPACE, name: broker.metadata.name });
    // A tap on the hooks Broker: every lifecycle event, as delivered.
    const tap = await startReceiver(stack!.cp, SYSTEM_NAMESPACE, 'hooks-tap');
    await trigger(SYSTEM_NAMESPACE, 'hooks-tap', broker.metadata.name, {}, { ref: { apiVersion: 'v1', kind: 'Service', name: 'hooks-tap' } });
    for (const t of triggers) {
      await kubectl(['apply', '-f', '-'], JSON.stringify(t));
      await readyObject(stack!.cp, { group: 'eventing.knative.dev', version: 'v1', plural: 'triggers', namespace: SYSTEM_NAMESPACE, name: t.metadata.name });
    }
    // Knative's SinkBinding webhook and controller put K_SINK on the Knative Service's template: a new revision.
    await kubectl(['apply', '-f', '-'], JSON.stringify(binding));
    await readyObject(stack!.cp, { group: 'sources.knative.dev', version: 'v1', plural: 'sinkbindings', namespace: SYSTEM_NAMESPACE, name: binding.metadata.name });
    const sinkOf = async () =>
      ((await custom().getNamespacedCustomObject({ group: 'serving.knative.dev', version: 'v1', namespace: SYSTEM_NAMESPACE, plural: 'services', name: 'neoset-reconcile' })) as { spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } } }).spec.template.spec.containers[0].env?.find((e) => e.name === 'K_SINK')?.value;
    const sink = await waitFor(sinkOf, { what: 'K_SINK on neoset-reconcile', timeoutMs: 30_000, intervalMs: 250 });
    expect(sink).toBe(`http://broker-ingress.${KNATIVE_NAMESPACE}.svc.cluster.local/${SYSTEM_NAMESPACE}/neoset-hooks`);
    const revision = await ksvcRolledOut('neoset-reconcile', 1);
    note(`[hooks] Broker, Triggers, owner pod and SinkBinding Ready, reconcile's revision ${revision} serving with K_SINK=${sink} in ${Date.now() - t0} ms`);

    // examples/hooks/neoset.yaml as written (and its headless Service), in the app's namespace.
    await kubectl(['-n', APP, 'apply', '-f', 'examples/hooks/neoset.yaml']);
    const labels = (p: Pod) => p.metadata.labels ?? {};
    await until('mysql', '3 pods Ready, guarded, a primary', (n, pods) => n.status?.readyReplicas === 3 && pods.length === 3 && pods.every((p) => labels(p)['mysql.neo.io/serving'] === 'true') && pods.some((p) => labels(p)['mysql.neo.io/role'] === 'primary'), 60_000);
    const primaryBefore = observer.pods('mysql').find((p) => labels(p)['mysql.neo.io/role'] === 'primary')!.metadata.name;
    const t1 = Date.now();
    await setImage('mysql', 'mysql:8.1');
    await until('mysql', 'Completed, every pod serving again', (n, pods) => completed(3)(n, pods) && pods.every((p) => labels(p)['mysql.neo.io/serving'] === 'true' && labels(p)['neoset.neo.io/lifecycle-state'] === 'Normal'), 90_000);
    const rolled = Date.now() - t1;
    const pods = observer.pods('mysql');
    const primaries = pods.filter((p) => labels(p)['mysql.neo.io/role'] === 'primary').map((p) => p.metadata.name);
    // Through the hooks Broker: each pod's PreparingUpdate, Updating, Updated, Normal, from the reconcile function.
    const seen = await waitFor(async () => {
      const events = (await tap.events()).filter((e) => e.attributes.type.startsWith('io.neo.neoset.lifecycle.'));
      const prep = new Set(events.filter((e) => e.attributes.type.endsWith('.PreparingUpdate')).map((e) => e.attributes.subject));
      return prep.size === 3 && events;
    }, { what: "every pod's PreparingUpdate at the hooks tap", timeoutMs: 15_000 });
    const byPod = Object.fromEntries(['mysql-0', 'mysql-1', 'mysql-2'].map((p) => [p, [...new Set(seen.filter((e) => e.attributes.subject === p).map((e) => e.attributes.type.slice('io.neo.neoset.lifecycle.'.length)))]]));
    const ownerLines = stack!.containerLogTails().split('\n').filter((l) => l.startsWith('[hook owner]'));
    note(`[hooks] rollout of 3 guarded pods completed in ${rolled} ms; primary ${primaryBefore} → ${primaries.join(',')}; states at the tap ${JSON.stringify(byPod)}; owner: ${ownerLines.join(' | ')}`);
    for (const states of Object.values(byPod)) expect(states).toEqual(expect.arrayContaining(['PreparingUpdate', 'Updating', 'Updated', 'Normal']));
    expect(seen[0].headers['content-type']).toMatch(/json/);
    expect(seen[0].attributes.source).toBe(`/apis/neo.io/v1alpha1/namespaces/${APP}/neosets/mysql`);
    // One primary, moved off the pod it was on (that pod was drained only after the owner moved it).
    expect(primaries).toHaveLength(1);
    expect(primaries[0]).not.toBe(primaryBefore);
    expect(ownerLines.some((l) => l.includes(`${primaryBefore}: go, primary moved to ${primaries[0]}`))).toBe(true);
    expect(rolled).toBeLessThan(60_000); // no HookTimeout (120 s): every event reached the owner
    expect(observer.violations).toEqual([]);
  }, 240_000);

  it('3 reconcile and 2 readiness instances behind the Broker: three rollouts at once, a scale during one, a pause and a resume — all complete, the instances share the deliveries; scaled back in meanwhile, nothing dead-lettered', async () => {
    const t0 = Date.now();
    const scale = (name: string, min: number) => kn(['service', 'update', name, '-n', SYSTEM_NAMESPACE, '--scale-min', String(min)]);
    await Promise.all([scale('neoset-reconcile', 3), scale('neoset-readiness', 2)]);
    const scaled = await Promise.all([ksvcRolledOut('neoset-reconcile', 3), ksvcRolledOut('neoset-readiness', 2)]);
    note(`[concurrency] kn service update --scale-min: 3 reconcile + 2 readiness pods Ready (revisions ${scaled.join(', ')}) in ${Date.now() - t0} ms`);
    const name = 'conc';
    // Two more NeoSets rolling at the same time: deliveries overlap, so the Broker's filter holds
    // several connections to each function's Service (kube-proxy balances connections, not requests).
    const others = ['conc-b', 'conc-c'];
    await apply(neosetManifest({ name, replicas: 6, image: 'mysql:8.0', updateStrategy: { maxUnavailable: 1 } }));
    for (const o of others) await apply(neosetManifest({ name: o, replicas: 8, image: 'mysql:8.0', updateStrategy: { maxUnavailable: 3 } }));
    await until(name, '6 ready pods', (n) => n.status?.readyReplicas === 6 && n.status?.phase === 'Idle', 90_000);
    for (const o of others) await until(o, '8 ready pods', (n) => n.status?.readyReplicas === 8 && n.status?.phase === 'Idle', 90_000);
    const before = await requestsPerInstance(scaled);
    const t1 = Date.now();
    await Promise.all([name, ...others].map((n) => setImage(n, 'mysql:8.1')));
    await until(name, 'the first pod updated', (n) => (n.status?.updatedReplicas ?? 0) >= 1);
    await patchNeoSet(name, { replicas: 8 });
    await patchNeoSet(name, { updateStrategy: { pause: true } });
    const paused = await until(name, 'Paused', (n) => n.status?.phase === 'Paused', 30_000);
    // Paused: what was in flight finishes, nothing new starts (checked over 3 s, on the pods: status
    // counts may still catch up with an update that finished).
    await until(name, 'nothing in flight', (_n, pods) => pods.every((p) => !inPlace(p)), 30_000);
    const heldSince = Date.now();
    const images = () => Object.fromEntries(observer.pods(name).map((p) => [p.metadata.name, imageOf(p)]));
    const held = images();
    const heldAt = Object.values(held).filter((i) => i === 'mysql:8.1').length;
    await new Promise((r) => setTimeout(r, 3000));
    const startedWhilePaused = observer.podHistory.filter((h) => h.seenAt >= heldSince && h.pod.metadata.labels?.[LABEL_NEOSET_NAME] === name && inPlace(h.pod)).map((h) => h.pod.metadata.name);
    expect(startedWhilePaused).toEqual([]);
    // (Pods 6 and 7 of the scale may be created meanwhile, on the stable revision: not an update.)
    const now = images();
    expect(Object.fromEntries(Object.keys(held).map((p) => [p, now[p]]))).toEqual(held);
    expect(paused.status?.phase).toBe('Paused');
    // What the five instances did so far (conc-b and conc-c may still be rolling).
    const during = await requestsPerInstance(scaled);
    const delta = Object.fromEntries(Object.entries(during).map(([pod, n]) => [pod, n - (before[pod] ?? 0)]));

    // Scaled back in (npm run dev's 1 and 0) while paused, then resumed: new revisions, and the five
    // pods of the scaled ones deleted while the rollouts' events flow — each pod's queue-proxy drains
    // what it was sent (30 s after SIGTERM), the function's preStop waits on it (the kubelet's process
    // grace cap, PROCESS_GRACE_SECONDS). Nothing may be lost: no event dead-lettered, every rollout done.
    const letters = await deadLetters();
    /** Each scaled-in pod: when it was first seen deleted, when gone (this machine's clock). */
    const scaledPods = new Map<string, { deleted?: number; gone?: number }>();
    for (const revision of scaled) for (const p of (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `serving.knative.dev/revision=${revision}` })).items) scaledPods.set(p.metadata!.name!, {});
    const watchPods = async () => {
      const now = new Map((await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE })).items.map((p) => [p.metadata!.name!, p]));
      for (const [name, seen] of scaledPods) {
        if (now.get(name)?.metadata?.deletionTimestamp) seen.deleted ??= Date.now();
        if (!now.has(name)) seen.gone ??= Date.now();
      }
      return [...scaledPods.values()].every((seen) => seen.gone !== undefined);
    };
    const watching = waitFor(watchPods, { what: 'the scaled-in pods gone', timeoutMs: 240_000, intervalMs: 250 });
    await Promise.all([scale('neoset-reconcile', 1), scale('neoset-readiness', 0)]);
    const scaledIn = await Promise.all([ksvcRolledOut('neoset-reconcile', 1), ksvcRolledOut('neoset-readiness', 0)]);
    await patchNeoSet(name, { updateStrategy: { pause: false } });
    const done = await until(name, 'Completed with 8', completed(8), 120_000);
    for (const o of others) await until(o, 'Completed', completed(8), 120_000);
    const took = Date.now() - t1;
    await watching;
    // Each scaled-in pod from deleted to gone: its drain, then its containers' stop.
    const drains = Object.fromEntries([...scaledPods].map(([pod, seen]) => [pod, seen.gone! - (seen.deleted ?? seen.gone!)]));
    const deadLettered = (await deadLetters()) - letters;
    expect(done.status?.currentRevision).toBe(done.status?.updateRevision);
    expect(observer.pods(name).map(imageOf)).toEqual(Array(8).fill('mysql:8.1'));
    note(`[concurrency] 3 rollouts (one scaled 6→8, paused with ${heldAt} of ${Object.keys(held).length} pods on mysql:8.1, resumed) completed in ${took} ms; API requests per instance until the pause ${JSON.stringify(delta)}; invariant checks so far ${observer.checks}`);
    note(`[concurrency] scaled in (kn service update --scale-min 1 / 0: revisions ${scaledIn.join(', ')}) while paused, then resumed: each of the five pods deleted → gone in ${JSON.stringify(drains)} ms; dead letters +${deadLettered}`);
    expect(Object.keys(delta)).toHaveLength(5);
    const working = (component: string) => Object.entries(delta).filter(([pod, n]) => pod.startsWith(`neoset-${component}-`) && n > 0).length;
    expect(working('reconcile')).toBeGreaterThanOrEqual(2);
    expect(working('readiness')).toBeGreaterThanOrEqual(1);
    expect(deadLettered).toBe(0);
    // Drained, not cut: the kubelet honoured the revisions' grace (60 s reconcile, 30 s readiness), a
    // pod stayed until queue-proxy's 30 s drain was over (at the 2 s cap it went within ~3 s).
    expect(Math.min(...Object.values(drains))).toBeGreaterThanOrEqual(25_000);
    expect(observer.violations).toEqual([]);
  }, 480_000);

  it("Knative's own pods killed mid-rollout, each once — the adapters, the Broker ingress, the filter, the IMC dispatcher: every rollout completes", async () => {
    const name = 'faults';
    const REPLICAS = 6;
    await apply(neosetManifest({ name, replicas: REPLICAS, image: 'mysql:8.0' }));
    await until(name, `${REPLICAS} ready pods`, (n) => n.status?.readyReplicas === REPLICAS && n.status?.phase === 'Idle', 90_000);
    const kills = [
      { what: 'the ApiServerSource adapters', namespace: SYSTEM_NAMESPACE, prefix: 'apiserversource-neoset-' },
      { what: 'the Broker ingress', namespace: KNATIVE_NAMESPACE, prefix: 'mt-broker-ingress-' },
      { what: 'the Broker filter', namespace: KNATIVE_NAMESPACE, prefix: 'mt-broker-filter-' },
      { what: 'the IMC dispatcher', namespace: KNATIVE_NAMESPACE, prefix: 'imc-dispatcher-' },
    ];
    const results: string[] = [];
    let version = 1;
    for (const kill of kills) {
      const image = `mysql:8.${version++}`;
      const victims = await live(kill.namespace, kill.prefix);
      expect(victims.length, kill.what).toBeGreaterThan(0);
      const letters = await deadLetters();
      await setImage(name, image);
      // Mid-rollout: the first pod's update begun (in flight or done), the NeoSet not yet Completed.
      await observer.until(`${image}: mid-rollout`, () => observer.pods(name).some((p) => imageOf(p) === image), 60_000);
      const midway = observer.pods(name).map(imageOf).join(',');
      expect(observer.neoset(name)?.status?.phase, `${image} already Completed before the kill`).not.toBe('Completed');
      const killedAt = Date.now();
      const killedOnApi = new Date(await apiNow()).toISOString();
      await kubectl(['-n', kill.namespace, 'delete', 'pod', '--grace-period=1', '--wait=false', ...victims.map((p) => p.metadata!.name!)]);
      const uids = new Set(victims.map((p) => p.metadata!.uid));
      // Recreated by its ReplicaSet, run by the process-mode kubelet, Ready again.
      const back = await waitFor(async () => {
        const now = await live(kill.namespace, kill.prefix);
        return now.length === victims.length && now.every((p) => !uids.has(p.metadata!.uid) && isReady(p)) && now;
      }, { what: `${kill.what} recreated and Ready`, timeoutMs: 60_000, intervalMs: 250 });
      const readyAfter = Date.now() - killedAt;
      const done = await until(name, `${image}: Completed after ${kill.what} killed`, completed(REPLICAS), 150_000);
      const completedAfter = Date.now() - killedAt;
      const tickTimes = (await ticks.events()).map((e) => Date.parse(e.attributes.time)).filter((t) => t >= killedAt - 1000 && t <= Date.now());
      const line = `killed ${kill.what} (${victims.map((p) => p.metadata!.name).join(', ')}) at ${killedOnApi} mid-rollout to ${image} (pods then: ${midway}): replacement Ready after ${readyAfter} ms (${back.map((p) => p.metadata!.name).join(', ')}); rollout Completed ${completedAfter} ms after the kill; PingSource ticks in between: ${tickTimes.length}; dead letters +${(await deadLetters()) - letters}`;
      // What Knative's pods on the event path logged (warn or worse) from the kill to the end: what was lost where.
      const complaints: Record<string, unknown> = {};
      for (const k of kills) {
        const c = knativeComplaints(await live(k.namespace, k.prefix), killedAt);
        if (c.count) complaints[k.prefix.replace(/-$/, '')] = c;
      }
      results.push(line);
      note(`[faults] ${line}`);
      note(`[faults]   Knative's warnings since the kill: ${JSON.stringify(complaints)}`);
      expect(done.status?.updatedReplicas).toBe(REPLICAS);
      expect(observer.pods(name).map(imageOf)).toEqual(Array(REPLICAS).fill(image));
    }
    expect(results).toHaveLength(4);
    note(`[faults] invariant checks ${observer.checks}, violations ${observer.violations.length}`);
    expect(observer.violations).toEqual([]);
  }, 700_000);

  it('a new function image with kn service update --image, mid-rollout: new revisions take over, old and new deciding during the switch; nothing dead-lettered, no invariant violated', async () => {
    const name = 'image';
    const REPLICAS = 6;
    const services = ['neoset-reconcile', 'neoset-readiness'];
    // The image the manifests name, another tag: the image table runs any tag of it from this checkout.
    const current = readFileSync(join(KNATIVE_DIR, 'reconcile.yaml'), 'utf8').match(/image: (ghcr\.io\/neoset\/neoset:\S+)/)![1];
    const next = `${current}-next`;
    // minReadySeconds 8: a rollout of about a minute, so that the switch (about 20 s) falls inside it.
    await apply(neosetManifest({ name, replicas: REPLICAS, image: 'mysql:8.0', spec: { minReadySeconds: 8 }, updateStrategy: { maxUnavailable: 1 } }));
    await until(name, `${REPLICAS} ready pods`, (n) => n.status?.readyReplicas === REPLICAS && n.status?.phase === 'Idle', 120_000);
    const old = await Promise.all(services.map(async (s) => (await ksvc(s)).status!.latestReadyRevisionName!));
    const letters = await deadLetters();
    const base = await requestsPerInstance([old[0]]);
    const t0 = Date.now();
    await setImage(name, 'mysql:8.1');
    await until(name, 'the first pod updated', (n) => (n.status?.updatedReplicas ?? 0) >= 1);
    const byOld = await requestsPerInstance([old[0]]);
    const switchedAt = Date.now();
    await Promise.all(services.map((s) => kn(['service', 'update', s, '-n', SYSTEM_NAMESPACE, '--image', next])));
    const fresh = await Promise.all([ksvcRolledOut('neoset-reconcile', 1), ksvcRolledOut('neoset-readiness', 0)]);
    const switched = Date.now();
    const atSwitch = observer.neoset(name)?.status?.updatedReplicas ?? 0;
    // The old reconcile pod drains (queue-proxy's 30 s) after the switch: what it did until now.
    const oldDuring = await requestsPerInstance([old[0]]).catch(() => ({}) as Record<string, number>);
    const done = await until(name, 'Completed on mysql:8.1', completed(REPLICAS), 180_000);
    const byNew = await requestsPerInstance([fresh[0]]);
    const deadLettered = (await deadLetters()) - letters;
    const sum = (counts: Record<string, number>, since: Record<string, number> = {}) => Object.entries(counts).reduce((total, [pod, n]) => total + n - (since[pod] ?? 0), 0);
    const images = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `serving.knative.dev/revision=${fresh[0]}` })).items.flatMap((p) => p.spec!.containers.map((c) => c.image));
    note(`[image] kn service update --image ${next}: revisions ${old.join(', ')} → ${fresh.join(', ')} serving in ${switched - switchedAt} ms, mid-rollout (${atSwitch} of ${REPLICAS} pods updated then); API requests: the old reconcile revision ${sum(byOld, base)} before the switch, ${Object.keys(oldDuring).length ? sum(oldDuring, base) : 'gone'} by its end; the new ${sum(byNew)}; rollout Completed ${Date.now() - t0} ms after the image edit; dead letters +${deadLettered}; invariant checks ${observer.checks}`);
    expect(images).toContain(next);
    expect(done.status?.currentRevision).toBe(done.status?.updateRevision);
    // Both revisions decided on this rollout: the old one began it, the new one finished it.
    expect(sum(byOld, base)).toBeGreaterThan(0);
    expect(atSwitch).toBeLessThan(REPLICAS);
    expect(sum(byNew)).toBeGreaterThan(0);
    expect(deadLettered).toBe(0);
    expect(observer.violations).toEqual([]);
  }, 600_000);

  it('at rest (SPEC §2.4): the fast tick deleted, both functions at 0 pods; an update made at zero completes — its cold start beside a warm one, nothing dead-lettered; an event lost at rest recovered by the slow tick', async () => {
    // Serving's windows shortened for this scenario (stable-window and scale-to-zero grace 6 s, as
    // knative-serving.test's; Serving's defaults take a minute and a half more to reach zero).
    const autoscaler = (data: Record<string, string | null>) => kubectl(['-n', SERVING_NAMESPACE, 'patch', 'configmap', 'config-autoscaler', '--type=merge', '-p', JSON.stringify({ data })]);
    await autoscaler(SHORT_AUTOSCALER_WINDOWS);
    const resync = (schedule: string) => kubectl(['-n', SYSTEM_NAMESPACE, 'patch', 'pingsource', 'neoset-resync', '--type=merge', '-p', JSON.stringify({ spec: { schedule } })]);
    try {
      // The manifests' min-scale (0) again, after the scenarios above held instances warm.
      await Promise.all([kn(['service', 'update', 'neoset-reconcile', '-n', SYSTEM_NAMESPACE, '--scale-min', '0']), kn(['service', 'update', 'neoset-readiness', '-n', SYSTEM_NAMESPACE, '--scale-min', '0'])]);
      const name = 'rest';
      await apply(neosetManifest({ name, replicas: 3, image: 'mysql:8.0' }));
      await until(name, '3 ready pods', (n) => n.status?.readyReplicas === 3 && n.status?.phase === 'Idle', 120_000);
      const settled = Date.now();
      const fastTick = () => custom().getNamespacedCustomObject({ group: 'sources.knative.dev', version: 'v1', namespace: SYSTEM_NAMESPACE, plural: 'pingsources', name: 'neoset-rollout-tick' }).then(() => true, () => false);
      expect(await fastTick()).toBe(true); // kept by the runs that created the pods
      // Unstamped for 120 s (RETIRE_AFTER_MS), then deleted by the next tick whose sweep finds every NeoSet at rest.
      await waitFor(async () => !(await fastTick()), { what: 'the fast tick deleted', timeoutMs: 300_000, intervalMs: 1000 });
      const retired = Date.now();
      const functionPods = async () => (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: 'app.kubernetes.io/component in (reconcile,readiness)' })).items.filter((p) => !p.metadata?.deletionTimestamp);
      await waitFor(async () => (await functionPods()).length === 0, { what: 'reconcile and readiness at 0 pods', timeoutMs: 180_000, intervalMs: 500 });
      const atZero = Date.now();
      // The idle period: sampled each second. The slow tick (every 10 minutes, on the clock's tens) may
      // wake reconcile once, for about 10 s with these windows (a run of 2026-12-07: 78 of 88 samples
      // at zero over 90 s, the 16:30 tick inside; another at 180 s: 161 of 177, one wake of 16 s): 240 s,
      // so that one wake (at most one: the period is 10 minutes) stays under a tenth of it.
      const IDLE_MS = 240_000;
      let samples = 0;
      let zero = 0;
      const awake: string[] = [];
      while (Date.now() - atZero < IDLE_MS) {
        samples++;
        const pods = await functionPods();
        if (pods.length === 0) zero++;
        else awake.push(`${new Date().toISOString().slice(11, 19)} ${pods.map((p) => p.metadata!.labels!['app.kubernetes.io/component']).join('+')}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
      const idle = zero / samples;
      note(`[at rest] NeoSet settled → fast tick deleted ${retired - settled} ms → both functions at 0 pods ${atZero - retired} ms later; then at 0 pods ${(idle * 100).toFixed(1)} % of ${IDLE_MS / 1000} s (${zero}/${samples} samples, stable-window ${SHORT_AUTOSCALER_WINDOWS['stable-window']}; awake at ${awake.length ? `${awake[0]} … ${awake.at(-1)}` : 'no sample'})`);
      expect(idle).toBeGreaterThanOrEqual(0.9);

      // The Knative cold start: an update made at zero → the first pod drained (InPlaceUpdateReady False).
      const letters = await deadLetters();
      const drained = (since: number) => (n: NeoSetObject, pods: Pod[]) => pods.some((p) => p.status?.conditions?.some((c) => c.type === 'InPlaceUpdateReady' && c.status === 'False') ?? false) && Date.now() >= since;
      expect((await functionPods()).length).toBe(0);
      const coldAt = Date.now();
      await setImage(name, 'mysql:8.1');
      await observer.until(`${name}: a pod draining (cold)`, () => drained(coldAt)(observer.neoset(name)!, observer.pods(name)), 120_000);
      const cold = Date.now() - coldAt;
      await until(name, 'Completed on mysql:8.1', completed(3), 180_000);
      // The same step with reconcile warm (it just finished the rollout).
      const warmAt = Date.now();
      await setImage(name, 'mysql:8.2');
      await observer.until(`${name}: a pod draining (warm)`, () => drained(warmAt)(observer.neoset(name)!, observer.pods(name)), 60_000);
      const warm = Date.now() - warmAt;
      await until(name, 'Completed on mysql:8.2', completed(3), 180_000);
      const deadLettered = (await deadLetters()) - letters;
      note(`[at rest] Knative cold start (update at 0 pods → first pod drained): ${cold} ms; warm: ${warm} ms; dead letters +${deadLettered}`);
      expect(deadLettered).toBe(0);
      expect(observer.violations).toEqual([]);

      // An event lost at rest (SPEC §2.4): recovered by the slow tick, the only one then. Its 10 minutes
      // made a minute here; the fast tick removed as an idle sweep would; the NeoSet Trigger deleted, so
      // the update's event reaches no one.
      await resync('* * * * *');
      const pingsources = { group: 'sources.knative.dev', version: 'v1', namespace: SYSTEM_NAMESPACE, plural: 'pingsources' };
      await custom().deleteNamespacedCustomObject({ ...pingsources, name: 'neoset-rollout-tick' }).catch(() => undefined);
      const triggers = { group: 'eventing.knative.dev', version: 'v1', namespace: SYSTEM_NAMESPACE, plural: 'triggers' };
      const kept = (await custom().getNamespacedCustomObject({ ...triggers, name: 'neoset-reconcile-neosets' })) as { metadata: Record<string, unknown>; spec: unknown };
      await custom().deleteNamespacedCustomObject({ ...triggers, name: 'neoset-reconcile-neosets' });
      try {
        await waitFor(async () => (await functionPods()).length === 0, { what: 'reconcile and readiness at 0 pods again', timeoutMs: 180_000, intervalMs: 500 });
        expect(await fastTick()).toBe(false);
        const lostAt = Date.now();
        await setImage(name, 'mysql:8.3');
        await observer.until(`${name}: a pod draining after a lost event`, () => drained(lostAt)(observer.neoset(name)!, observer.pods(name)), 150_000);
        const recovered = Date.now() - lostAt;
        const tickSources = [...new Set((await ticks.events()).filter((e) => Date.parse(e.attributes.time) >= lostAt - 1000).map((e) => e.attributes.source))];
        note(`[at rest] an event lost at rest (no NeoSet Trigger, no fast tick, both functions at 0 pods): the rollout began ${recovered} ms after the update, woken by the slow tick (every minute here, every 10 in knative/eventing.yaml); ticks since from ${JSON.stringify(tickSources)}`);
        expect(recovered).toBeLessThan(150_000);
      } finally {
        const { name: triggerName, namespace, labels, annotations } = kept.metadata as { name: string; namespace: string; labels?: unknown; annotations?: unknown };
        await custom().createNamespacedCustomObject({ ...triggers, body: { apiVersion: 'eventing.knative.dev/v1', kind: 'Trigger', metadata: { name: triggerName, namespace, labels, annotations }, spec: kept.spec } });
      }
      await until(name, 'Completed on mysql:8.3', completed(3), 180_000);
      expect(observer.violations).toEqual([]);
    } finally {
      await autoscaler(Object.fromEntries(Object.keys(SHORT_AUTOSCALER_WINDOWS).map((k) => [k, null])));
      await resync('*/10 * * * *');
    }
  }, 1_200_000);
  it("Knative Serving's metrics in Prometheus: the activator's requests, latency and queue, the autoscaler's pods — each Serving expression of the dashboard returns a series, every alert parses", async () => {
    // The scenarios above sent every event through the activator (containerConcurrency 50 below the
    // target burst capacity keeps it in the path) and woke reconcile from zero.
    const by = async (expr: string) => (await prometheus!.query(expr)).map((s): Record<string, string> => ({ ...s.metric, value: s.value[1] }));
    const requests = await by('sum by (kn_service_name, http_response_status_code) (http_server_request_duration_seconds_count{job="activator", k8s_namespace_name="neoset-system"})');
    const queued = await by('max_over_time(sum by (kn_revision_name) (kn_revision_request_queued{k8s_namespace_name="neoset-system"})[30m:2s])');
    const pods = await by('sum by (kn_service_name) (kn_revision_pods_desired{k8s_namespace_name="neoset-system"})');
    note(`[serving metrics] activator requests ${JSON.stringify(requests)}; most queued at once ${JSON.stringify(queued)}; autoscaler desired pods ${JSON.stringify(pods)}`);
    expect(requests.filter((r) => r.kn_service_name === 'neoset-reconcile' && Number(r.value) > 0).length).toBeGreaterThan(0);
    expect(queued.some((q) => /^neoset-reconcile-/.test(q.kn_revision_name ?? ''))).toBe(true);
    expect(pods.map((p) => p.kn_service_name)).toEqual(expect.arrayContaining(['neoset-reconcile', 'neoset-readiness']));

    const dashboard = JSON.parse(readFileSync(join(KNATIVE_DIR, 'grafana-dashboard.json'), 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
    const [rules] = parseAllDocuments(readFileSync(join(KNATIVE_DIR, 'prometheus-rules.yaml'), 'utf8')).map((d) => d.toJS() as { spec: { groups: { rules: { alert: string; expr: string }[] }[] } });
    const served = /\b(kn_revision_|http_server_request_duration_seconds)/;
    const panels = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `dashboard "${p.title}"`, expr: t.expr.replaceAll('$__rate_interval', '1m') }))).filter(({ expr }) => served.test(expr));
    const empty: string[] = [];
    for (const { where, expr } of panels) if ((await prometheus!.query(expr)).length === 0) empty.push(`${where}: ${expr}`);
    // An alert's expression returns a series when it fires: each one only parses here (PromQL errors throw).
    for (const rule of rules.spec.groups.flatMap((g) => g.rules)) await prometheus!.query(rule.expr);
    note(`[serving metrics] ${panels.length} dashboard expressions on the activator's and the autoscaler's series, empty: ${JSON.stringify(empty)}`);
    expect(panels.length).toBeGreaterThanOrEqual(4);
    expect(empty).toEqual([]);
  }, 120_000);
});
