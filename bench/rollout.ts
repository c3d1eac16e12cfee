// Rollout time, step latency and API cost of NeoSet against the physical limit and against the
// native StatefulSet, on the dev stack (issue 10). One stack for the whole run — the control plane,
// the simulated kubelet, the three functions as child processes under their ServiceAccounts, the
// admission webhooks and the event bridge, exactly as `npm run dev` (dev/stack.ts) — plus a second
// kube-controller-manager running only statefulset-controller against the same API server. Then, for
// each N and run, in fresh namespaces:
//   physical limit  BARE pods without any controller have their image patched at once; the median
//                   time from the patch to the pod Ready on the new image, × ceil(N/k)
//   NeoSet          N pods, Parallel, maxUnavailable k, settled; image patched → status Completed
//                   and every pod Ready on the new image (seen by a pod watch)
//   StatefulSet     the same pod template, Parallel, rollingUpdate.maxUnavailable k: image patched →
//                   every pod Ready on the new image and currentRevision == updateRevision
//   step latency    a pod Ready on the new image → the next pod's update written (NeoSet: its in-place
//                   state annotation; StatefulSet: its deletion), bench/lib/rollout-watch.ts
//   API requests    per pod updated, from the API server's own metrics: the NeoSet functions' and the
//                   statefulset-controller's requests (bench/lib/api-metrics.ts tells them apart by
//                   FlowSchema), and every client's (apiserver_request_total, kubelet included)
//
//   npm run bench:rollout                     N = 30 and 300, k = 5, 3 runs each
//   BENCH_N=30 BENCH_K=5 BENCH_RUNS=1 npm run bench:rollout
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKubeClient, type KubeClient } from '../shared/k8s/client.ts';
import { startControllerManager } from '../dev/cluster/controller-manager.ts';
import { resilientWatch } from '../shared/k8s/watch.ts';
import { startKubelet, type Kubelet } from '../dev/kubelet/kubelet.ts';
import { startDevStack, type DevStack } from '../dev/stack.ts';
import { allRequests, installFlowSchemas, NEOSET_FUNCTIONS, requestsOf, scrape, STATEFULSET_CONTROLLER, type Requests } from './lib/api-metrics.ts';
import { stepLatency, watchRollout, type Writer } from './lib/rollout-watch.ts';
import { fixed, median, table } from './lib/stats.ts';
import { APP_IMAGE, barePod, createNamespace, deleteNamespace, imagePatch, neoset, neosetPath, podsPath, readyPods, statefulSet, statefulSetPath, until } from './lib/workloads.ts';

const SIZES = (process.env.BENCH_N ?? '30,300').split(',').map(Number);
const K = Number(process.env.BENCH_K ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** Bare pods timed for the physical limit (each run). */
const BARE = Number(process.env.BENCH_BARE ?? 5);
const RESYNC_MS = 3000;
/** A simulated node hands out pod IPs from one /24: more nodes for more pods (they race to bind, as schedulers' binds would). */
const PODS_PER_NODE = 200;

const say = (line: string) => process.stderr.write(`${line}\n`);
const seconds = (ms: number) => ms / 1000;

interface Side {
  wallMs: number;
  /** Requests reconcile and readiness counted themselves (neoset_api_requests_total), NeoSet side only. */
  selfCounted?: number;
  step: { p50: number; p90: number };
  own: Requests;
  all: Requests;
}

interface Row {
  n: number;
  run: number;
  restartMs: number;
  limitMs: number;
  neoset: Side;
  native: Side;
}

/** A watch on one object; resolves with the time `done` first holds for it. */
function watchObject(stack: DevStack, path: string, name: string, done: (obj: any) => boolean): { ready: Promise<void>; done: Promise<number>; stop: () => void } {
  let resolve: (t: number) => void = () => {};
  const finished = new Promise<number>((r) => (resolve = r));
  const w = resilientWatch({
    kubeConfig: stack.cluster.kubeConfig(),
    path,
    onEvent: (type, obj) => {
      if (type !== 'DELETED' && obj.metadata.name === name && done(obj)) resolve(performance.now());
    },
  });
  return { ready: w.ready, done: finished, stop: () => w.stop() };
}

/** API requests reconcile and readiness counted themselves so far: a cross-check of the FlowSchema count. */
async function selfCounted(stack: DevStack): Promise<Map<string, number>> {
  const series = new Map<string, number>();
  for (const [name, fn] of [['reconcile', stack.functions.reconcile], ['readiness', stack.functions.readiness]] as const) {
    const text = await (await fetch(`${fn.url}/metrics`)).text();
    for (const line of text.split('\n')) {
      if (line.startsWith('neoset_api_requests_total{')) series.set(`${name} ${line.slice(0, line.lastIndexOf(' '))}`, Number(line.slice(line.lastIndexOf(' ') + 1)));
    }
  }
  return series;
}

/** The reconcile function's time by phase and its events' coalescing wait (sums and counts). */
async function phaseTimes(stack: DevStack): Promise<Map<string, number>> {
  const series = new Map<string, number>();
  const text = await (await fetch(`${stack.functions.reconcile.url}/metrics`)).text();
  for (const line of text.split('\n')) {
    if (/^neoset_(reconcile_phase|event_wait)_seconds_(sum|count)/.test(line)) series.set(line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return series;
}

/** Mean time per phase over the rollout (BENCH_BREAKDOWN=1 prints it). */
function phaseLines(before: Map<string, number>, after: Map<string, number>): string[] {
  const delta = (k: string) => (after.get(k) ?? 0) - (before.get(k) ?? 0);
  const line = (what: string, sum: string, count: string) => {
    const n = delta(count);
    return `  ${what}: ${n} × mean ${n > 0 ? fixed((delta(sum) / n) * 1000, 1) : '-'} ms`;
  };
  return [
    ...['read', 'decide', 'apply'].map((p) => line(`reconcile ${p}`, `neoset_reconcile_phase_seconds_sum{phase="${p}"}`, `neoset_reconcile_phase_seconds_count{phase="${p}"}`)),
    line('event wait for its run', 'neoset_event_wait_seconds_sum', 'neoset_event_wait_seconds_count'),
  ];
}

/** Per function, verb and resource: what the counters grew by (BENCH_BREAKDOWN=1 prints it). */
function countedDelta(before: Map<string, number>, after: Map<string, number>): { sum: number; lines: string[] } {
  let sum = 0;
  const lines: string[] = [];
  for (const [series, value] of after) {
    const delta = value - (before.get(series) ?? 0);
    sum += delta;
    if (delta > 0) lines.push(`  ${delta}\t${series.replace('neoset_api_requests_total', '')}`);
  }
  return { sum, lines: lines.sort((a, b) => Number(b.split('\t')[0]) - Number(a.split('\t')[0])) };
}

async function physicalLimit(stack: DevStack, admin: KubeClient, n: number, run: number): Promise<number> {
  const ns = `bench-bare-${n}-${run}`;
  await createNamespace(admin, ns);
  try {
    const names = Array.from({ length: BARE }, (_, i) => `bare-${i}`);
    await Promise.all(names.map((name) => admin.request('POST', podsPath(ns), { body: barePod(name, APP_IMAGE(0)) })));
    await until(`${BARE} bare pods Ready`, 120_000, async () => (await readyPods(admin, ns, 'app=bare')) === BARE);
    const watch = watchRollout(stack.cluster.kubeConfig(), ns, 'statefulset');
    await watch.ready;
    watch.begin(APP_IMAGE(1));
    const sent = new Map<string, number>();
    await Promise.all(
      names.map((name) => {
        sent.set(name, performance.now());
        return admin.request('PATCH', podsPath(ns, name), { patch: 'json', body: imagePatch('/spec/containers/0/image', APP_IMAGE(1)) });
      }),
    );
    await until('bare pods Ready on the new image', 60_000, async () => watch.readyCount() === BARE);
    watch.stop();
    return median(names.map((name) => watch.readyAt(name)! - sent.get(name)!));
  } finally {
    await deleteNamespace(admin, ns);
  }
}

interface Workload {
  writer: Writer;
  ns: string;
  name: string;
  path: (ns: string, name?: string) => string;
  manifest: Record<string, unknown>;
  /** Settled after creation. */
  settled: (obj: any, n: number) => boolean;
  /** Rolled out to generation `gen`. */
  completed: (obj: any, n: number, gen: number) => boolean;
  own: typeof NEOSET_FUNCTIONS;
}

async function rollout(stack: DevStack, admin: KubeClient, w: Workload, n: number): Promise<Side> {
  await createNamespace(admin, w.ns);
  try {
    const created = await admin.request<{ metadata: { generation: number } }>('POST', w.path(w.ns), { body: w.manifest });
    await until(`${w.writer} ${w.ns}/${w.name}: ${n} pods Ready`, 600_000, async () => {
      const obj = await admin.request<any>('GET', w.path(w.ns, w.name));
      return w.settled(obj, n) && (await readyPods(admin, w.ns, `app=${w.name}`)) === n;
    });
    const pods = watchRollout(stack.cluster.kubeConfig(), w.ns, w.writer);
    const gen = created.metadata.generation + 1;
    const object = watchObject(stack, w.path(w.ns), w.name, (obj) => w.completed(obj, n, gen));
    await Promise.all([pods.ready, object.ready]);
    await stack.pump.idle();
    const before = await scrape(stack.cluster.kubeConfig());
    const selfBefore = await selfCounted(stack);
    const phasesBefore = await phaseTimes(stack);
    pods.begin(APP_IMAGE(1));
    const started = performance.now();
    await admin.request('PATCH', w.path(w.ns, w.name), { patch: 'json', body: imagePatch('/spec/template/spec/containers/0/image', APP_IMAGE(1)) });
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${w.writer} rollout of ${n} pods not done in 600 s`)), 600_000).unref());
    const [lastReady, completed] = await Promise.race([Promise.all([pods.allReady(n), object.done]), timeout]);
    const wallMs = Math.max(lastReady, completed) - started;
    // Requests that the rollout set off but that land after it (the last events' reconciles) count too.
    await Promise.race([stack.pump.idle(), new Promise((r) => setTimeout(r, 5000))]);
    await new Promise((r) => setTimeout(r, 500));
    const after = await scrape(stack.cluster.kubeConfig());
    const selfAfter = await selfCounted(stack);
    const phasesAfter = await phaseTimes(stack);
    pods.stop();
    object.stop();
    const step = stepLatency(pods.writes(), pods.readies(), K);
    const counted = countedDelta(selfBefore, selfAfter);
    if (process.env.BENCH_BREAKDOWN && w.writer === 'neoset') {
      say(`requests reconcile and readiness counted, by verb and resource:\n${counted.lines.join('\n')}`);
      say(`reconcile's time:\n${phaseLines(phasesBefore, phasesAfter).join('\n')}`);
    }
    return { wallMs, step, own: requestsOf(w.own, before, after), all: allRequests(before, after), selfCounted: w.writer === 'neoset' ? counted.sum : undefined };
  } finally {
    await deleteNamespace(admin, w.ns);
  }
}

const neosetWorkload = (n: number, run: number): Workload => ({
  writer: 'neoset',
  ns: `bench-neoset-${n}-${run}`,
  name: 'app',
  path: neosetPath,
  manifest: neoset('app', n, K, APP_IMAGE(0)),
  settled: (o, n) => o.status?.observedGeneration === o.metadata.generation && o.status?.readyReplicas === n,
  completed: (o, n, gen) => (o.status?.observedGeneration ?? 0) >= gen && o.status?.phase === 'Completed' && o.status?.updatedReadyReplicas === n,
  own: NEOSET_FUNCTIONS,
});

const statefulSetWorkload = (n: number, run: number): Workload => ({
  writer: 'statefulset',
  ns: `bench-sts-${n}-${run}`,
  name: 'app',
  path: statefulSetPath,
  manifest: statefulSet('app', n, K, APP_IMAGE(0)),
  settled: (o, n) => o.status?.observedGeneration === o.metadata.generation && o.status?.readyReplicas === n,
  completed: (o, n, gen) =>
    (o.status?.observedGeneration ?? 0) >= gen && o.status?.updatedReplicas === n && o.status?.readyReplicas === n && o.status?.currentRevision === o.status?.updateRevision,
  own: STATEFULSET_CONTROLLER,
});

const perPod = (r: Requests, n: number) => `${fixed(r.reads / n, 1)}/${fixed(r.writes / n, 1)}`;
const total = (r: Requests, n: number) => fixed((r.reads + r.writes) / n, 1);

function rowCells(r: Row): string[] {
  const { neoset: a, native: b } = r;
  return [
    `${r.n}`,
    `${r.run}`,
    fixed(seconds(r.restartMs), 2),
    fixed(seconds(r.limitMs), 2),
    fixed(seconds(a.wallMs), 2),
    fixed(a.wallMs / r.limitMs, 2),
    fixed(seconds(b.wallMs), 2),
    fixed(a.wallMs / b.wallMs, 2),
    `${fixed(a.step.p50, 0)}/${fixed(a.step.p90, 0)}`,
    `${fixed(b.step.p50, 0)}/${fixed(b.step.p90, 0)}`,
    `${total(a.own, r.n)} (${perPod(a.own, r.n)})`,
    `${total(b.own, r.n)} (${perPod(b.own, r.n)})`,
    total(a.all, r.n),
    total(b.all, r.n),
  ];
}

function medianRow(rows: Row[]): string[] {
  const m = (f: (r: Row) => number) => median(rows.map(f));
  const req = (f: (r: Row) => Requests): Requests => ({ reads: m((r) => f(r).reads), writes: m((r) => f(r).writes) });
  const side = (f: (r: Row) => Side): Side => ({ wallMs: m((r) => f(r).wallMs), step: { p50: m((r) => f(r).step.p50), p90: m((r) => f(r).step.p90) }, own: req((r) => f(r).own), all: req((r) => f(r).all) });
  const cells = rowCells({ n: rows[0].n, run: 0, restartMs: m((r) => r.restartMs), limitMs: m((r) => r.limitMs), neoset: side((r) => r.neoset), native: side((r) => r.native) });
  // Ratios are the medians of each run's own ratio (measured side by side), not ratios of medians.
  cells[1] = 'median';
  cells[5] = fixed(m((r) => r.neoset.wallMs / r.limitMs), 2);
  cells[7] = fixed(m((r) => r.neoset.wallMs / r.native.wallMs), 2);
  // Request totals are the median of each run's total (reads and writes are medians of their own).
  const sum = (x: Requests) => x.reads + x.writes;
  const totalOf = (f: (r: Row) => Requests) => fixed(m((r) => sum(f(r))) / rows[0].n, 1);
  cells[10] = `${totalOf((r) => r.neoset.own)} (${perPod(req((r) => r.neoset.own), rows[0].n)})`;
  cells[11] = `${totalOf((r) => r.native.own)} (${perPod(req((r) => r.native.own), rows[0].n)})`;
  cells[12] = totalOf((r) => r.neoset.all);
  cells[13] = totalOf((r) => r.native.all);
  return cells;
}

const HEADER = [
  'N',
  'run',
  'bare restart s',
  'limit s',
  'NeoSet s',
  '/limit',
  'StatefulSet s',
  'Neo/STS',
  'Neo step p50/p90 ms',
  'STS step p50/p90 ms',
  'Neo fn req/pod (R/W)',
  'STS ctrl req/pod (R/W)',
  'Neo all req/pod',
  'STS all req/pod',
];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'neoset-bench-rollout-'));
  say(`bench/rollout: N = ${SIZES.join(', ')}, k = ${K}, ${RUNS} run(s) each; dev stack in ${dir}`);
  const stack = await startDevStack({ dir, ports: { reconcile: 0, readiness: 0, admission: 0 }, resyncMs: RESYNC_MS, log: (line) => (process.env.BENCH_VERBOSE ? say(line) : undefined) });
  const admin = createKubeClient(stack.cluster.kubeConfig());
  const kcm = await startControllerManager(stack.cluster.local!.controlPlane, { name: 'kcm-statefulset', controllers: ['statefulset-controller'] });
  const extraNodes = Math.ceil(Math.max(...SIZES) / PODS_PER_NODE) - 1;
  const kubelets: Kubelet[] = [];
  for (let i = 1; i <= extraNodes; i++) kubelets.push(await startKubelet({ kubeConfig: stack.cluster.kubeConfig(), nodeName: `bench-node-${i}` }));
  const rows: Row[] = [];
  const version = stack.cluster.version;
  try {
    await installFlowSchemas(admin, [NEOSET_FUNCTIONS, STATEFULSET_CONTROLLER]);
    say(`stack ready: kube-apiserver ${stack.cluster.version}, statefulset-controller in its own kube-controller-manager (pid ${kcm.pid}), ${1 + extraNodes} simulated node(s)`);
    for (const n of SIZES) {
      for (let run = 1; run <= RUNS; run++) {
        try {
          const restartMs = await physicalLimit(stack, admin, n, run);
          const limitMs = Math.ceil(n / K) * restartMs;
          say(`N=${n} run ${run}: bare pod restart → Ready ${fixed(restartMs, 0)} ms, limit ${fixed(seconds(limitMs), 2)} s`);
          const neosetSide = await rollout(stack, admin, neosetWorkload(n, run), n);
          say(
            `N=${n} run ${run}: NeoSet ${fixed(seconds(neosetSide.wallMs), 2)} s; API server counted ${neosetSide.own.reads + neosetSide.own.writes} requests of the functions, ` +
              `reconcile and readiness counted ${neosetSide.selfCounted} themselves (admission's are only in the first figure)`,
          );
          const nativeSide = await rollout(stack, admin, statefulSetWorkload(n, run), n);
          say(`N=${n} run ${run}: StatefulSet ${fixed(seconds(nativeSide.wallMs), 2)} s`);
          const row = { n, run, restartMs, limitMs, neoset: neosetSide, native: nativeSide };
          rows.push(row);
          // Each row as soon as it is measured: a later run that fails loses nothing of this one.
          say(`N=${n} run ${run}: ${rowCells(row).map((cell, i) => `${HEADER[i]} ${cell}`).join(' | ')}`);
        } catch (err) {
          say(`N=${n} run ${run} FAILED, left out of the table: ${(err as Error).message}`);
        }
      }
    }
  } finally {
    for (const kubelet of kubelets) await kubelet.stop();
    await kcm.stop();
    await stack.stop();
    if (process.env.BENCH_KEEP) say(`kept ${dir} (the functions' JSON logs)`);
    else rmSync(dir, { recursive: true, force: true });
  }
  const body = SIZES.flatMap((n) => {
    const of = rows.filter((r) => r.n === n);
    return of.length > 1 ? [...of.map(rowCells), medianRow(of)] : of.map(rowCells);
  });
  console.log(`rollout, k = maxUnavailable ${K}, Parallel, image change; dev stack (kube-apiserver ${version}, simulated kubelet, bridge resync ${RESYNC_MS} ms)`);
  console.log(table(HEADER, body));
  console.log(
    [
      'limit = ceil(N/k) × bare restart (median of ' + BARE + ' bare pods: image patch → Ready on the new image, no controller).',
      'step = a pod Ready on the new image → the next pod\'s update written (NeoSet: in-place state annotation; StatefulSet: pod deletion).',
      'fn req/pod = requests of the NeoSet functions\' ServiceAccounts (reconcile, readiness, admission), ctrl req/pod = statefulset-controller\'s,',
      '  counted by the API server per FlowSchema (apiserver_flowcontrol_dispatched_requests_total), reads (get/list/watch) / writes;',
      'all req/pod = apiserver_request_total of every client over the rollout (kubelet, bridge and benchmark watches included).',
    ].join('\n'),
  );
}

await main();
