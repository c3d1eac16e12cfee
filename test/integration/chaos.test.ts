// Chaos (issue 19, SPEC §2.3 "no fault may crash a process"): the reconcile and readiness functions run
// as real processes, as in the dev stack (dev/functions.ts), their API traffic through a proxy that
// answers a seeded ~10 % of requests with a 500 Status or a connection reset, before or after the
// request reached the API server (test/e2e/fault-proxy.ts);
// the event bridge delivers to them over HTTP with the Triggers' retry policy, a simulated kubelet
// runs the pods, the invariant observer watches every state. A rollout and a scale-up must complete,
// no invariant may break, no function process may exit by itself, and the faults must have been
// answered as transient (503: the Broker redelivers).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPump, type Pump } from '../../dev/bridge/pump.ts';
import { sinksFromTriggers } from '../../dev/bridge/triggers.ts';
import { startFunction, type RunningFunction } from '../../dev/functions.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { KNATIVE_DIR, type Manifest } from '../../dev/manifests.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { createTestNamespace, kubeConfig, kubectl, type TestNamespace } from '../cluster/harness.ts';
import { startFaultProxy, type FaultProxy } from '../e2e/fault-proxy.ts';
import { applyNeoSet, imageOf, patchNeoSet, setImage, settledOn, untilStatus } from '../e2e/helpers.ts';
import { failOnExit } from '../e2e/exits.ts';
import { startObserver, type Observer } from '../e2e/observer.ts';
import { neosetManifest, type Stack } from '../e2e/stack.ts';

const NAME = 'chaos';
const SEED = Number(process.env.CHAOS_SEED ?? 19);
const RECONCILE_INSTANCES = 2;
/** The Triggers of knative/eventing.yaml and the Services they name, as the dev stack's bridge plays them. */
const manifests = ['eventing.yaml', 'reconcile.yaml', 'readiness.yaml'].flatMap((f) => parseAllDocuments(readFileSync(join(KNATIVE_DIR, f), 'utf8')).map((d) => d.toJS() as Manifest));

describe('chaos: 10 % API faults under real function processes', () => {
  let ns: TestNamespace;
  let kubelet: Kubelet;
  let proxy: FaultProxy;
  let functions: RunningFunction[] = [];
  let pump: Pump;
  let observer: Observer;
  let stack: Stack;
  /** Set once the test itself stops the processes: only exits before that count. */
  let stopping = false;
  /** Rejects as soon as a function process exits by itself (every wait below races it). */
  let exitedByItself: Promise<never>;
  const started = Date.now();
  /** The functions' kubeconfig and logs, removed once they have stopped. */
  let dir: string | undefined;

  beforeAll(async () => {
    ns = await createTestNamespace('chaos');
    const kc = kubeConfig();
    kubelet = await startKubelet({ kubeConfig: kc, nodeName: `node-${ns.name}`, namespace: ns.name, readyDelayMs: 300, startDelayMs: 100 });
    proxy = await startFaultProxy({ kubeConfig: kc, seed: SEED });
    const logs = join(tmpdir(), `neoset-${ns.name}`);
    dir = logs;
    mkdirSync(logs, { recursive: true });
    const kubeconfig = join(logs, 'kubeconfig');
    writeFileSync(kubeconfig, proxy.kubeconfigYaml(), { mode: 0o600 });
    const start = (name: 'reconcile' | 'readiness', i: number) => startFunction({ name, port: 0, kubeconfig, logPath: join(logs, `${name}-${i}.log`) });
    functions = await Promise.all([...Array.from({ length: RECONCILE_INSTANCES }, (_, i) => start('reconcile', i)), start('readiness', 0)]);
    exitedByItself = failOnExit(functions, () => stopping);
    const [readiness, ...reconcilers] = [functions.at(-1)!, ...functions.slice(0, -1)];
    // Each reconcile instance is a subscriber of its own (every event reaches each), as are more pods of one Knative Service.
    const sinks = reconcilers.flatMap((r, i) => sinksFromTriggers(manifests, { 'neoset-reconcile': `${r.url}/`, ...(i === 0 ? { 'neoset-readiness': `${readiness.url}/` } : {}) }));
    pump = startPump({ kubeConfig: kc, namespace: ns.name, sinks, resyncMs: 1000 });
    observer = startObserver(kc, ns.name);
    await Promise.all([pump.ready, observer.ready]);
    const unsupported = () => Promise.reject(new Error('not in the chaos stack'));
    stack = { namespace: ns.name, kc, client: createKubeClient(kc), pump, observer, kubectl: (args, input) => kubectl(['-n', ns.name, ...args], { input }), restartFunctions: unsupported, stop: unsupported };
  });

  afterAll(async () => {
    stopping = true;
    await pump?.stop();
    observer?.stop();
    await Promise.all(functions.map((fn) => fn.process.stop()));
    await proxy?.stop();
    await ns?.cleanup({ wait: true }).catch(() => {});
    await kubelet?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A wait that fails at once, naming the process, when a function exits by itself meanwhile. */
  const until = <T>(wait: Promise<T>) => Promise.race([wait, exitedByItself]);

  it('a rollout and a scale-up complete through the faults', async () => {
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 5, image: 'mysql:8.0', updateStrategy: { maxUnavailable: 2 } }));
    await until(untilStatus(stack, NAME, '5 ready pods', (n, pods) => n.status?.readyReplicas === 5 && pods.length === 5, 45_000));
    await setImage(stack, NAME, 'mysql:8.1');
    const done = await until(untilStatus(stack, NAME, 'rollout complete', (n, pods) => n.status?.phase === 'Completed' && pods.length === 5 && pods.every((p) => settledOn(p, n.status?.updateRevision)), 45_000));
    expect(done.status?.currentRevision).toBe(done.status?.updateRevision);
    await patchNeoSet(stack, NAME, { spec: { replicas: 7 } });
    await until(untilStatus(stack, NAME, '7 ready pods on 8.1', (n, pods) => n.status?.readyReplicas === 7 && pods.length === 7, 45_000));
    expect(observer.pods(NAME).map(imageOf)).toEqual(Array(7).fill('mysql:8.1'));
    console.log(`[chaos] seed ${SEED}: ${JSON.stringify(proxy.stats)}; bridge ${JSON.stringify(pump.stats)}; ${Date.now() - started} ms`);
  }, 150_000);

  it('the faults were injected and answered as transient (503, redelivered), never unhandled', async () => {
    expect(proxy.stats.internalErrors).toBeGreaterThan(5);
    expect(proxy.stats.resets).toBeGreaterThan(5);
    expect(proxy.stats.lostAnswers).toBeGreaterThan(5);
    const answered503 = functions.map((fn) => readFileSync(fn.process.logPath, 'utf8').split('\n').filter((l) => l.includes('"outcome":"retry"')).length);
    console.log(`[chaos] events answered 503 by ${functions.map((fn, i) => `${fn.name}: ${answered503[i]}`).join(', ')}; bridge retries ${pump.stats.retries}`);
    expect(answered503.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(pump.stats.retries).toBeGreaterThan(0);
    for (const fn of functions) {
      const metrics = await (await fetch(fn.metricsUrl)).text();
      expect(metrics, fn.name).toMatch(/^neoset_unhandled_rejections_total 0$/m);
    }
  });

  it('no invariant was violated and no function process exited by itself', () => {
    expect(observer.checks).toBeGreaterThan(20);
    expect(observer.violations).toEqual([]);
    expect(functions.filter((fn) => fn.process.hasExited()).map((fn) => `${fn.name} pid ${fn.process.pid}: rc=${fn.process.hasExited()}`)).toEqual([]);
  });
});
