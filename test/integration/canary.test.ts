// SPEC §4.11 (issue 12), end to end: a real kube-apiserver, the simulated kubelet, the functions
// in-process (test/e2e/stack.ts), the invariant checker over every observed state, and the plugin as
// users run it. The Prometheus analysis is judged by a REAL Prometheus (Debian's package; npm test
// installs it) scraping the reconcile function's /metrics — its own counters and the state gauges
// read from the API — while the stack's reconcile instances query it at the end of each step.
// Timings are asserted from the timestamps of observed states, with slack: the resync tick is 1 s.
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetricsApp } from '../../functions/reconcile/app.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { freePorts } from '../../dev/cluster/ports.ts';
import { analysisAddressesFromEnv } from '../../shared/core/canary/addresses.ts';
import { kubeConfig, kubeconfigPath, run as runCommand } from '../cluster/harness.ts';
import { startPrometheus, type Prometheus } from '../cluster/prometheus.ts';
import { applyNeoSet, identities, imageOf, setImage, settledOn, untilStatus } from '../e2e/helpers.ts';
import type { NeoSetObject } from '../e2e/observer.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin');
const RESYNC_MS = 1000;
/** metav1.Time has whole seconds: a step's start is stamped up to 1 s before the moment it began. */
const STAMP_MS = 1000;
const SLACK_MS = 1500;

/** `kubectl neoset ...` with bin/ on PATH, as a user runs it. */
const neo = (stack: Stack, args: string[]) =>
  runCommand('kubectl', ['neoset', ...args, '-n', stack.namespace], { env: { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH}`, KUBECONFIG: kubeconfigPath() } });

const canaryOf = (n: NeoSetObject) => (n.status?.canary?.revision === n.status?.updateRevision ? n.status?.canary : undefined);
const condition = (n: NeoSetObject, type: string) => n.status?.conditions?.find((c) => c.type === type);
/**
 * The timed pause: long enough for `kubectl neoset rollout status`, a process started once the pause
 * is seen, to read it still running on a loaded machine (ci26: with 5 s it read step 3).
 */
const PAUSE_MS = 8000;
const STEPS = [{ partition: 4 }, { pause: { duration: `${PAUSE_MS / 1000}s` } }, { partition: '50%' }, { pause: {} }, { partition: 0 }];

describe('canary steps on a real API server (5 pods)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ prefix: 'canary', resyncMs: RESYNC_MS });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('partition 4, a timed pause, 50% (pods 3 and 4), a pause for promote; promote takes the rest; Completed', async () => {
    const name = 'steps';
    await applyNeoSet(stack, neosetManifest({ name, replicas: 5, image: 'mysql:8.0', updateStrategy: { canary: { steps: STEPS } } }));
    await untilStatus(stack, name, '5 ready pods', (n) => n.status?.readyReplicas === 5 && n.status?.phase === 'Idle');
    const before = identities(stack.observer.pods(name));
    const edited = Date.now();
    await setImage(stack, name, 'mysql:8.1');
    const paused = await untilStatus(stack, name, 'pod 4 on 8.1, the timed pause running', (n) => canaryOf(n)?.stepIndex === 1);
    const pauseSeen = Date.now();
    expect(stack.observer.pods(name).map(imageOf)).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.0', 'mysql:8.0', 'mysql:8.1']);
    expect(paused.status?.phase).toBe('Canary');
    const pauseStarted = Date.parse(canaryOf(paused)!.stepStartedAt);
    const status = await neo(stack, ['rollout', 'status', name, '--watch=false']);
    const more = /step 2\/5: paused for (\d+)s more/.exec(status.stdout);
    // The plugin (a Node process loading client-node: 1.5 s idle) may answer after the pause is over
    // on a loaded machine (ci34: 'step 4/5' already); only then may it not show the pause.
    if (more === null && Date.now() >= pauseStarted + PAUSE_MS) console.log(`rollout status answered after the pause was over: ${status.stdout.trim()}`);
    else {
      expect(more, status.stdout).not.toBeNull();
      expect(Number(more![1])).toBeGreaterThanOrEqual(1);
      expect(Number(more![1])).toBeLessThanOrEqual(PAUSE_MS / 1000);
    }

    const next = await untilStatus(stack, name, 'the pause over: step 3', (n) => (canaryOf(n)?.stepIndex ?? 0) >= 2, 30_000);
    const pauseEnded = Date.now();
    const held = await untilStatus(stack, name, 'pods 3 and 4 on 8.1, waiting for promote', (n, pods) => canaryOf(n)?.stepIndex === 3 && pods.slice(3).every((p) => settledOn(p, n.status?.updateRevision)), 30_000);
    const heldSeen = Date.now();
    const measured = {
      'image patched → pod 4 done, pause started (ms)': pauseSeen - edited,
      'pause: started → seen over (ms)': pauseEnded - pauseStarted,
      'pause: seen started → seen over (ms)': pauseEnded - pauseSeen,
      'step 3 → pods 3 and 4 settled (ms)': heldSeen - pauseEnded,
    };
    console.log(JSON.stringify(measured));
    // The pause lasted its duration — from the stamped start, never less; over within a resync tick.
    expect(Date.parse(canaryOf(next)!.stepStartedAt) - pauseStarted).toBeGreaterThanOrEqual(PAUSE_MS);
    expect(pauseEnded - pauseStarted).toBeGreaterThanOrEqual(PAUSE_MS);
    expect(pauseEnded - pauseStarted).toBeLessThanOrEqual(PAUSE_MS + STAMP_MS + RESYNC_MS + SLACK_MS);
    expect(pauseEnded - pauseSeen).toBeGreaterThanOrEqual(PAUSE_MS - STAMP_MS);
    expect(stack.observer.pods(name).map(imageOf)).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.0', 'mysql:8.1', 'mysql:8.1']);
    expect(held.status?.phase).toBe('Paused');
    expect(condition(held, 'Paused')).toMatchObject({ status: 'True', reason: 'CanaryPause' });

    // It waits: nothing moves for 3 s (three resync ticks).
    await new Promise((r) => setTimeout(r, 3000));
    expect(canaryOf(stack.observer.neoset(name)!)?.stepIndex).toBe(3);
    expect(stack.observer.pods(name).map(imageOf)).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.0', 'mysql:8.1', 'mysql:8.1']);
    const waiting = await neo(stack, ['rollout', 'status', name, '--watch=false']);
    const get = await neo(stack, ['get', name]);
    console.log(`${waiting.stdout}${get.stdout}`);
    expect(waiting.stdout).toContain('step 4/5: paused until kubectl neoset rollout promote');
    expect(get.stdout).toMatch(/STEP\n/);
    expect(get.stdout).toMatch(/Paused .* 4\/5\n$/);

    const promoted = await neo(stack, ['rollout', 'promote', name]);
    expect(promoted).toMatchObject({ code: 0, stdout: `neoset.neo.io/${name} promoted: step 5/5\n` });
    const done = await untilStatus(stack, name, 'Completed', (n) => n.status?.phase === 'Completed' && n.status?.updatedReplicas === 5 && n.status?.readyReplicas === 5, 60_000);
    expect(canaryOf(done)?.stepIndex).toBe(5);
    expect(identities(stack.observer.pods(name))).toEqual(before);
    expect(stack.observer.pods(name).map(imageOf)).toEqual(Array(5).fill('mysql:8.1'));
  }, 120_000);

  it('every function instance killed during a timed pause: the pause still ends on time (± one resync)', async () => {
    const name = 'restart';
    const steps = [{ partition: 4 }, { pause: { duration: '8s' } }, { partition: 0 }];
    await applyNeoSet(stack, neosetManifest({ name, replicas: 3, image: 'mysql:8.0', updateStrategy: { canary: { steps } } }));
    await untilStatus(stack, name, '3 ready pods', (n) => n.status?.readyReplicas === 3 && n.status?.phase === 'Idle');
    await setImage(stack, name, 'mysql:8.1');
    // partition 4 of 3 replicas holds every pod: the step is complete at once, the pause starts.
    const paused = await untilStatus(stack, name, 'the timed pause running', (n) => canaryOf(n)?.stepIndex === 1);
    const pauseStarted = Date.parse(canaryOf(paused)!.stepStartedAt);
    // Killed for 4 s of the 8: no instance, no event pump, no resync tick, no in-process timer.
    await stack.restartFunctions(4000);
    await untilStatus(stack, name, 'the pause over after the restart', (n) => (canaryOf(n)?.stepIndex ?? 0) >= 2, 30_000);
    const late = Date.now() - (pauseStarted + 8000);
    console.log(JSON.stringify({ 'pause end observed after its due time (ms)': late }));
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThanOrEqual(STAMP_MS + RESYNC_MS + SLACK_MS);
    await untilStatus(stack, name, 'Completed', (n) => n.status?.phase === 'Completed' && n.status?.updatedReplicas === 3, 60_000);
  }, 90_000);

  it('a -crashloop canary with maxRestarts 2 aborts by itself: Failed/AnalysisFailed, pods back in place, spec untouched; retry starts at step 0', async () => {
    const name = 'crash';
    await applyNeoSet(stack, neosetManifest({ name, replicas: 5, image: 'mysql:8.0', updateStrategy: { canary: { steps: STEPS, analysis: { maxRestarts: 2 } } } }));
    await untilStatus(stack, name, '5 ready pods', (n) => n.status?.readyReplicas === 5 && n.status?.phase === 'Idle');
    const before = identities(stack.observer.pods(name));
    await setImage(stack, name, 'mysql:8.1-crashloop');
    const template = (await stack.client.request<NeoSetObject>('GET', paths.neoset(stack.namespace, name))).spec.template;
    const failed = await untilStatus(stack, name, 'Failed with AnalysisFailed', (n) => n.status?.phase === 'Failed', 60_000);
    const progressing = condition(failed, 'Progressing')!;
    console.log(JSON.stringify(progressing));
    expect(progressing).toMatchObject({ status: 'False', reason: 'AnalysisFailed' });
    // Judged at the next decision after the third restart: a pod mid-update's events are the
    // readiness function's (event-relevance.ts), so the resync tick (1 s) is what sees it.
    expect(progressing.message).toMatch(/pod crash-4: [34] container restarts > maxRestarts 2/);
    const back = await untilStatus(stack, name, 'every pod back on 8.0', (n, pods) => pods.length === 5 && pods.every((p) => settledOn(p, n.status?.currentRevision)) && n.status?.readyReplicas === 5, 60_000);
    expect(back.status?.phase).toBe('Failed');
    expect(stack.observer.pods(name).map(imageOf)).toEqual(Array(5).fill('mysql:8.0'));
    expect(identities(stack.observer.pods(name))).toEqual(before);
    expect((await stack.client.request<NeoSetObject>('GET', paths.neoset(stack.namespace, name))).spec.template).toEqual(template);
    const status = await neo(stack, ['rollout', 'status', name, '--watch=false']);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain('rollout failed: AnalysisFailed');

    const retried = await neo(stack, ['rollout', 'retry', name]);
    expect(retried).toMatchObject({ code: 0, stdout: `neoset.neo.io/${name} retried: the canary steps start again at step 1\n` });
    const again = await untilStatus(stack, name, 'step 0 again, pod 4 patched again', (n, pods) => canaryOf(n)?.stepIndex === 0 && !canaryOf(n)?.abort && imageOf(pods[4]) === 'mysql:8.1-crashloop', 30_000);
    expect(again.status?.phase).not.toBe('Failed');
    await untilStatus(stack, name, 'aborted again', (n) => n.status?.phase === 'Failed' && canaryOf(n)?.abort?.reason === 'AnalysisFailed', 60_000);
  }, 180_000);

  it('no invariant was violated', () => {
    expect(stack.observer.violations).toEqual([]);
    console.log(`invariant checks: ${stack.observer.checks}`);
  });
});

describe('canary Prometheus analysis, judged by a real Prometheus', () => {
  let stack: Stack;
  let prometheus: Prometheus;
  let metrics: ServerType;
  // A port below the ephemeral range (net.ipv4.ip_local_port_range starts at 32768), so no bind(0) of
  // another test or process gets it and it stays refused — and not on fetch's list of blocked ports
  // (1 is), which fails before connecting. A free port taken at the start did not stay refused: once
  // (CI, two lanes side by side) something was given it — a Prometheus, by the answer — and the
  // "unreachable" analysis passed against it (promdown at step 2).
  const closedPort = 2;
  beforeAll(async () => {
    // The reconcile function's /metrics (per-instance counters of this process, where the stack's
    // instances run, and the state gauges read from the API), served on a port Prometheus scrapes.
    const [port] = await freePorts(1);
    // Its METRICS_PORT app: the per-NeoSet series are served there only (SPEC §2.5).
    const app = createMetricsApp(createKubeClient(kubeConfig()));
    metrics = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' });
    prometheus = await startPrometheus({ scrapeIntervalMs: 1000, targets: [{ job: 'neoset-reconcile', url: `http://127.0.0.1:${port}/metrics` }] });
    await prometheus.targetsUp();
    // Prometheus first: the install names the addresses analyses may query (SPEC §2.3), this one and
    // the closed port the unreachable case uses.
    stack = await startStack({ prefix: 'canary-prom', resyncMs: RESYNC_MS, analysisAddresses: analysisAddressesFromEnv({ NEOSET_ANALYSIS_ADDRESSES: `${prometheus.url},http://127.0.0.1:${closedPort}` }) });
  }, 120_000);
  afterAll(async () => {
    await prometheus?.stop();
    metrics?.close();
    await stack?.stop();
  });

  // 3 pods: pod 2 first, then the rest; judged at the end of each step.
  const analysis = (address: string, query: string, successCondition: string, steps: object[] = [{ partition: 2 }, { partition: 0 }]) => ({
    canary: { steps, analysis: { prometheus: { address, query, successCondition } } },
  });
  /** In-place updates done for this NeoSet, as scraped (0 before the first). */
  const updates = (name: string) => `sum(neoset_inplace_update_duration_seconds_count{neoset="${name}"}) or vector(0)`;

  it('a query that holds: each step passes, the rollout completes, the result is in status', async () => {
    const name = 'prompass';
    await applyNeoSet(stack, neosetManifest({ name, replicas: 3, image: 'mysql:8.0', updateStrategy: analysis(prometheus.url, updates(name), 'result < 100') }));
    await untilStatus(stack, name, '3 ready pods', (n) => n.status?.readyReplicas === 3 && n.status?.phase === 'Idle');
    await setImage(stack, name, 'mysql:8.1');
    const done = await untilStatus(stack, name, 'Completed', (n) => n.status?.phase === 'Completed' && n.status?.updatedReplicas === 3, 60_000);
    console.log(JSON.stringify(done.status?.canary));
    expect(canaryOf(done)?.analysis).toMatchObject({ step: 1, result: 'Successful' });
  }, 90_000);

  it('a query over its threshold aborts, with the measured value; the pods return', async () => {
    const name = 'promfail';
    // The canary is watched for 3 s before it is judged (three scrapes: pod 2's update is counted by then).
    const steps = [{ partition: 2 }, { pause: { duration: '3s' } }, { partition: 0 }];
    await applyNeoSet(stack, neosetManifest({ name, replicas: 3, image: 'mysql:8.0', updateStrategy: analysis(prometheus.url, updates(name), 'result < 1', steps) }));
    await untilStatus(stack, name, '3 ready pods', (n) => n.status?.readyReplicas === 3 && n.status?.phase === 'Idle');
    const before = identities(stack.observer.pods(name));
    await setImage(stack, name, 'mysql:8.1');
    const failed = await untilStatus(stack, name, 'Failed with AnalysisFailed', (n) => n.status?.phase === 'Failed', 60_000);
    const progressing = condition(failed, 'Progressing')!;
    console.log(JSON.stringify(progressing));
    expect(progressing.reason).toBe('AnalysisFailed');
    // Step 1 (pod 2 updated) fails when a scrape saw pod 2's update before it was judged, and passes
    // (with 0) when none had yet; then the pause's end, step 2, sees it. Either way the measured 1.
    expect(progressing.message).toMatch(/^.*step [12]\/3: .* = 1: successCondition "result < 1" does not hold$/);
    expect(progressing.message).toContain(updates(name));
    await untilStatus(stack, name, 'every pod back on 8.0', (n, pods) => pods.length === 3 && pods.every((p) => settledOn(p, n.status?.currentRevision)), 60_000);
    expect(identities(stack.observer.pods(name))).toEqual(before);
  }, 90_000);

  it('an unreachable Prometheus holds the rollout with a condition naming the address — it never passes', async () => {
    const name = 'promdown';
    const address = `http://127.0.0.1:${closedPort}`;
    await applyNeoSet(stack, neosetManifest({ name, replicas: 3, image: 'mysql:8.0', updateStrategy: analysis(address, updates(name), 'result < 100') }));
    await untilStatus(stack, name, '3 ready pods', (n) => n.status?.readyReplicas === 3 && n.status?.phase === 'Idle');
    await setImage(stack, name, 'mysql:8.1');
    const held = await untilStatus(stack, name, 'Paused: analysis inconclusive', (n) => condition(n, 'Paused')?.reason === 'AnalysisInconclusive', 60_000);
    console.log(JSON.stringify(condition(held, 'Paused')));
    expect(held.status?.phase).toBe('Paused');
    expect(condition(held, 'Paused')!.message).toContain(`Prometheus at ${address}: unreachable (ECONNREFUSED)`);
    await new Promise((r) => setTimeout(r, 5000));
    const later = stack.observer.neoset(name)!;
    expect(canaryOf(later)).toMatchObject({ stepIndex: 0, analysis: { result: 'Inconclusive' } });
    expect(stack.observer.pods(name).map(imageOf)).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.1']);
  }, 90_000);

  it('the Grafana canary panels answer: the step of each NeoSet, analyses by result', async () => {
    const dashboard = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../knative/grafana-dashboard.json'), 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr }))).filter((e) => /neoset_(canary_step|analysis_total)/.test(e.expr));
    expect(exprs.map((e) => e.panel)).toEqual(['Canary step', 'Canary analyses, by result']);
    const instantiate = (expr: string) => expr.replaceAll('$__rate_interval', '5m').replaceAll('$namespace', stack.namespace).replaceAll('$neoset', '.*');
    // The state gauges are read from the API at scrape time, and a scrape that takes longer than the
    // 1 s interval is dropped: on a loaded machine the latest sample Prometheus holds can be one from
    // before promdown's image change (stepIndex 2: no rollout, no steps to run). Asked again until a
    // scrape after the rollouts answers (ci17, ci21: promdown '2', with its status at stepIndex 0).
    const wanted = { prompass: '2', promdown: '0' };
    const stepOf = async () => Object.fromEntries((await prometheus.query(instantiate(exprs[0].expr))).map((s) => [s.metric.neoset, s.value[1]]));
    const asked = Date.now();
    let steps = await stepOf();
    for (const deadline = Date.now() + 30_000; Object.entries(wanted).some(([k, v]) => steps[k] !== v) && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 500));
      steps = await stepOf();
    }
    const byResult = await prometheus.query(instantiate(exprs[1].expr));
    console.log(JSON.stringify({ steps, answeredAfterMs: Date.now() - asked, analyses: byResult.map((s) => [s.metric.result, s.value[1]]) }));
    expect(steps).toMatchObject(wanted);
    expect(byResult.map((s) => s.metric.result).sort()).toEqual(['Failed', 'Inconclusive', 'Successful']);
  }, 60_000);

  it('no invariant was violated', () => {
    expect(stack.observer.violations).toEqual([]);
  });
});
