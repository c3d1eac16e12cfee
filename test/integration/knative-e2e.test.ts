// The end-to-end tier on the real Knative Eventing (issue 21 "Tests on the real Knative"): one stack
// (test/cluster/knative-stack.ts: serviceNetwork control plane, process-mode kubelet, kube-proxy +
// CoreDNS, Knative Eventing v0.50.0 from its release manifests) with knative/eventing-only/ deployed
// (dev/cluster/neoset-on-knative.ts), brought up once for four scenarios, every state of the app
// namespace checked by the invariant observer (test/e2e/observer.ts):
//   1. the automated canary with a timed pause, through the real Broker;
//   2. the update hooks example (examples/hooks/): its owner as a process-mode pod, NeoSet's
//      lifecycle CloudEvents through knative/hooks.yaml's Broker, K_SINK set by Knative's SinkBinding;
//   3. several instances of each function (3 reconcile, 2 readiness) behind the Broker: a rollout,
//      a scale and a pause/resume;
//   4. Knative's own pods killed mid-rollout (the ApiServerSource adapters, the Broker ingress, the
//      filter, the IMC dispatcher), each once: every rollout completes.
// OIDC is off here (knative-neoset.test.ts proves it): the reconcile function sends its lifecycle
// events to K_SINK without a token, as a Broker without an EventPolicy takes them.
// Claims the service network: `flock /tmp/neoset-service-network.lock npx vitest run --project integration test/integration/knative-e2e.test.ts`.
// KNATIVE_LOG=1 prints the stack's log and the containers' log tails at the end.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { kubectl as kubectlOn, KNATIVE_NAMESPACE } from '../../dev/cluster/knative.ts';
import { deployNeoSetOnKnative, neosetOnKnativeImageTable, type NeoSetOnKnative } from '../../dev/cluster/neoset-on-knative.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';
import { KNATIVE_DIR, SYSTEM_NAMESPACE } from '../../dev/manifests.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { knativeComplaints } from '../cluster/container-logs.ts';
import { readyObject, startKnativeStack, startReceiver, type KnativeStack, type ReceivedEvent } from '../cluster/knative-stack.ts';
import { imageOf, inPlace, settledOn } from '../e2e/helpers.ts';
import { LABEL_NEOSET_NAME } from '../../shared/api/names.ts';
import { startObserver, type NeoSetObject, type Observer } from '../e2e/observer.ts';
import { neosetManifest } from '../e2e/stack.ts';

const NODE = 'kn-e2e';
const APP = 'kn-e2e';
const HOOK_OWNER_IMAGE = 'neoset.local/hook-owner:1';
let stack: KnativeStack | undefined;
let deployed: NeoSetOnKnative;
let observer: Observer;
let ticks: { events(): Promise<ReceivedEvent[]> };
const timings: string[] = [];
const core = () => stack!.cp.kubeConfig().makeApiClient(CoreV1Api);
const apps = () => stack!.cp.kubeConfig().makeApiClient(AppsV1Api);
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

const isReady = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const live = async (namespace: string, prefix: string) => (await core().listNamespacedPod({ namespace })).items.filter((p) => p.metadata!.name!.startsWith(prefix) && !p.metadata?.deletionTimestamp);
const deadLetters = async () => {
  const dl = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: 'app.kubernetes.io/component=dead-letter' })).items.find((p) => !p.metadata?.deletionTimestamp)!;
  return ((await (await fetch(`http://${dl.status!.podIP}:8080/events`, { signal: AbortSignal.timeout(3000) })).json()) as ReceivedEvent[]).length;
};

async function deploymentRolledOut(name: string, replicas: number, timeoutMs = 90_000): Promise<void> {
  await waitFor(
    async () => {
      const d = await apps().readNamespacedDeployment({ namespace: SYSTEM_NAMESPACE, name });
      const s = d.status;
      return s?.observedGeneration === d.metadata?.generation && s?.updatedReplicas === replicas && s?.readyReplicas === replicas && s?.availableReplicas === replicas && (s?.replicas ?? 0) === replicas;
    },
    { what: `deployment ${name}: ${replicas} replicas rolled out`, timeoutMs, intervalMs: 250 },
  );
}

beforeAll(async () => {
  const started = Date.now();
  stack = await startKnativeStack({
    nodeName: NODE,
    imageTable: [
      ...neosetOnKnativeImageTable(),
      // examples/hooks/server.ts as a pod: in-cluster config from its ServiceAccount token, on the pod IP.
      { image: 'neoset.local/hook-owner:*', entrypoint: ['{node}', '{checkout}/examples/hooks/server.ts'], workingDir: '{checkout}', env: { PORT: '8090', HOST: '0.0.0.0' } },
    ],
  });
  note(`stack with Knative in ${Date.now() - started} ms`);
  const deployStarted = Date.now();
  try {
    deployed = await deployNeoSetOnKnative(stack.cp, { oidc: false, log: (l) => stack!.log.push(l), timeoutMs: 150_000 });
  } catch (err) {
    console.log(stack.log.slice(-40).join('\n'), '\n', stack.containerLogTails());
    throw err;
  }
  note(`knative/eventing-only deployed and Ready in ${Date.now() - deployStarted} ms`);
  await core().createNamespace({ body: { metadata: { name: APP } } });
  observer = startObserver(stack.cp.kubeConfig(), APP);
  await observer.ready;
  // The PingSource's ticks as the Broker delivers them: when each resync came (for the faults' recovery).
  ticks = await startReceiver(stack.cp, SYSTEM_NAMESPACE, 'ticks');
  await trigger(SYSTEM_NAMESPACE, 'ticks', 'neoset', { type: 'dev.knative.sources.ping' }, { ref: { apiVersion: 'v1', kind: 'Service', name: 'ticks' } });
}, 400_000);

afterAll(async () => {
  observer?.stop();
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

/** neoset_api_requests_total of each function pod (its own /metrics at its pod IP): what each instance did. */
async function requestsPerInstance(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const component of ['reconcile', 'readiness']) {
    const pods = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `app.kubernetes.io/component=${component}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
    for (const p of pods) {
      const metrics = await (await fetch(`http://${p.status!.podIP}:8080/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      counts[p.metadata!.name!] = [...metrics.matchAll(/^neoset_api_requests_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    }
  }
  return counts;
}

const canaryOf = (n: NeoSetObject) => (n.status?.canary?.revision === n.status?.updateRevision ? n.status?.canary : undefined);

describe('NeoSet end to end on the real Knative Eventing', () => {
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
    // knative/hooks.yaml with the eventing-only references (a Deployment, a v1 Service) instead of Knative Services.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a manifest, edited in place
    const objects = parseAllDocuments(readFileSync(join(KNATIVE_DIR, 'hooks.yaml'), 'utf8')).map((d) => d.toJS() as Record<string, any>);
    const broker = objects.find((o) => o.kind === 'Broker')!;
    const binding = objects.find((o) => o.kind === 'SinkBinding')!;
    binding.spec.subject = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'neoset-reconcile' };
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
    // Knative's SinkBinding webhook and controller put K_SINK on the reconcile Deployment's pods.
    await kubectl(['apply', '-f', '-'], JSON.stringify(binding));
    await readyObject(stack!.cp, { group: 'sources.knative.dev', version: 'v1', plural: 'sinkbindings', namespace: SYSTEM_NAMESPACE, name: binding.metadata.name });
    const sinkOf = async () => (await apps().readNamespacedDeployment({ namespace: SYSTEM_NAMESPACE, name: 'neoset-reconcile' })).spec!.template.spec!.containers[0].env?.find((e) => e.name === 'K_SINK')?.value;
    const sink = await waitFor(sinkOf, { what: 'K_SINK on neoset-reconcile', timeoutMs: 30_000, intervalMs: 250 });
    expect(sink).toBe(`http://broker-ingress.${KNATIVE_NAMESPACE}.svc.cluster.local/${SYSTEM_NAMESPACE}/neoset-hooks`);
    await deploymentRolledOut('neoset-reconcile', 1);
    note(`[hooks] Broker, Triggers, owner pod and SinkBinding Ready, reconcile rolled out with K_SINK=${sink} in ${Date.now() - t0} ms`);

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

  it('3 reconcile and 2 readiness instances behind the Broker: three rollouts at once, a scale during one, a pause and a resume — all complete, the instances share the deliveries', async () => {
    const t0 = Date.now();
    await kubectl(['-n', SYSTEM_NAMESPACE, 'scale', 'deployment/neoset-reconcile', '--replicas=3']);
    await kubectl(['-n', SYSTEM_NAMESPACE, 'scale', 'deployment/neoset-readiness', '--replicas=2']);
    await Promise.all([deploymentRolledOut('neoset-reconcile', 3), deploymentRolledOut('neoset-readiness', 2)]);
    note(`[concurrency] 3 reconcile + 2 readiness pods Ready in ${Date.now() - t0} ms`);
    const name = 'conc';
    // Two more NeoSets rolling at the same time: deliveries overlap, so the Broker's filter holds
    // several connections to each function's Service (kube-proxy balances connections, not requests).
    const others = ['conc-b', 'conc-c'];
    await apply(neosetManifest({ name, replicas: 6, image: 'mysql:8.0', updateStrategy: { maxUnavailable: 1 } }));
    for (const o of others) await apply(neosetManifest({ name: o, replicas: 8, image: 'mysql:8.0', updateStrategy: { maxUnavailable: 3 } }));
    await until(name, '6 ready pods', (n) => n.status?.readyReplicas === 6 && n.status?.phase === 'Idle', 90_000);
    for (const o of others) await until(o, '8 ready pods', (n) => n.status?.readyReplicas === 8 && n.status?.phase === 'Idle', 90_000);
    const before = await requestsPerInstance();
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
    await patchNeoSet(name, { updateStrategy: { pause: false } });
    const done = await until(name, 'Completed with 8', completed(8), 90_000);
    for (const o of others) await until(o, 'Completed', completed(8), 90_000);
    const took = Date.now() - t1;
    expect(done.status?.currentRevision).toBe(done.status?.updateRevision);
    expect(observer.pods(name).map(imageOf)).toEqual(Array(8).fill('mysql:8.1'));
    const after = await requestsPerInstance();
    const delta = Object.fromEntries(Object.entries(after).map(([pod, n]) => [pod, n - (before[pod] ?? 0)]));
    note(`[concurrency] 3 rollouts (one scaled 6→8, paused with ${heldAt} of ${Object.keys(held).length} pods on mysql:8.1, resumed) completed in ${took} ms; API requests per instance during them ${JSON.stringify(delta)}; invariant checks so far ${observer.checks}`);
    expect(Object.keys(delta)).toHaveLength(5);
    const working = (component: string) => Object.entries(delta).filter(([pod, n]) => pod.startsWith(`neoset-${component}-`) && n > 0).length;
    expect(working('reconcile')).toBeGreaterThanOrEqual(2);
    expect(working('readiness')).toBeGreaterThanOrEqual(1);
    expect(observer.violations).toEqual([]);
  }, 300_000);

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
});
