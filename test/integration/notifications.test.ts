// Rollout notifications on the real Knative (SPEC §4.12, issue 23 point 5, issue 35): NeoSet deployed
// as users deploy it on Knative Serving (dev/cluster/neoset-on-serving.ts: `kubectl apply -k knative/`,
// the functions as Knative Services behind the real MT Broker), and examples/notifications/ applied as
// a user on Serving applies it — knative/hooks.yaml's Broker and SinkBinding (K_SINK on the
// neoset-reconcile Knative Service: a new revision) in place of sink.yaml (the eventing-only one),
// receiver.yaml, and trigger.yaml's prefix Trigger taking io.neo.neoset.rollout.* to receiver.ts (a
// process-mode pod from this checkout) which posts the chat messages to a recording webhook — and a
// second Trigger with the same filter taps every delivery.
// Two rollouts: canary → pause → promote → complete; a bad image with a short timeoutSeconds →
// Failed → undo → complete; then a scale. The reconcile pod is deleted mid-rollout in each (its
// revision's Deployment recreates it; the deleted one drains first). After deduplication by id, each
// kind arrives once per occurrence, and the receiver posted one chat message per id.
// Claims the service network: run under `flock /tmp/neoset-service-network.lock`.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { kubectl as kubectlOn } from '../../dev/cluster/knative.ts';
import { neosetOnKnativeImageTable } from '../../dev/cluster/neoset-on-knative.ts';
import { deployNeoSetOnServing, type NeoSetOnServing } from '../../dev/cluster/neoset-on-serving.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';
import { KNATIVE_DIR, SYSTEM_NAMESPACE } from '../../dev/manifests.ts';
import { NotificationData } from '../../shared/api/notification.ts';
import { readyObject, startKnativeStack, startReceiver, type KnativeStack, type ReceivedEvent } from '../cluster/knative-stack.ts';

const CHECKOUT = join(import.meta.dirname, '../..');
const EXAMPLE = join(CHECKOUT, 'examples/notifications');
const APP = 'kn-notify';
let stack: KnativeStack | undefined;
let deployed: NeoSetOnServing;
let recorder: { ip: string; events(): Promise<ReceivedEvent[]> };
const timings: string[] = [];
const core = () => stack!.cp.kubeConfig().makeApiClient(CoreV1Api);
const apps = () => stack!.cp.kubeConfig().makeApiClient(AppsV1Api);
const custom = () => stack!.cp.kubeConfig().makeApiClient(CustomObjectsApi);
const kubectl = (args: string[], input?: string) => kubectlOn(stack!.cp.kubeconfigPath, args, input);

/** `kubectl neoset ...` as a user runs it: bin/ on PATH, the stack's kubeconfig. */
async function plugin(...args: string[]): Promise<string> {
  const r = await promisify(execFile)('kubectl', ['neoset', ...args, '-n', APP], { env: { ...process.env, PATH: `${join(CHECKOUT, 'bin')}${delimiter}${process.env.PATH}`, KUBECONFIG: stack!.cp.kubeconfigPath }, timeout: 60_000 });
  return r.stdout;
}

interface Status {
  phase?: string;
  replicas?: number;
  readyReplicas?: number;
  updatedReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
}
const readNeoSet = async (name: string) => (await custom().getNamespacedCustomObject({ group: 'neo.io', version: 'v1alpha1', namespace: APP, plural: 'neosets', name })) as { metadata: { uid: string }; status?: Status };
const phaseIs = (name: string, phase: string, timeoutMs = 120_000) =>
  waitFor(async () => (await readNeoSet(name)).status?.phase === phase, { what: `${name} ${phase}`, timeoutMs, intervalMs: 500 }).catch(async (err: Error) => {
    throw new Error(`${err.message}; status ${JSON.stringify((await readNeoSet(name)).status)}`, { cause: err });
  });

const neoset = (name: string, image: string, updateStrategy: Record<string, unknown>) => ({
  apiVersion: 'neo.io/v1alpha1',
  kind: 'NeoSet',
  metadata: { name, namespace: APP },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: name } },
    serviceName: name,
    // Simulated pods (not in the image table); a tag ending in -crashloop crashes on every start.
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image, readinessProbe: { tcpSocket: { port: 3306 } } }] } },
    updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1, inPlaceUpdateStrategy: { timeoutSeconds: 10 }, ...updateStrategy },
  },
});

type KnativeService = {
  metadata: { generation?: number };
  spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
  status?: { observedGeneration?: number; latestReadyRevisionName?: string; latestCreatedRevisionName?: string; traffic?: { revisionName?: string }[]; conditions?: { type: string; status: string }[] };
};

/** The reconcile function's pod (its serving revision's, not terminating): its UID, then deletes it; the revision's Deployment makes another. */
async function killReconcile(): Promise<string> {
  const ksvc = (await custom().getNamespacedCustomObject({ group: 'serving.knative.dev', version: 'v1', namespace: SYSTEM_NAMESPACE, plural: 'services', name: 'neoset-reconcile' })) as KnativeService;
  const revision = ksvc.status!.latestReadyRevisionName!;
  const pods = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `serving.knative.dev/revision=${revision}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
  expect(pods).toHaveLength(1);
  await core().deleteNamespacedPod({ namespace: SYSTEM_NAMESPACE, name: pods[0].metadata!.name! });
  timings.push(`reconcile pod ${pods[0].metadata!.name} deleted`);
  return pods[0].metadata!.uid!;
}

/** The tapped deliveries (every one, redeliveries included) and the chat messages the receiver posted. */
async function received(): Promise<{ tapped: ReceivedEvent[]; chat: string[] }> {
  const all = await recorder.events();
  return {
    tapped: all.filter((e) => e.path === '/tap'),
    chat: all.filter((e) => e.path === '/chat').map((e) => (JSON.parse(e.data) as { text: string }).text),
  };
}

/** Kinds of one NeoSet's notifications after dedup by id, in arrival order (a step as `step i/n`). */
function kindsOf(tapped: ReceivedEvent[], name: string): string[] {
  const seen = new Map<string, string>();
  for (const e of tapped) {
    if (e.attributes.subject !== name || seen.has(e.attributes.id)) continue;
    const data = NotificationData.parse(JSON.parse(e.data));
    const kind = e.attributes.type.replace('io.neo.neoset.rollout.', '');
    seen.set(e.attributes.id, kind === 'step' ? `step ${data.step!.index}/${data.step!.total}` : kind);
  }
  return [...seen.values()];
}

const sorted = (xs: string[]) => [...xs].sort();

beforeAll(async () => {
  const started = Date.now();
  stack = await startKnativeStack({
    nodeName: 'kn-notify',
    serving: true,
    imageTable: [
      ...neosetOnKnativeImageTable(),
      // receiver.yaml's image: examples/notifications/receiver.ts from this checkout.
      { image: 'example.local/neoset-notifications-receiver:*', entrypoint: ['{node}', '{checkout}/examples/notifications/receiver.ts'], env: {} },
    ],
  });
  timings.push(`stack with Knative Eventing, Serving and Traefik in ${Date.now() - started} ms`);
  try {
    deployed = await deployNeoSetOnServing(stack.cp, { log: (l) => stack!.log.push(l), timeoutMs: 200_000 });
    timings.push(`knative/ (kubectl apply -k) Ready at ${Date.now() - started} ms`);
    // The chat webhook and the tap: one recording pod, two paths. The webhook fails its first post
    // (?fail=first): the receiver answers 502 and the Broker delivers that notification again.
    recorder = await startReceiver(stack.cp, SYSTEM_NAMESPACE, 'recorder');
    const secret = await kubectl(['-n', SYSTEM_NAMESPACE, 'create', 'secret', 'generic', 'neoset-notifications-webhook', `--from-literal=url=http://recorder.${SYSTEM_NAMESPACE}.svc.cluster.local/chat?fail=first`]);
    expect(secret.code, secret.out).toBe(0);
    // With Serving, K_SINK comes from knative/hooks.yaml's Broker and SinkBinding (its hook-owner
    // Triggers are the hooks example's, not applied); sink.yaml is their eventing-only twin.
    const hooks = parseAllDocuments(readFileSync(join(KNATIVE_DIR, 'hooks.yaml'), 'utf8')).map((d) => d.toJS()).filter((o) => o.kind === 'Broker' || o.kind === 'SinkBinding');
    const applied = await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: hooks }));
    expect(applied.code, `knative/hooks.yaml's Broker and SinkBinding: ${applied.out}`).toBe(0);
    for (const file of ['receiver.yaml', 'trigger.yaml']) {
      const r = await kubectl(['apply', '-f', join(EXAMPLE, file)]);
      expect(r.code, `${file}: ${r.out}`).toBe(0);
    }
    const trigger = parse(readFileSync(join(EXAMPLE, 'trigger.yaml'), 'utf8'));
    trigger.metadata.name = 'notifications-tap';
    trigger.spec.subscriber = { ref: { apiVersion: 'v1', kind: 'Service', name: 'recorder' }, uri: '/tap' };
    const tap = await kubectl(['apply', '-f', '-'], JSON.stringify(trigger));
    expect(tap.code, tap.out).toBe(0);
    const ref = (plural: string, name: string, group = 'eventing.knative.dev') => ({ group, version: 'v1', plural, namespace: SYSTEM_NAMESPACE, name });
    await Promise.all([readyObject(stack.cp, ref('brokers', 'neoset-hooks')), readyObject(stack.cp, ref('triggers', 'neoset-notifications')), readyObject(stack.cp, ref('triggers', 'notifications-tap')), readyObject(stack.cp, ref('sinkbindings', 'neoset-reconcile-hooks', 'sources.knative.dev'))]);
    // The SinkBinding put K_SINK into the Knative Service's template: wait for its new revision to take
    // all traffic (the old revision's pod drains meanwhile), and for the receiver.
    await waitFor(
      async () => {
        const ksvc = (await custom().getNamespacedCustomObject({ group: 'serving.knative.dev', version: 'v1', namespace: SYSTEM_NAMESPACE, plural: 'services', name: 'neoset-reconcile' })) as KnativeService;
        const sink = ksvc.spec.template.spec.containers[0].env?.find((e) => e.name === 'K_SINK')?.value;
        const revision = ksvc.status?.latestCreatedRevisionName;
        const serving = ksvc.status?.observedGeneration === ksvc.metadata.generation && ksvc.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && revision === ksvc.status?.latestReadyRevisionName && ksvc.status?.traffic?.every((t) => t.revisionName === revision);
        const receiver = await apps().readNamespacedDeployment({ namespace: SYSTEM_NAMESPACE, name: 'neoset-notifications' });
        return sink === `http://broker-ingress.knative-eventing.svc.cluster.local/${SYSTEM_NAMESPACE}/neoset-hooks` && serving && receiver.status?.availableReplicas === 1;
      },
      { what: "the reconcile Knative Service's revision with K_SINK serving, the receiver Available", timeoutMs: 120_000, intervalMs: 500 },
    );
    timings.push(`examples/notifications applied and Ready at ${Date.now() - started} ms`);
    await core().createNamespace({ body: { metadata: { name: APP } } });
  } catch (err) {
    console.log(stack.log.slice(-40).join('\n'), '\n', stack.containerLogTails());
    throw err;
  }
}, 480_000);

afterAll(async () => {
  console.log(timings.join('\n'));
  if (process.env.KNATIVE_LOG) console.log(stack?.log.join('\n'), '\n', stack?.containerLogTails());
  await stack?.stop();
}, 90_000);

describe('rollout notifications through the real Broker (§4.12)', () => {
  it('canary → pause → promote → complete, the reconcile pod killed as the rollout starts and while paused: each kind once after dedup, one chat message per id', async () => {
    const t0 = Date.now();
    const created = await kubectl(['apply', '-f', '-'], JSON.stringify(neoset('db', 'mysql:8.0', { canary: { steps: [{ partition: 2 }, { pause: {} }, { partition: 0 }] } })));
    expect(created.code, created.out).toBe(0);
    await phaseIs('db', 'Idle');
    await waitFor(async () => (await readNeoSet('db')).status?.readyReplicas === 3, { what: 'db: 3 Ready', timeoutMs: 90_000 });
    const patched = await kubectl(['-n', APP, 'patch', 'neoset', 'db', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'mysql:8.4' }])]);
    expect(patched.code, patched.out).toBe(0);
    // Killed while it takes the first step (the NeoSet's update event in flight or being reconciled):
    // a deleted pod stops gracefully (SIGTERM: the requests in flight, their sends included, finish).
    const killedFirst = await killReconcile();
    await phaseIs('db', 'Paused');
    await waitFor(async () => kindsOf((await received()).tapped, 'db').includes('paused'), { what: 'paused delivered', timeoutMs: 30_000 });
    const killed = await killReconcile();
    expect(await plugin('rollout', 'promote', 'db')).toContain('db');
    await phaseIs('db', 'Completed', 180_000);
    timings.push(`db: canary -> pause -> promote -> complete in ${Date.now() - t0} ms`);
    const expected = ['started', 'step 0/3', 'step 1/3', 'paused', 'promoted', 'resumed', 'step 2/3', 'step 3/3', 'completed'];
    const got = await waitFor(
      async () => {
        const r = await received();
        return kindsOf(r.tapped, 'db').length >= expected.length && r;
      },
      { what: 'every db notification delivered', timeoutMs: 30_000 },
    ).catch(async () => received());
    const kinds = kindsOf(got.tapped, 'db');
    timings.push(`db: ${got.tapped.filter((e) => e.attributes.subject === 'db').length} deliveries, ${kinds.length} ids: ${kinds.join(', ')}`);
    expect(sorted(kinds)).toEqual(sorted(expected));
    expect(kinds[0]).toBe('started');
    expect(kinds.at(-1)).toBe('completed');
    // Replaced (a killed pod may still be draining: queue-proxy's 30 s, then its containers stop).
    const pods = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: 'app.kubernetes.io/component=reconcile' })).items.filter((p) => !p.metadata?.deletionTimestamp);
    expect(pods.map((p) => p.metadata!.uid)).not.toContain(killed);
    expect(pods.map((p) => p.metadata!.uid)).not.toContain(killedFirst);
    // The ids: the NeoSet's uid first, then the revision; the data carries it all.
    const uid = (await readNeoSet('db')).metadata.uid;
    const completed = got.tapped.find((e) => e.attributes.subject === 'db' && e.attributes.type === 'io.neo.neoset.rollout.completed')!;
    expect(completed.attributes).toMatchObject({ source: `/apis/neo.io/v1alpha1/namespaces/${APP}/neosets/db`, id: expect.stringMatching(new RegExp(`^${uid}/db-[0-9a-f]+/2/completed$`)) });
    expect(JSON.parse(completed.data)).toMatchObject({ images: { current: 'mysql:8.4', update: 'mysql:8.4' }, counts: { replicas: 3, updated: 3, ready: 3, available: 3 }, step: { index: 3, total: 3 } });
    await waitFor(async () => (await received()).chat.filter((t) => t.startsWith('db:')).length >= expected.length, { what: 'db chat messages', timeoutMs: 30_000 }).catch(() => undefined);
    const chat = (await received()).chat.filter((t) => t.startsWith('db:'));
    expect(chat).toHaveLength(expected.length);
    expect(chat).toContain('db: rollout to mysql:8.4 completed (3/3)');
    expect(chat).toContain('db: rollout to mysql:8.4 started (from mysql:8.0)');
  }, 420_000);

  it('a bad image with timeoutSeconds 10 → Failed → undo → complete, then a scale; the reconcile pod killed while the update hangs', async () => {
    const t0 = Date.now();
    const created = await kubectl(['apply', '-f', '-'], JSON.stringify(neoset('web', 'app:1', {})));
    expect(created.code, created.out).toBe(0);
    await waitFor(async () => (await readNeoSet('web')).status?.readyReplicas === 3, { what: 'web: 3 Ready', timeoutMs: 90_000 });
    const patched = await kubectl(['-n', APP, 'patch', 'neoset', 'web', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'app:2-crashloop' }])]);
    expect(patched.code, patched.out).toBe(0);
    await waitFor(async () => kindsOf((await received()).tapped, 'web').includes('started'), { what: 'started delivered', timeoutMs: 60_000 });
    await killReconcile();
    await phaseIs('web', 'Failed', 120_000);
    expect(await plugin('rollout', 'undo', 'web')).toContain('rolled back');
    await phaseIs('web', 'Completed', 180_000);
    const scaled = await kubectl(['-n', APP, 'scale', 'neoset', 'web', '--replicas=4']);
    expect(scaled.code, scaled.out).toBe(0);
    const expected = ['started', 'failed', 'rolledback', 'completed', 'scaled'];
    const got = await waitFor(
      async () => {
        const r = await received();
        return kindsOf(r.tapped, 'web').length >= expected.length && r;
      },
      { what: 'every web notification delivered', timeoutMs: 120_000 },
    ).catch(async () => received());
    timings.push(`web: bad image -> Failed -> undo -> complete -> scaled in ${Date.now() - t0} ms`);
    const kinds = kindsOf(got.tapped, 'web');
    timings.push(`web: ${got.tapped.filter((e) => e.attributes.subject === 'web').length} deliveries, ${kinds.length} ids: ${kinds.join(', ')}`);
    expect(sorted(kinds)).toEqual(sorted(expected));
    const failed = got.tapped.find((e) => e.attributes.subject === 'web' && e.attributes.type === 'io.neo.neoset.rollout.failed')!;
    expect(JSON.parse(failed.data)).toMatchObject({ reason: 'ProgressDeadlineExceeded', images: { update: 'app:2-crashloop' } });
    await waitFor(async () => (await received()).chat.filter((t) => t.startsWith('web:')).length >= expected.length, { what: 'web chat messages', timeoutMs: 30_000 }).catch(() => undefined);
    const chat = (await received()).chat.filter((t) => t.startsWith('web:'));
    expect(chat).toHaveLength(expected.length);
    expect(chat).toContain('web: scaled to 4 (4/4 ready)');
    expect(chat.find((t) => t.includes('failed'))).toMatch(/^web: rollout to app:2-crashloop failed: ProgressDeadlineExceeded/);
  }, 420_000);

  it('redeliveries: every notification posted to the Broker again (same ids) reaches the receiver, which posts nothing more; each is an Event of its NeoSet once', async () => {
    const before = await received();
    const ids = new Set(before.tapped.map((e) => e.attributes.id));
    const ingress = `${deployed.serviceURLs.brokerIngress}/${SYSTEM_NAMESPACE}/neoset-hooks`;
    const firsts = [...new Map(before.tapped.map((e) => [e.attributes.id, e])).values()];
    for (const e of firsts) {
      const headers = Object.fromEntries(Object.entries(e.headers).filter(([k]) => k.startsWith('ce-') || k === 'content-type'));
      const res = await fetch(ingress, { method: 'POST', headers, body: e.data, signal: AbortSignal.timeout(10_000) });
      expect(res.status, e.attributes.id).toBe(202);
    }
    const after = await waitFor(
      async () => {
        const r = await received();
        return r.tapped.length >= before.tapped.length + firsts.length && r;
      },
      { what: 'the redeliveries tapped', timeoutMs: 30_000 },
    );
    // Give the receiver the time it took the tap to have them all, then some: nothing more is posted.
    await new Promise((r) => setTimeout(r, 2000));
    const chat = (await received()).chat;
    timings.push('chat messages posted:', ...chat.map((t) => `  ${t}`));
    timings.push(`redelivered ${firsts.length} notifications: tapped ${after.tapped.length} deliveries of ${ids.size} ids; chat messages ${before.chat.length} -> ${chat.length}`);
    expect(new Set(after.tapped.map((e) => e.attributes.id))).toEqual(ids);
    expect(chat).toEqual(before.chat);
    expect(chat).toHaveLength(ids.size);
    // Mirrored as Events (reason the type), once per id, whichever instance wrote the status.
    const listed = await core().listNamespacedEvent({ namespace: APP });
    const mirrored = listed.items.filter((e) => e.reason?.startsWith('io.neo.neoset.rollout.'));
    expect(mirrored).toHaveLength(ids.size);
    expect(mirrored.every((e) => e.count === 1)).toBe(true);
  }, 120_000);
});
