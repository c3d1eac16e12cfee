// The API server goes away (issue 22 §4): on a control plane of its own (the shared one cannot be
// stopped from a test file), with the three functions as real processes as in the dev stack
// (dev/functions.ts; admission registered as the NeoSet webhooks), the event bridge delivering to
// them over HTTP with the Triggers' retry policy, a simulated kubelet and the invariant observer.
// Mid-rollout, kube-apiserver is killed (SIGKILL, same etcd) and started again; in a second rollout,
// etcd is killed under a running kube-apiserver and started again (same data directory and ports).
// While either is down, every function's /healthz answers and an event POST is answered 503 (the
// Broker redelivers), no process exits; once it is back the rollout completes, no invariant broke,
// and the API server's own audit log (pod patches at Request level: the bodies) shows each pod
// patched to each new image exactly once — no write lost, none doubled.
import { mkdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPump, type Pump } from '../../dev/bridge/pump.ts';
import { sinksFromTriggers } from '../../dev/bridge/triggers.ts';
import { createCa, issueServingCert, LOOPBACK_HOSTS } from '../../dev/cluster/certs.ts';
import { startControlPlane, type Component, type ControlPlane } from '../../dev/cluster/control-plane.ts';
import { installCrds } from '../../dev/cluster/crd.ts';
import { probe } from '../../dev/cluster/probe.ts';
import { waitForDefaultServiceAccount } from '../../dev/cluster/wait.ts';
import { startFunction, type FunctionName, type RunningFunction } from '../../dev/functions.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { KNATIVE_DIR, type Manifest } from '../../dev/manifests.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { run } from '../cluster/harness.ts';
import { testWebhookConfigurations } from '../cluster/webhooks.ts';
import { applyNeoSet, imageOf, setImage, settledOn, untilStatus } from '../e2e/helpers.ts';
import { failOnExit } from '../e2e/exits.ts';
import { startObserver, type Observer } from '../e2e/observer.ts';
import { neosetManifest, type Stack } from '../e2e/stack.ts';

const NAME = 'db';
const NAMESPACE = 'restart';
const REPLICAS = 4;
/** How long the component stays down: several resync ticks and pod events go unanswered meanwhile. */
const DOWN_MS = 6_000;
const manifests = ['eventing.yaml', 'reconcile.yaml', 'readiness.yaml'].flatMap((f) => parseAllDocuments(readFileSync(join(KNATIVE_DIR, f), 'utf8')).map((d) => d.toJS() as Manifest));

interface AuditEvent {
  verb: string;
  stage: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestObject?: { spec?: { containers?: { name?: string; image?: string }[] } };
}

/** Successful PATCHes of a pod (not a subresource) whose body sets a container's image to `image`, by pod. */
function imagePatches(auditLog: string, namespace: string, image: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of auditLog.split('\n')) {
    if (!line.includes('"patch"')) continue;
    const e = JSON.parse(line) as AuditEvent;
    const ref = e.objectRef;
    if (e.verb !== 'patch' || e.stage !== 'ResponseComplete' || ref?.resource !== 'pods' || ref.subresource || ref.namespace !== namespace || !ref.name) continue;
    const code = e.responseStatus?.code ?? 0;
    if (code < 200 || code >= 300) continue;
    if (!e.requestObject?.spec?.containers?.some((c) => c.image === image)) continue;
    counts[ref.name] = (counts[ref.name] ?? 0) + 1;
  }
  return counts;
}

describe('the API server goes away mid-rollout: kube-apiserver, then etcd (issue 22 §4)', () => {
  let cp: ControlPlane;
  let kubelet: Kubelet;
  let functions: RunningFunction[] = [];
  let pump: Pump;
  let observer: Observer;
  let stack: Stack;
  let caPem: string;
  const cpLog: string[] = [];
  /** Set once the test itself stops the processes: only exits before that count. */
  let stopping = false;
  /** Rejects as soon as a function process exits by itself (every wait below races it). */
  let exitedByItself: Promise<never>;
  /** What each outage showed, for the report. */
  const outages: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const started = Date.now();
    cp = await startControlPlane({ auditPodRequests: true, log: (l) => cpLog.push(l) });
    const kc = cp.kubeConfig();
    await installCrds(kc);
    const client = createKubeClient(kc);
    await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NAMESPACE } } });
    await waitForDefaultServiceAccount(kc, NAMESPACE);
    kubelet = await startKubelet({ kubeConfig: kc, nodeName: 'node-restart', namespace: NAMESPACE, readyDelayMs: 1000, startDelayMs: 100 });
    const dir = join(cp.dir, 'functions');
    mkdirSync(dir, { recursive: true });
    const ca = await createCa('neoset-restart-test-ca');
    caPem = ca.certPem;
    const serving = await issueServingCert(ca, LOOPBACK_HOSTS);
    const [certFile, keyFile] = [join(dir, 'admission.crt'), join(dir, 'admission.key')];
    await Promise.all([writeFile(certFile, serving.certPem, { mode: 0o600 }), writeFile(keyFile, serving.keyPem, { mode: 0o600 })]);
    const start = (name: FunctionName) =>
      startFunction({ name, port: 0, kubeconfig: cp.kubeconfigPath, logPath: join(dir, `${name}.log`), ...(name === 'admission' ? { tls: { certFile, keyFile, caPem } } : {}) });
    functions = await Promise.all((['reconcile', 'readiness', 'admission'] as const).map(start));
    exitedByItself = failOnExit(functions, () => stopping);
    const [reconcile, readiness, admission] = functions;
    const webhooks = await testWebhookConfigurations({ name: 'neoset-restart', baseUrl: admission.url, caPem, namespace: NAMESPACE });
    const applied = await run('kubectl', ['--kubeconfig', cp.kubeconfigPath, 'apply', '-f', '-'], { input: webhooks });
    if (applied.code !== 0) throw new Error(`registering the webhooks: ${applied.stderr}`);
    pump = startPump({ kubeConfig: kc, namespace: NAMESPACE, sinks: sinksFromTriggers(manifests, { 'neoset-reconcile': `${reconcile.url}/`, 'neoset-readiness': `${readiness.url}/` }), resyncMs: 1000 });
    observer = startObserver(kc, NAMESPACE);
    await Promise.all([pump.ready, observer.ready]);
    const unsupported = () => Promise.reject(new Error('not in the restart stack'));
    stack = {
      namespace: NAMESPACE,
      kc,
      client,
      pump,
      observer,
      kubectl: (args, input) => run('kubectl', ['--kubeconfig', cp.kubeconfigPath, '-n', NAMESPACE, ...args], { input }),
      restartFunctions: unsupported,
      stop: unsupported,
    };
    console.log(`[apiserver-restart] stack ready in ${Date.now() - started} ms (control plane ${cp.dir})`);
  });

  afterAll(async () => {
    stopping = true;
    await pump?.stop();
    observer?.stop();
    await Promise.all(functions.map((fn) => fn.process.stop()));
    await kubelet?.stop();
    await cp?.stop();
    if (process.env.RESTART_LOG) console.log(cpLog.join('\n'));
  });

  /** A wait that fails at once, naming the process, when a function exits by itself meanwhile. */
  const until = <T>(wait: Promise<T>) => Promise.race([wait, exitedByItself]);

  // Admission serves a certificate of the test CA.
  const get = (fn: RunningFunction, url: string) => probe(url, fn.name === 'admission' ? { ca: caPem } : undefined, 5_000);
  const healthz = async (fn: RunningFunction) => (await get(fn, `${fn.url}/healthz`))?.status ?? 0;
  /** Asks every function's /healthz every 250 ms until stopped: how many answers, and those that were not 200. */
  const pollHealth = () => {
    const seen = { asked: 0, bad: [] as string[] };
    let polling = true;
    const done = (async () => {
      while (polling) {
        const statuses = await Promise.all(functions.map(healthz));
        seen.asked += statuses.length;
        statuses.forEach((status, i) => status !== 200 && seen.bad.push(`${functions[i].name} ${status} at ${new Date().toISOString()}`));
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    return async () => {
      polling = false;
      await done;
      return seen;
    };
  };
  /** A Reference-mode CloudEvent (structured, as a user replays one with curl): the function must read to act. */
  const postRef = async (fn: RunningFunction, kind: 'NeoSet' | 'Pod', name: string) => {
    const started = Date.now();
    const event = {
      specversion: '1.0',
      id: `restart-${kind}-${started}`,
      source: 'https://127.0.0.1:6443',
      type: 'dev.knative.apiserver.ref.update',
      datacontenttype: 'application/json',
      data: { apiVersion: kind === 'Pod' ? 'v1' : 'neo.io/v1alpha1', kind, name, namespace: NAMESPACE },
    };
    const r = await fetch(`${fn.url}/`, { method: 'POST', headers: { 'content-type': 'application/cloudevents+json' }, body: JSON.stringify(event), signal: AbortSignal.timeout(90_000) });
    return { status: r.status, body: await r.text(), ms: Date.now() - started };
  };

  /**
   * Starts a rollout to `image`, and once some pods have it and some not, kills `component`; while it
   * is down checks the functions, then starts it again and waits for the rollout to complete.
   */
  async function rolloutThrough(component: Component, image: string): Promise<void> {
    const [reconcile, readiness] = functions;
    await setImage(stack, NAME, image);
    const mid = await until(
      observer.until(`some pods on ${image}, not all`, () => {
        const images = observer.pods(NAME).map(imageOf);
        return images.includes(image) && images.some((i) => i !== image) ? images : false;
      }, 60_000),
    );
    const killedAt = Date.now();
    await cp.stopComponent(component, { kill: true });
    // While it is down: each function answers /healthz throughout, events that need the API server 503.
    const stopPolling = pollHealth();
    const [neosetEvent, podEvent] = await Promise.all([postRef(reconcile, 'NeoSet', NAME), postRef(readiness, 'Pod', `${NAME}-0`)]);
    const rest = DOWN_MS - (Date.now() - killedAt);
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    const health = await stopPolling();
    const alive = functions.map((fn) => !fn.process.hasExited());
    const restartStarted = Date.now();
    await cp.startComponent(component);
    const backAt = Date.now();
    const done = await until(
      untilStatus(stack, NAME, `rollout to ${image} complete`, (n, pods) => n.status?.phase === 'Completed' && pods.length === REPLICAS && pods.every((p) => imageOf(p) === image && settledOn(p, n.status?.updateRevision)), 120_000),
    );
    const summary = {
      component,
      image,
      podsAtKill: mid,
      downMs: backAt - killedAt,
      startMs: backAt - restartStarted,
      completedAfterBackMs: Date.now() - backAt,
      health,
      reconcile503: { status: neosetEvent.status, ms: neosetEvent.ms, body: neosetEvent.body.slice(0, 200) },
      readiness503: { status: podEvent.status, ms: podEvent.ms, body: podEvent.body.slice(0, 200) },
      bridge: { ...pump.stats },
    };
    outages.push(summary);
    console.log(`[apiserver-restart] ${JSON.stringify(summary)}`);
    expect(health.bad, '/healthz answers other than 200 while down').toEqual([]);
    expect(health.asked).toBeGreaterThanOrEqual(3 * 10);
    expect(neosetEvent.status, `reconcile answered a NeoSet event while ${component} was down: ${neosetEvent.body}`).toBe(503);
    expect(podEvent.status, `readiness answered a Pod event while ${component} was down: ${podEvent.body}`).toBe(503);
    // Bounded by the functions' API request timeout (30 s, shared/k8s/client.ts): a stuck etcd is not waited out.
    expect(Math.max(neosetEvent.ms, podEvent.ms)).toBeLessThan(35_000);
    expect(alive).toEqual([true, true, true]);
    expect(done.status?.currentRevision).toBe(done.status?.updateRevision);
  }

  it('a NeoSet of 4 pods is created through admission and becomes ready', async () => {
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: REPLICAS, image: 'mysql:8.0', updateStrategy: { maxUnavailable: 1 } }));
    await until(untilStatus(stack, NAME, `${REPLICAS} ready pods`, (n, pods) => n.status?.readyReplicas === REPLICAS && pods.length === REPLICAS, 60_000));
  }, 90_000);

  it('kube-apiserver killed mid-rollout (same etcd): 503 while down, no exit; the rollout completes once it is back', async () => {
    await rolloutThrough('kube-apiserver', 'mysql:8.1');
  }, 180_000);

  it('etcd killed mid-rollout under kube-apiserver: 503 while down, no exit; the rollout completes once it is back', async () => {
    await rolloutThrough('etcd', 'mysql:8.2');
  }, 240_000);

  it("the API server's audit log shows each pod patched to each new image exactly once", () => {
    const log = readFileSync(cp.auditLogPath, 'utf8');
    const expected = Object.fromEntries(Array.from({ length: REPLICAS }, (_, i) => [`${NAME}-${i}`, 1]));
    const byImage = Object.fromEntries(['mysql:8.1', 'mysql:8.2'].map((image) => [image, imagePatches(log, NAMESPACE, image)]));
    console.log(`[apiserver-restart] image patches by pod (audit): ${JSON.stringify(byImage)}`);
    expect(byImage['mysql:8.1']).toEqual(expected);
    expect(byImage['mysql:8.2']).toEqual(expected);
  });

  it('no invariant was violated, the observer saw both restarts through, no function exited or left a rejection unhandled', async () => {
    console.log(`[apiserver-restart] observer: ${observer.checks} states checked, ${observer.violations.length} violations; bridge ${JSON.stringify(pump.stats)}`);
    expect(observer.checks).toBeGreaterThan(20);
    expect(observer.violations).toEqual([]);
    expect(functions.filter((fn) => fn.process.hasExited()).map((fn) => fn.name)).toEqual([]);
    for (const fn of functions) {
      const metrics = (await get(fn, fn.metricsUrl))?.body ?? '';
      expect(metrics, fn.name).toMatch(/^neoset_unhandled_rejections_total 0$/m);
    }
    const retries = functions.map((fn) => readFileSync(fn.process.logPath, 'utf8').split('\n').filter((l) => l.includes('"outcome":"retry"')).length);
    console.log(`[apiserver-restart] events answered 503: ${functions.map((fn, i) => `${fn.name} ${retries[i]}`).join(', ')}; outages ${outages.length}`);
  });
});
