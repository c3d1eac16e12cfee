// NeoSet on the real Knative Eventing (issue 21 step 4a), no bridge: knative/eventing-only/ deployed by
// dev/cluster/neoset-on-knative.ts on the stack of test/cluster/knative-stack.ts (serviceNetwork
// control plane, process-mode kubelet, kube-proxy + CoreDNS, Knative Eventing v0.50.0 from its release
// manifests). The functions are process-mode pods behind their Services; every event they get comes
// from the real ApiServerSources / PingSource through the real MT Broker (ingress → in-memory channel
// → filter) and its Triggers. Knative's OIDC is on (authentication-oidc, the oidc component): the
// Broker's filter sends tokens of the Triggers' OIDC identities for the functions' audiences, the
// functions check them by TokenReview, and an EventPolicy keeps every other sender off the Broker.
// Claims the service network: run under `flock /tmp/neoset-service-network.lock`.
//
// KNATIVE_NEOSET_OIDC=off runs it without OIDC (the OIDC cases skipped). KNATIVE_LOG=1 prints the
// stack's log and the containers' log tails at the end.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl as kubectlOn } from '../../dev/cluster/knative.ts';
import { deployNeoSetOnKnative, neosetOnKnativeImageTable, OIDC_AUDIENCES, type NeoSetOnKnative } from '../../dev/cluster/neoset-on-knative.ts';
import { kubeProxyTables } from '../../dev/cluster/service-network.ts';
import { STATE_ROOT } from '../../dev/kubelet/process/network.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';
import { SYSTEM_NAMESPACE } from '../../dev/manifests.ts';
import { readyObject, startKnativeStack, startReceiver, type KnativeStack, type ReceivedEvent } from '../cluster/knative-stack.ts';

const OIDC = process.env.KNATIVE_NEOSET_OIDC !== 'off';
const NODE = 'kn-neoset';
const APP = 'kn-app';
const NAME = 'web';
let stack: KnativeStack | undefined;
let deployed: NeoSetOnKnative;
let tap: { ip: string; events(): Promise<ReceivedEvent[]> };
const timings: string[] = [];
const core = () => stack!.cp.kubeConfig().makeApiClient(CoreV1Api);
const custom = () => stack!.cp.kubeConfig().makeApiClient(CustomObjectsApi);
const kubectl = (args: string[], input?: string) => kubectlOn(stack!.cp.kubeconfigPath, args, input);

/** Every log line a pod's container wrote (all its starts), from the process-mode kubelet's files. */
function containerLog(pod: V1Pod, container: string): string[] {
  const uid = pod.metadata!.uid!;
  const lines: string[] = [];
  for (const bridge of existsSync(STATE_ROOT) ? readdirSync(STATE_ROOT) : []) {
    const dir = join(STATE_ROOT, bridge, 'pods', uid, 'logs', container);
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir).sort()) lines.push(...readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean));
  }
  return lines;
}

/** The pino lines of a function's pods (label app.kubernetes.io/component), parsed. */
async function functionLog(component: 'reconcile' | 'readiness'): Promise<Record<string, unknown>[]> {
  const pods = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `app.kubernetes.io/component=${component}` })).items;
  return pods.flatMap((p) => containerLog(p, component)).flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

const neoset = (image: string) => ({
  apiVersion: 'neo.io/v1alpha1',
  kind: 'NeoSet',
  metadata: { name: NAME, namespace: APP },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: NAME } },
    serviceName: NAME,
    // Not in the image table: simulated pods (the kubelet's default), as in test/e2e.
    template: { metadata: { labels: { app: NAME } }, spec: { containers: [{ name: 'main', image, readinessProbe: { tcpSocket: { port: 80 } } }] } },
    updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 },
  },
});

interface NeoSetStatus {
  observedGeneration?: number;
  replicas?: number;
  readyReplicas?: number;
  updatedReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
}

const readNeoSet = async () =>
  (await custom().getNamespacedCustomObject({ group: 'neo.io', version: 'v1alpha1', namespace: APP, plural: 'neosets', name: NAME })) as { metadata: { generation: number }; status?: NeoSetStatus };
const appPods = async () => (await core().listNamespacedPod({ namespace: APP, labelSelector: `app=${NAME}` })).items;
const ready = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** When each `path id` was first seen at the tap, polled every 50 ms while watchTap runs (the receiver keeps no times). */
const firstSeen = new Map<string, number>();
let watching: ReturnType<typeof setInterval> | undefined;
function watchTap(): void {
  let busy = false;
  watching = setInterval(() => {
    if (busy) return;
    busy = true;
    tap
      .events()
      .then((events) => {
        for (const e of events) if (!firstSeen.has(`${e.path} ${e.attributes.id}`)) firstSeen.set(`${e.path} ${e.attributes.id}`, Date.now());
      })
      .catch(() => {})
      .finally(() => (busy = false));
  }, 50);
}

beforeAll(async () => {
  const started = Date.now();
  stack = await startKnativeStack({ nodeName: NODE, imageTable: neosetOnKnativeImageTable() });
  timings.push(`stack with Knative in ${Date.now() - started} ms`);
  const deployStarted = Date.now();
  try {
    deployed = await deployNeoSetOnKnative(stack.cp, { oidc: OIDC, log: (l) => (stack!.log.push(l), timings.push(`  ${l}`)), timeoutMs: 150_000 });
  } catch (err) {
    console.log(stack.log.slice(-40).join('\n'), '\n', stack.containerLogTails());
    throw err;
  }
  timings.push(`knative/eventing-only deployed and Ready in ${Date.now() - deployStarted} ms`);
  // A tap on the Broker: what it delivers to the Pod Triggers, with every header, to compare with
  // what the functions logged (the same event has the same id on every Trigger).
  tap = await startReceiver(stack.cp, SYSTEM_NAMESPACE, 'tap');
  // With OIDC the tap's subscriber has an audience too, so the filter sends it a token as it does the functions.
  const tapTrigger = (name: string, attributes: Record<string, string>, uri?: string, delivery?: Record<string, unknown>) =>
    custom().createNamespacedCustomObject({
      group: 'eventing.knative.dev',
      version: 'v1',
      namespace: SYSTEM_NAMESPACE,
      plural: 'triggers',
      body: { apiVersion: 'eventing.knative.dev/v1', kind: 'Trigger', metadata: { name }, spec: { broker: 'neoset', filter: { attributes }, subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'tap' }, uri, audience: OIDC ? 'neoset-tap' : undefined }, delivery } },
    });
  await tapTrigger('tap', { kind: 'Pod', apiversion: 'v1' });
  // And on the PingSource's ticks (a Trigger's filter attributes are ANDed: one Trigger each).
  await tapTrigger('tap-ping', { type: 'dev.knative.sources.ping' }, '/ping');
  // And a subscriber that answers each event's first delivery 503, with the functions' Triggers' retry policy.
  await tapTrigger('tap-retry', { kind: 'Pod', apiversion: 'v1' }, '/retry?fail=first', { retry: 5, backoffPolicy: 'exponential', backoffDelay: 'PT0.5S' });
  for (const name of ['tap', 'tap-ping', 'tap-retry']) await readyObject(stack.cp, { group: 'eventing.knative.dev', version: 'v1', plural: 'triggers', namespace: SYSTEM_NAMESPACE, name });
  await core().createNamespace({ body: { metadata: { name: APP } } });
}, 400_000);

afterAll(async () => {
  clearInterval(watching);
  console.log(timings.join('\n'));
  if (process.env.KNATIVE_LOG) console.log(stack?.log.join('\n'), '\n', stack?.containerLogTails());
  await stack?.stop();
}, 90_000);

describe('NeoSet on the real Knative Eventing (knative/eventing-only)', () => {
  it("runs the functions as pods with pod IPs behind their Services, and Knative's adapters for its sources", async () => {
    const pods = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE })).items.filter((p) => !p.metadata?.deletionTimestamp);
    const byComponent = (c: string) => pods.filter((p) => p.metadata?.labels?.['app.kubernetes.io/component'] === c);
    for (const [component, count] of [['reconcile', 1], ['readiness', 1], ['admission', 2], ['dead-letter', 1]] as const) {
      const these = byComponent(component);
      expect(these.length, component).toBe(count);
      for (const p of these) {
        expect([p.status?.phase, ready(p)], p.metadata!.name).toEqual(['Running', true]);
        expect(p.status?.podIP, p.metadata!.name).toMatch(/^10\.244\.\d+\.\d+$/);
      }
    }
    // The ApiServerSources' adapters: Deployments Knative made in neoset-system, under neoset-events.
    // Polled: an adapter Deployment rolling out again (ci35: a third, Pending pod beside the two) settles.
    const adapters = async () =>
      (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE })).items
        .filter((p) => !p.metadata?.deletionTimestamp && p.metadata?.name?.startsWith('apiserversource-neoset-'))
        .map((p) => [p.status?.phase, p.spec?.serviceAccountName]);
    await expect
      .poll(adapters, { timeout: 60_000, interval: 500 })
      .toEqual([
        ['Running', 'neoset-events'],
        ['Running', 'neoset-events'],
      ]);
    const health = await (await fetch(`${deployed.serviceURLs.reconcile}/healthz`, { signal: AbortSignal.timeout(5000) })).json();
    expect(health).toMatchObject({ status: 'ok', function: 'reconcile' });
    expect(deployed.brokerURL).toBe(`http://broker-ingress.knative-eventing.svc.cluster.local/${SYSTEM_NAMESPACE}/neoset`);
    // knative/eventing.yaml's Broker asks its in-memory channel to fan each event out on its own (why: there).
    const channel = (await custom().getNamespacedCustomObject({ group: 'messaging.knative.dev', version: 'v1', namespace: SYSTEM_NAMESPACE, plural: 'inmemorychannels', name: 'neoset-kne-trigger' })) as { metadata: { annotations?: Record<string, string> } };
    expect(channel.metadata.annotations?.['messaging.knative.dev/async-handler']).toBe('true');
    // What Knative's token verifiers read (at https://kubernetes.default.svc, with their ServiceAccount's token).
    const discovery = await kubectl(['get', '--raw', '/.well-known/openid-configuration']);
    console.log(`service-account issuer discovery: ${discovery.stdout}`);
    expect(JSON.parse(discovery.stdout)).toMatchObject({ issuer: 'https://kubernetes.default.svc.cluster.local', jwks_uri: expect.stringMatching(/^https:\/\//) });
  });

  it('admits a NeoSet through the webhook called by its Service, and rolls it out in place with every event from the real Broker', async () => {
    watchTap();
    const t0 = Date.now();
    const created = await kubectl(['apply', '-f', '-'], JSON.stringify(neoset('nginx:1.27')));
    expect(created.code, created.out).toBe(0);
    // /mutate ran (the admission function's defaults are on the stored object).
    const stored = (await readNeoSet()) as unknown as { spec: { podManagementPolicy?: string; revisionHistoryLimit?: number } };
    expect(stored.spec.revisionHistoryLimit).toBe(10);
    // /validate ran: the quota (NEOSET_MAX_REPLICAS 1000) refuses more.
    const refused = await kubectl(['-n', APP, 'patch', 'neoset', NAME, '--type=merge', '-p', '{"spec":{"replicas":1001}}']);
    expect(refused.code).not.toBe(0);
    expect(refused.out).toContain('admission webhook "validate.neosets.neo.io" denied the request');

    await waitFor(async () => {
      const pods = await appPods();
      return pods.length === 3 && pods.every(ready) && (await readNeoSet()).status?.readyReplicas === 3;
    }, { what: '3 pods Ready and counted', timeoutMs: 90_000, intervalMs: 500 });
    timings.push(`3 pods created and Ready in ${Date.now() - t0} ms`);
    const before = new Map((await appPods()).map((p) => [p.metadata!.name!, p.metadata!.uid!]));

    const t1 = Date.now();
    const patched = await kubectl(['-n', APP, 'patch', 'neoset', NAME, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'nginx:1.28' }])]);
    expect(patched.code, patched.out).toBe(0);
    const done = await waitFor(async () => {
      const n = await readNeoSet();
      const pods = await appPods();
      const s = n.status;
      return (
        s?.observedGeneration === n.metadata.generation &&
        s.updatedReplicas === 3 &&
        s.readyReplicas === 3 &&
        s.currentRevision === s.updateRevision &&
        pods.length === 3 &&
        pods.every((p) => ready(p) && p.spec?.containers[0].image === 'nginx:1.28' && !p.metadata?.annotations?.['neoset.neo.io/inplace-update-state']) &&
        { n, pods }
      );
    }, { what: 'the rollout to nginx:1.28 complete', timeoutMs: 120_000, intervalMs: 500 });
    timings.push(`in-place rollout of 3 pods completed in ${Date.now() - t1} ms`);
    // In place: the same pods (UIDs), their container restarted on the new image.
    expect(new Map(done.pods.map((p) => [p.metadata!.name!, p.metadata!.uid!]))).toEqual(before);
    for (const p of done.pods) expect(p.status?.containerStatuses?.[0].image, p.metadata!.name).toBe('docker.io/library/nginx:1.28');
  }, 240_000);

  it("shows the events arrived through the Broker: the functions logged the ids the Broker delivered, with Knative's attributes", async () => {
    const reconciled = (await functionLog('reconcile')).filter((l) => l.msg === 'event' && typeof l.eventId === 'string');
    const readiness = (await functionLog('readiness')).filter((l) => l.msg === 'event' && typeof l.eventId === 'string');
    expect(reconciled.length).toBeGreaterThan(3);
    expect(readiness.length).toBeGreaterThan(0);
    // Only Knative's event types: the ApiServerSource's (and the PingSource's tick, once a minute).
    const types = new Set([...reconciled, ...readiness].map((l) => l.type as string));
    for (const type of types) expect(['dev.knative.apiserver.resource.add', 'dev.knative.apiserver.resource.update', 'dev.knative.apiserver.resource.delete', 'dev.knative.sources.ping']).toContain(type);
    expect(types).toContain('dev.knative.apiserver.resource.update');
    // The tap Trigger got the same Pod events from the Broker: the ids the readiness function logged are among them.
    const tapped = await tap.events();
    const ids = new Set(tapped.map((e) => e.attributes.id));
    const podEventIds = readiness.map((l) => l.eventId as string);
    expect(podEventIds.filter((id) => ids.has(id)).length).toBe(podEventIds.length);
    const sample = tapped.find((e) => e.path === '/' && e.attributes.type === 'dev.knative.apiserver.resource.update')!;
    // What the real Broker delivers (binary mode): the source's attributes and extensions, plus its own.
    expect(sample.attributes).toMatchObject({ specversion: '1.0', kind: 'Pod', apiversion: 'v1', namespace: APP, source: expect.stringMatching(/^https:\/\//) });
    expect(Object.keys(sample.attributes)).toEqual(expect.arrayContaining(['id', 'time', 'subject', 'name', 'knativearrivaltime']));
    expect(sample.headers['content-type']).toBe('application/json');
    console.log('a Pod event as the Broker delivered it:', JSON.stringify({ path: sample.path, headers: Object.fromEntries(Object.entries(sample.headers).filter(([k]) => k !== 'authorization')), dataBytes: sample.data.length }));
    if (OIDC) {
      // The filter's token: the Trigger's own OIDC ServiceAccount, for the subscriber's audience, from the API server's issuer.
      const claims = JSON.parse(Buffer.from(sample.headers.authorization.replace(/^Bearer /, '').split('.')[1], 'base64url').toString('utf8')) as { iss: string; aud: string[]; sub: string; exp: number; iat: number };
      console.log('the token the Broker sent:', JSON.stringify({ iss: claims.iss, aud: claims.aud, sub: claims.sub, lifetimeSeconds: claims.exp - claims.iat }));
      expect(claims).toMatchObject({ iss: 'https://kubernetes.default.svc.cluster.local', aud: ['neoset-tap'], sub: 'system:serviceaccount:neoset-system:tap-oidc-eventing.knative.dev-trigger' });
      // Each delivery to the functions carried a token of a Trigger's OIDC identity, checked by TokenReview.
      const metrics = await (await fetch(`${deployed.serviceURLs.reconcile}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      const accepted = /neoset_caller_checks_total\{result="(accepted|cached)"[^}]*\} (\d+)/g;
      const total = [...metrics.matchAll(accepted)].reduce((sum, m) => sum + Number(m[2]), 0);
      expect(total).toBeGreaterThanOrEqual(reconciled.length);
      console.log(metrics.split('\n').filter((l) => l.startsWith('neoset_caller_checks_total')).join('\n'));
    }
  });

  it("retries a subscriber's 503 after the Trigger's backoff (exponential from 0.5 s), and delivers the event once it is taken", async () => {
    const ids = (events: ReceivedEvent[], path: string) => events.filter((e) => e.path === path).map((e) => e.attributes.id).sort();
    // Every Pod event the plain tap got reaches the failing-once path too (after its 503), once.
    let last: ReceivedEvent[] = [];
    const events = await waitFor(
      async () => {
        last = await tap.events();
        return JSON.stringify(ids(last, '/')) === JSON.stringify(ids(last, '/retry')) && last;
      },
      { what: 'each Pod event at /retry as at /, once', timeoutMs: 15_000, intervalMs: 100 },
    ).catch(async (err: unknown) => {
      const [plain, retried] = [ids(last, '/'), ids(last, '/retry')];
      const dl = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: 'app.kubernetes.io/component=dead-letter' })).items[0];
      const dead = ((await (await fetch(`http://${dl.status!.podIP}:8080/events`)).json()) as ReceivedEvent[]).map((e) => e.attributes);
      const missing = plain.filter((id) => !retried.includes(id));
      console.log('missing at /retry:', JSON.stringify(last.filter((e) => missing.includes(e.attributes.id)).map((e) => e.attributes)), 'dead letters:', JSON.stringify(dead.filter((a) => missing.includes(a.id))));
      const detail = { plain: plain.length, retried: retried.length, onlyPlain: plain.filter((id) => !retried.includes(id)), onlyRetried: retried.filter((id) => !plain.includes(id)), paths: [...new Set(last.map((e) => e.path))] };
      throw new Error(`${(err as Error).message}: ${JSON.stringify(detail)}`, { cause: err });
    });
    clearInterval(watching);
    const plain = events.filter((e) => e.path === '/');
    expect(plain.length).toBeGreaterThan(5);
    expect(new Set(ids(events, '/retry')).size).toBe(ids(events, '/retry').length);
    const delays = plain.map((e) => (firstSeen.get(`/retry ${e.attributes.id}`) ?? NaN) - (firstSeen.get(`/ ${e.attributes.id}`) ?? NaN)).filter((d) => !Number.isNaN(d)).sort((a, b) => a - b);
    const median = delays[Math.floor(delays.length / 2)];
    console.log(`503 then retried: ${delays.length} events, the retried copy seen ${median} ms (median; min ${delays[0]}, max ${delays.at(-1)}) after the plain one (polled every 50 ms)`);
    expect(delays.length).toBeGreaterThan(5);
    expect(median).toBeGreaterThanOrEqual(400);
    expect(median).toBeLessThan(1500);
  });

  it("takes the fast tick's minute tick through the Broker as a resync of every NeoSet (SPEC §2.4: reconcile made it for the rollout above)", async () => {
    // The fast tick ticks "* * * * *" while anything is in flight (the slow neoset-resync every 10
    // minutes): within a minute of reconcile creating it. Whichever comes first is NeoSet's tick.
    const tick = await waitFor(async () => (await tap.events()).find((e) => e.path === '/ping'), { what: 'a PingSource tick at the tap', timeoutMs: 75_000, intervalMs: 1000 });
    console.log('a PingSource tick as the Broker delivered it:', JSON.stringify({ headers: Object.fromEntries(Object.entries(tick.headers).filter(([k]) => k !== 'authorization')), data: tick.data }));
    expect(tick.attributes).toMatchObject({ type: 'dev.knative.sources.ping', specversion: '1.0' });
    expect(['/apis/v1/namespaces/neoset-system/pingsources/neoset-rollout-tick', '/apis/v1/namespaces/neoset-system/pingsources/neoset-resync']).toContain(tick.attributes.source);
    expect(tick.data).toBe('{}');
    // A tick that came before the NeoSet existed swept nothing of it (ci26: the first tick's list was
    // []): the one that counts is any tick the reconcile log shows sweeping it — the next minute's at the latest.
    const swept = await waitFor(
      async () => {
        const ticks = new Set((await tap.events()).filter((e) => e.path === '/ping').map((e) => e.attributes.id));
        return (await functionLog('reconcile')).find((l) => l.msg === 'event' && ticks.has(l.eventId as string) && JSON.stringify(l.neosets).includes(`${APP}/${NAME}`));
      },
      { what: `a tick in the reconcile log that swept ${APP}/${NAME}`, timeoutMs: 75_000, intervalMs: 500 },
    );
    expect(swept).toMatchObject({ type: 'dev.knative.sources.ping', target: { kind: 'all' }, outcome: 'ok' });
  }, 160_000);

  it('hands an event the function refuses (400, not retried) to the dead-letter sink, with Knative\'s error extensions', async () => {
    // Sent to the Broker as one of NeoSet's sources may (with OIDC: the PingSource's identity, which
    // the EventPolicy lets in); the Trigger neoset-reconcile-neosets takes it, reconcile refuses its data.
    const broker = (await custom().getNamespacedCustomObject({ group: 'eventing.knative.dev', version: 'v1', namespace: SYSTEM_NAMESPACE, plural: 'brokers', name: 'neoset' })) as { status: { address: { url: string; audience?: string } } };
    const token = OIDC ? await kubectl(['-n', SYSTEM_NAMESPACE, 'create', 'token', 'neoset-resync-oidc-sources.knative.dev-pingsource', '--audience', broker.status.address.audience!, '--duration', '10m']) : undefined;
    const id = `malformed-${Date.now()}`;
    const sent = await fetch(`${deployed.serviceURLs.brokerIngress}${new URL(broker.status.address.url).pathname}`, {
      method: 'POST',
      headers: {
        'ce-specversion': '1.0',
        'ce-id': id,
        'ce-type': 'dev.knative.apiserver.resource.update',
        'ce-source': 'neoset.test/dead-letter',
        'ce-kind': 'NeoSet',
        'ce-apiversion': 'neo.io/v1alpha1',
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token.stdout.trim()}` } : {}),
      },
      body: JSON.stringify({ kind: 'NeoSet' }),
      signal: AbortSignal.timeout(5000),
    });
    expect(sent.status).toBe(202);
    const dl = (await core().listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: 'app.kubernetes.io/component=dead-letter' })).items[0];
    const dead = await waitFor(
      async () => ((await (await fetch(`http://${dl.status!.podIP}:8080/events`, { signal: AbortSignal.timeout(3000) })).json()) as ReceivedEvent[]).find((e) => e.attributes.id === id),
      { what: 'the refused event at the dead-letter sink', timeoutMs: 30_000, intervalMs: 250 },
    );
    console.log('a dead letter as the Broker delivered it:', JSON.stringify({ path: dead.path, attributes: dead.attributes, data: dead.data }));
    expect(dead.attributes).toMatchObject({ knativeerrorcode: '400', knativeerrordest: expect.stringMatching(/^http:\/\/neoset-reconcile\.neoset-system\.svc\.cluster\.local\/?$/) });
    // knativeerrordata: the function's answer, base64.
    expect(Buffer.from(dead.attributes.knativeerrordata, 'base64').toString('utf8')).toContain('data: not a Kubernetes object');
    // Refused once, not retried: a 400 is final for the Broker (as for the bridge's isRetryable).
    // (A body that does not parse is logged without its id: the one line with this error is it.)
    const attempts = (await functionLog('reconcile')).filter((l) => l.msg === 'event' && String(l.error).includes('data: not a Kubernetes object'));
    expect(attempts.map((l) => l.outcome)).toEqual(['rejected']);
  });

  it.runIf(OIDC)('refuses an unauthenticated POST to the reconcile Service (401), and a token of the wrong audience', async () => {
    const post = (authorization?: string) =>
      fetch(`${deployed.serviceURLs.reconcile}/`, {
        method: 'POST',
        headers: {
          'ce-specversion': '1.0',
          'ce-id': `forged-${Date.now()}`,
          'ce-type': 'dev.knative.apiserver.resource.update',
          'ce-source': 'https://forger',
          'content-type': 'application/json',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ kind: 'NeoSet', apiVersion: 'neo.io/v1alpha1', metadata: { name: NAME, namespace: APP } }),
        signal: AbortSignal.timeout(5000),
      });
    const bare = await post();
    const bareBody = await bare.text();
    console.log(`unauthenticated POST ${deployed.serviceURLs.reconcile}/ → ${bare.status} ${bare.headers.get('www-authenticate')} ${bareBody}`);
    expect(bare.status).toBe(401);
    expect(JSON.parse(bareBody)).toEqual({ error: `a bearer token for audience ${OIDC_AUDIENCES.reconcile} is required (Knative's authentication-oidc)` });
    // A real token of a Trigger's own identity, but for readiness' audience: refused too.
    const token = await kubectl(['-n', SYSTEM_NAMESPACE, 'create', 'token', 'neoset-reconcile-pods-oidc-eventing.knative.dev-trigger', '--audience', OIDC_AUDIENCES.readiness, '--duration', '10m']);
    expect(token.code, token.out).toBe(0);
    const wrong = await post(`Bearer ${token.stdout.trim()}`);
    expect(wrong.status).toBe(401);
    // Another ServiceAccount of neoset-system with the right audience: 403 (not one of the Triggers').
    const other = await kubectl(['-n', SYSTEM_NAMESPACE, 'create', 'token', 'neoset-events', '--audience', OIDC_AUDIENCES.reconcile, '--duration', '10m']);
    const stranger = await post(`Bearer ${other.stdout.trim()}`);
    expect(stranger.status).toBe(403);
  });

  it.runIf(OIDC)("lets only NeoSet's sources feed the Broker (EventPolicy): another identity's token is refused at the ingress", async () => {
    const broker = (await custom().getNamespacedCustomObject({ group: 'eventing.knative.dev', version: 'v1', namespace: SYSTEM_NAMESPACE, plural: 'brokers', name: 'neoset' })) as {
      status: { address: { url: string; audience?: string }; policies?: { name: string }[] };
    };
    const audience = broker.status.address.audience!;
    expect(audience).toBeTruthy();
    const url = `${deployed.serviceURLs.brokerIngress}${new URL(broker.status.address.url).pathname}`;
    const post = (authorization?: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'ce-specversion': '1.0', 'ce-id': `policy-${Date.now()}`, 'ce-type': 'neoset.test.forged', 'ce-source': 'neoset.test', 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: '{}',
        signal: AbortSignal.timeout(5000),
      });
    const token = async (sa: string) => {
      const r = await kubectl(['-n', SYSTEM_NAMESPACE, 'create', 'token', sa, '--audience', audience, '--duration', '10m']);
      expect(r.code, r.out).toBe(0);
      return `Bearer ${r.stdout.trim()}`;
    };
    const none = await post();
    const stranger = await post(await token('neoset-reconcile'));
    // The PingSource's own OIDC identity (Knative's name for it) is let in: the policy tells them apart.
    const source = await post(await token('neoset-resync-oidc-sources.knative.dev-pingsource'));
    console.log(`POST to the Broker ingress: no token → ${none.status}, neoset-reconcile's token → ${stranger.status} ${await stranger.text()}, the PingSource's → ${source.status}`);
    expect(none.status).toBe(401);
    expect(stranger.status).toBe(403);
    expect(source.status).toBe(202);
    // The Broker names the policy it applies.
    expect(broker.status.policies?.map((p) => p.name)).toEqual(['neoset-broker']);
  });
});

/** The network namespaces of this stack's process-mode pods (the kubelet names one per pod: neoset-<bridge>-<uid, 12 hex>). */
async function podNetns(): Promise<string[]> {
  const uids = (await core().listPodForAllNamespaces()).items.map((p) => p.metadata!.uid!.replace(/-/g, '').slice(0, 12));
  return (existsSync('/run/netns') ? readdirSync('/run/netns') : []).filter((n) => uids.some((u) => n.startsWith('neoset-') && n.endsWith(`-${u}`)));
}

/** The processes running in those namespaces (other stacks on this machine run the same programs). */
function processesIn(netns: string[]): number[] {
  const inodes = new Set(netns.map((n) => statSync(join('/run/netns', n)).ino));
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return inodes.has(statSync(`/proc/${pid}/ns/net`).ino);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('after the stack stops', () => {
  it('leaves no process, network namespace or kube-proxy table behind', async () => {
    const netns = await podNetns();
    const pids = processesIn(netns);
    // Knative's components, CoreDNS, NeoSet's functions, the tap and the dead-letter stand-in.
    expect(netns.length).toBeGreaterThanOrEqual(15);
    expect(pids.length).toBeGreaterThanOrEqual(netns.length);
    await stack?.stop();
    stack = undefined;
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
    expect(await kubeProxyTables()).toEqual([]);
    expect(netns.filter((n) => existsSync(join('/run/netns', n)))).toEqual([]);
  }, 90_000);
});
