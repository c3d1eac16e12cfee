// SPEC §2.3 "one clock" (issue 22 §3), end to end: the one reconcile instance runs as a real process
// under libfaketime (Debian's faketime package; test/cluster/prepare.ts installs it) with its wall
// clock 60 s ahead and its monotonic clock real; the readiness function runs beside it with the true
// clock, the event bridge delivers to both (as in chaos.test.ts), a simulated kubelet runs the pods.
// The host's clock is the API server's here (same machine), and the kubelet stamps the pods' Ready
// lastTransitionTime with it. With minReadySeconds 10 and a canary with a 15 s timed pause:
//   - availableReplicas never rises above the pods Ready for 10 s by that clock at the moment it is seen;
//   - the pause's stepStartedAt is on that clock (not 60 s ahead), and the next step starts no earlier
//     than 15 s after it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPump, type Pump } from '../../dev/bridge/pump.ts';
import { sinksFromTriggers } from '../../dev/bridge/triggers.ts';
import { startFunction, type RunningFunction } from '../../dev/functions.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { KNATIVE_DIR, type Manifest } from '../../dev/manifests.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { createTestNamespace, kubeConfig, kubeconfigPath, kubectl, type TestNamespace } from '../cluster/harness.ts';
import { applyNeoSet, setImage, settledOn, untilStatus } from '../e2e/helpers.ts';
import { startObserver, type NeoSetObject, type Observer } from '../e2e/observer.ts';
import { neosetManifest, type Stack } from '../e2e/stack.ts';

const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const NAME = 'skewed';
const SKEW_S = 60;
const MIN_READY_MS = 10_000;
const PAUSE_MS = 15_000;
/** libfaketime's variables (Debian 12's 0.9.10): a fixed offset, and the monotonic clock left real. */
const SKEWED = { LD_PRELOAD: LIBFAKETIME, FAKETIME: `+${SKEW_S}s`, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
const manifests = ['eventing.yaml', 'reconcile.yaml', 'readiness.yaml'].flatMap((f) => parseAllDocuments(readFileSync(join(KNATIVE_DIR, f), 'utf8')).map((d) => d.toJS() as Manifest));

const readySince = (p: Pod) => {
  const ready = p.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
  return ready?.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : null;
};

describe.skipIf(!existsSync(LIBFAKETIME))('one clock: a reconcile instance whose node clock is 60 s ahead (SPEC §2.3)', () => {
  let ns: TestNamespace;
  let kubelet: Kubelet;
  let functions: RunningFunction[] = [];
  let pump: Pump;
  let observer: Observer;
  let stack: Stack;
  /** The functions' logs, removed once they have stopped. */
  let dir: string | undefined;

  beforeAll(async () => {
    ns = await createTestNamespace('clock');
    const kc = kubeConfig();
    kubelet = await startKubelet({ kubeConfig: kc, nodeName: `node-${ns.name}`, namespace: ns.name, readyDelayMs: 300, startDelayMs: 100 });
    const logs = join(tmpdir(), `neoset-${ns.name}`);
    dir = logs;
    mkdirSync(logs, { recursive: true });
    const start = (name: 'reconcile' | 'readiness', env?: Record<string, string>) => startFunction({ name, port: 0, kubeconfig: kubeconfigPath(), logPath: join(logs, `${name}.log`), env });
    functions = await Promise.all([start('reconcile', SKEWED), start('readiness')]);
    const [reconcile, readiness] = functions;
    pump = startPump({ kubeConfig: kc, namespace: ns.name, sinks: sinksFromTriggers(manifests, { 'neoset-reconcile': `${reconcile.url}/`, 'neoset-readiness': `${readiness.url}/` }), resyncMs: 1000 });
    observer = startObserver(kc, ns.name);
    await Promise.all([pump.ready, observer.ready]);
    const unsupported = () => Promise.reject(new Error('not in the clock stack'));
    stack = { namespace: ns.name, kc, client: createKubeClient(kc), pump, observer, kubectl: (args, input) => kubectl(['-n', ns.name, ...args], { input }), restartFunctions: unsupported, stop: unsupported };
  });

  afterAll(async () => {
    await pump?.stop();
    observer?.stop();
    await Promise.all(functions.map((fn) => fn.process.stop()));
    await ns?.cleanup({ wait: true }).catch(() => {});
    await kubelet?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('under those variables a Node process reads a wall clock 60 s ahead and a real monotonic clock', () => {
    const probe = 'const w = Date.now(), m = performance.now(); setTimeout(() => console.log(JSON.stringify({ w, wall: Date.now() - w, mono: performance.now() - m })), 1000)';
    const before = Date.now();
    const r = spawnSync(process.execPath, ['-e', probe], { env: { ...process.env, ...SKEWED }, encoding: 'utf8' });
    const { w, wall, mono } = JSON.parse(r.stdout) as { w: number; wall: number; mono: number };
    expect(w - before).toBeGreaterThanOrEqual((SKEW_S - 1) * 1000);
    expect(w - before).toBeLessThanOrEqual((SKEW_S + 5) * 1000);
    expect(wall).toBeGreaterThanOrEqual(990);
    expect(mono).toBeGreaterThanOrEqual(990);
    expect(mono).toBeLessThan(3000);
  });

  it('counts no pod available early, and ends the 15 s pause no earlier than 15 s after its step, by the API server\'s clock', async () => {
    const early: string[] = [];
    const readyAt = new Map<string, number>();
    let available = 0;
    let pause: { stamped: number; seen: number } | null = null;
    let next: { stamped: number; seen: number } | null = null;
    /** The revision the NeoSet was created on: its canary steps are the rollout's only once it moves on. */
    let first: string | undefined;
    /** Called on every observed state (observer.until runs its predicate on each change). */
    const watch = (n: NeoSetObject, pods: Pod[]) => {
      const seen = Date.now();
      for (const p of pods) {
        const since = readySince(p);
        if (since !== null) readyAt.set(p.metadata.name, since);
      }
      const count = n.status?.availableReplicas ?? 0;
      if (count > available) {
        // Ready lastTransitionTime is whole seconds, at most the true moment: lenient by up to 1 s.
        const eligible = [...readyAt.entries()].filter(([, t]) => t + MIN_READY_MS <= seen).map(([p]) => p);
        if (count > eligible.length) early.push(`availableReplicas ${count} seen at ${new Date(seen).toISOString()}, Ready for ${MIN_READY_MS / 1000} s then: ${eligible.length} (Ready since ${JSON.stringify(Object.fromEntries([...readyAt].map(([p, t]) => [p, new Date(t).toISOString()])))})`);
      }
      available = count;
      first ??= n.status?.updateRevision;
      const canary = n.status?.updateRevision !== first && n.status?.canary?.revision === n.status?.updateRevision ? n.status?.canary : undefined;
      if (canary?.stepIndex === 1 && !pause) pause = { stamped: Date.parse(canary.stepStartedAt), seen };
      if ((canary?.stepIndex ?? 0) >= 2 && !next) next = { stamped: Date.parse(canary!.stepStartedAt), seen };
      return false;
    };
    const settled = (n: NeoSetObject, pods: Pod[]) => n.status?.phase === 'Idle' && n.status?.availableReplicas === 2 && pods.length === 2;
    const steps = [{ partition: 1 }, { pause: { duration: `${PAUSE_MS / 1000}s` } }, { partition: 0 }];
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 2, image: 'mysql:8.0', spec: { minReadySeconds: MIN_READY_MS / 1000, podManagementPolicy: 'Parallel' }, updateStrategy: { canary: { steps } } }));
    await untilStatus(stack, NAME, '2 pods available', (n, pods) => watch(n, pods) || settled(n, pods), 60_000);
    await setImage(stack, NAME, 'mysql:8.1');
    const done = await untilStatus(stack, NAME, 'rollout complete', (n, pods) => watch(n, pods) || (n.status?.phase === 'Completed' && n.status.availableReplicas === 2 && pods.every((p) => settledOn(p, n.status?.updateRevision))), 90_000);
    expect(done.status?.currentRevision).toBe(done.status?.updateRevision);
    console.log(`[one-clock] pause ${JSON.stringify(pause)}, next step ${JSON.stringify(next)}; ready since ${JSON.stringify(Object.fromEntries(readyAt))}`);
    expect(early).toEqual([]);
    expect(pause, 'the timed pause was seen').not.toBeNull();
    expect(next, 'the step after it was seen').not.toBeNull();
    // The step's stamp is on the API server's clock: not in our future (whole seconds: up to 1 s under).
    expect(pause!.stamped).toBeLessThanOrEqual(pause!.seen);
    expect(next!.seen - pause!.stamped).toBeGreaterThanOrEqual(PAUSE_MS);
    expect(next!.stamped - pause!.stamped).toBeGreaterThanOrEqual(PAUSE_MS);
    expect(observer.violations).toEqual([]);
  }, 150_000);

  it('the skewed instance exported its offset and logged it once', async () => {
    const offset = async (fn: RunningFunction) => Number(/^neoset_clock_offset_seconds (\S+)$/m.exec(await (await fetch(fn.metricsUrl)).text())?.[1]);
    const [reconcile] = functions;
    const seen = await offset(reconcile);
    expect(seen).toBeGreaterThanOrEqual(SKEW_S - 1);
    expect(seen).toBeLessThanOrEqual(SKEW_S + 2);
    const warnings = readFileSync(reconcile.process.logPath, 'utf8').split('\n').filter((l) => l.includes('"offsetSeconds"'));
    expect(warnings.length, 'logged once per 10 minutes, not per run').toBe(1);
  });
});
