// Rollout time, step latency, API requests and CPU of NeoSet against the physical limit and against
// the native StatefulSet, on the dev stack (issues 10, 24). One stack for the whole run — the control
// plane, the three functions as child processes under their ServiceAccounts, the admission webhooks
// and the event bridge, as `npm run dev` (dev/stack.ts) — plus a second kube-controller-manager running
// only statefulset-controller against the same API server, and the simulated kubelet(s) as child
// processes of their own (dev/kubelet/cli.ts), so that every party's CPU can be read from /proc. Then,
// for each N and run, in fresh namespaces:
//   physical limit  bare pods without any controller: k of them have their image patched at once
//                   (median patch → Ready on the new image, × ceil(N/k): "limit k"), and then, on the
//                   idle stack, BENCH_BARE_ONE one at a time (median × ceil(N/k): "limit 1", what a
//                   controller that wasted no time between steps could reach)
//   NeoSet          N pods, Parallel, maxUnavailable k, settled; image patched → status Completed
//                   and every pod Ready on the new image (seen by a pod watch)
//   StatefulSet     the same pod template, Parallel, rollingUpdate.maxUnavailable k: image patched →
//                   every pod Ready on the new image and currentRevision == updateRevision
//   step latency    a pod Ready on the new image → the next pod's update written (NeoSet: its in-place
//                   state annotation; StatefulSet: its deletion), bench/lib/rollout-watch.ts
//   API requests    per pod updated, from the API server's own metrics: the NeoSet functions' and the
//                   statefulset-controller's requests (bench/lib/api-metrics.ts tells them apart by
//                   FlowSchema), and every client's (apiserver_request_total, kubelet included)
//   CPU per pod     utime+stime from /proc/<pid>/stat, sampled before and after each side's rollout
//                   (bench/lib/cpu.ts), over N: the functions (together and each) and statefulset-controller's
//                   kube-controller-manager (native), kube-apiserver, etcd, the kubelets, and this
//                   process (the event bridge — the Broker's part — and the benchmark's watches)
//   step breakdown  NeoSet, p50 per segment: pod Ready → readiness's finish → reconcile's event →
//                   its run → reads → decision → claim → drain (bench/lib/step-breakdown.ts, from the
//                   reconcile function's log)
// Then the real Knative Eventing (issue 21; issue 24 point 5), on the stack `npm run dev` runs by
// default (bench/lib/knative-side.ts: the functions as process-mode pods fed by the real
// ApiServerSources → Broker → Triggers, the same simulated kubelets in processes of their own): for
// each N and run the physical limit and the same NeoSet rollout with the same watches, and a table
// "bridge vs real Broker" — what the Broker adds per rollout and per step, requests and CPU per pod,
// Knative's own CPU per pod. It needs root (network namespaces) and Knative's build (built on a first
// run, as `npm run dev` does); when it cannot run, one line says why. It claims the machine's service
// network: on a shared machine run the benchmark under `flock /tmp/neoset-service-network.lock`.
//
//   npm run bench:rollout                     N = 30 and 300, k = 5, 3 runs each, bridge then Broker
//   BENCH_N=30 BENCH_K=5 BENCH_RUNS=1 npm run bench:rollout
//   BENCH_KNATIVE=0 npm run bench:rollout     the bridge only
//   BENCH_KNATIVE=only npm run bench:rollout  the real Knative only (no bridge side, no comparison)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKubeClient, type KubeClient } from '../shared/k8s/client.ts';
import { epochMs } from '../shared/k8s/run-timing.ts';
import { startControlPlane } from '../dev/cluster/control-plane.ts';
import { startControllerManager } from '../dev/cluster/controller-manager.ts';
import type { ManagedProcess } from '../dev/cluster/processes.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { resilientWatch } from '../shared/k8s/watch.ts';
import { startDevStack, type DevStack } from '../dev/stack.ts';
import { allRequests, installFlowSchemas, NEOSET_FUNCTIONS, requestsOf, scrape, STATEFULSET_CONTROLLER, type Requests } from './lib/api-metrics.ts';
import { cpuDelta, sampleCpu } from './lib/cpu.ts';
import { benchCpuGroups, startKubelets } from './lib/fleet-stack.ts';
import { KNATIVE_CPU_PARTIES, knativeUnavailable, startKnativeSide, type KnativeSide } from './lib/knative-side.ts';
import { benchResyncMs, bridgeRolloutStack, countedDelta, functionMetrics, selfCounted, type RolloutStack } from './lib/rollout-stack.ts';
import { stepLatency, watchRollout, type Writer } from './lib/rollout-watch.ts';
import { runsFromLog, SEGMENTS, stepBreakdown } from './lib/step-breakdown.ts';
import { fixed, median, table } from './lib/stats.ts';
import { APP_IMAGE, barePod, createNamespace, deleteNamespace, imagePatch, neoset, neosetPath, podsPath, readyPods, statefulSet, statefulSetPath, until } from './lib/workloads.ts';

const SIZES = (process.env.BENCH_N ?? '30,300').split(',').map(Number);
const K = Number(process.env.BENCH_K ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** BENCH_KNATIVE=0: the bridge only; =only: the real Knative only. */
const BRIDGE = process.env.BENCH_KNATIVE !== 'only';
/** Bare pods patched one at a time on the idle stack for the one-at-a-time limit (each run). */
const BARE_ONE = Number(process.env.BENCH_BARE_ONE ?? 6);
const RESYNC_MS = benchResyncMs();
/** A simulated node hands out pod IPs from one /24: more nodes for more pods (they race to bind, as schedulers' binds would). */
const PODS_PER_NODE = 200;

const say = (line: string) => process.stderr.write(`${line}\n`);
const seconds = (ms: number) => ms / 1000;

/** CPU groups, in the order the CPU table shows them. */
const CPU_PARTIES = ['functions', 'reconcile', 'readiness', 'admission', 'statefulset-controller', 'kube-apiserver', 'etcd', 'kubelet', 'bridge+bench'] as const;

interface Side {
  wallMs: number;
  /** CPU ms per pod updated, by party. */
  cpu: Map<string, number>;
  /** NeoSet: p50 ms per segment of a step. */
  breakdown?: { p50: Record<string, number>; total: number; steps: number; reads: Record<string, number> };
  /** Requests reconcile and readiness counted themselves (neoset_api_requests_total), NeoSet side only. */
  selfCounted?: number;
  step: { p50: number; p90: number };
  own: Requests;
  all: Requests;
}

interface Limits {
  n: number;
  run: number;
  /** k bare pods patched at once: median patch → Ready; and one at a time, idle. */
  restartMs: number;
  restartOneMs: number;
  limitMs: number;
  limitOneMs: number;
}

interface Row extends Limits {
  neoset: Side;
  native: Side;
}

/** A run on the real Knative: the same limits and NeoSet rollout, no StatefulSet side. */
interface BrokerRow extends Limits {
  neoset: Side;
}

/** A watch on one object; resolves with the time `done` first holds for it. */
function watchObject(kubeConfig: KubeConfig, path: string, name: string, done: (obj: any) => boolean): { ready: Promise<void>; done: Promise<number>; stop: () => void } {
  let resolve: (t: number) => void = () => {};
  const finished = new Promise<number>((r) => (resolve = r));
  const w = resilientWatch({
    kubeConfig,
    path,
    onEvent: (type, obj) => {
      if (type !== 'DELETED' && obj.metadata.name === name && done(obj)) resolve(epochMs());
    },
  });
  return { ready: w.ready, done: finished, stop: () => w.stop() };
}

/** API requests reconcile and readiness counted themselves so far: a cross-check of the FlowSchema count. */
/** The reconcile function's time by phase and its events' coalescing wait (sums and counts). */
const phaseTimes = (s: RolloutStack) => functionMetrics(s.functionURLs.reconcile, /^neoset_(reconcile_phase|event_wait)_seconds_(sum|count)/);

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

/** Median patch → Ready on the new image of bare pods (no controller): `names` at once, then `one` of them one at a time. */
async function physicalLimit({ kubeConfig, admin }: RolloutStack, n: number, run: number): Promise<{ atOnceMs: number; oneMs: number }> {
  const ns = `bench-bare-${n}-${run}`;
  await createNamespace(admin, ns);
  try {
    const count = Math.max(K, BARE_ONE);
    const names = Array.from({ length: count }, (_, i) => `bare-${i}`);
    await Promise.all(names.map((name) => admin.request('POST', podsPath(ns), { body: barePod(name, APP_IMAGE(0)) })));
    await until(`${count} bare pods Ready`, 120_000, async () => (await readyPods(admin, ns, 'app=bare')) === count);
    const patchAndWatch = async (batch: string[], image: string): Promise<number[]> => {
      const watch = watchRollout(kubeConfig, ns, 'statefulset');
      await watch.ready;
      watch.begin(image);
      const sent = new Map<string, number>();
      await Promise.all(
        batch.map((name) => {
          sent.set(name, epochMs());
          return admin.request('PATCH', podsPath(ns, name), { patch: 'json', body: imagePatch('/spec/containers/0/image', image) });
        }),
      );
      await until(`bare pods Ready on ${image}`, 60_000, async () => watch.readyCount() === batch.length);
      watch.stop();
      return batch.map((name) => watch.readyAt(name)! - sent.get(name)!);
    };
    const atOnce = await patchAndWatch(names.slice(0, K), APP_IMAGE(1));
    const one: number[] = [];
    for (const name of names.slice(0, BARE_ONE)) one.push(...(await patchAndWatch([name], APP_IMAGE(2))));
    return { atOnceMs: median(atOnce), oneMs: median(one) };
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

async function rollout(s: RolloutStack, w: Workload, n: number): Promise<Side> {
  const { admin, kubeConfig } = s;
  await createNamespace(admin, w.ns);
  try {
    const created = await admin.request<{ metadata: { generation: number } }>('POST', w.path(w.ns), { body: w.manifest });
    await until(`${w.writer} ${w.ns}/${w.name}: ${n} pods Ready`, 600_000, async () => {
      const obj = await admin.request<any>('GET', w.path(w.ns, w.name));
      return w.settled(obj, n) && (await readyPods(admin, w.ns, `app=${w.name}`)) === n;
    });
    const pods = watchRollout(kubeConfig, w.ns, w.writer);
    const gen = created.metadata.generation + 1;
    const object = watchObject(kubeConfig, w.path(w.ns), w.name, (obj) => w.completed(obj, n, gen));
    await Promise.all([pods.ready, object.ready]);
    await s.idle();
    const cpu = s.cpuGroups();
    const before = await scrape(kubeConfig);
    const selfBefore = await selfCounted(s.functionURLs);
    const phasesBefore = await phaseTimes(s);
    const cpuBefore = sampleCpu(cpu);
    pods.begin(APP_IMAGE(1));
    const started = epochMs();
    await admin.request('PATCH', w.path(w.ns, w.name), { patch: 'json', body: imagePatch('/spec/template/spec/containers/0/image', APP_IMAGE(1)) });
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${w.writer} rollout of ${n} pods not done in 600 s`)), 600_000).unref());
    const [lastReady, completed] = await Promise.race([Promise.all([pods.allReady(n), object.done]), timeout]);
    const wallMs = Math.max(lastReady, completed) - started;
    // Requests that the rollout set off but that land after it (the last events' reconciles) count too.
    // Bounded: an idle still waiting after the race must not fail later (the stack may be stopping by then).
    await Promise.race([s.idle().catch(() => {}), new Promise((r) => setTimeout(r, 5000))]);
    await new Promise((r) => setTimeout(r, 500));
    const cpuAfter = sampleCpu(cpu);
    const after = await scrape(kubeConfig);
    const selfAfter = await selfCounted(s.functionURLs);
    const phasesAfter = await phaseTimes(s);
    pods.stop();
    object.stop();
    const step = stepLatency(pods.writes(), pods.readies(), K);
    const counted = countedDelta(selfBefore, selfAfter);
    if (process.env.BENCH_BREAKDOWN && w.writer === 'neoset') {
      say(`requests reconcile and readiness counted, by verb and resource:\n${counted.lines.join('\n')}`);
      say(`reconcile's time:\n${phaseLines(phasesBefore, phasesAfter).join('\n')}`);
    }
    const cpuPerPod = new Map([...cpuDelta(cpuBefore, cpuAfter)].map(([party, ms]) => [party, ms / n]));
    const breakdown =
      w.writer === 'neoset'
        ? stepBreakdown({ runs: runsFromLog(await s.reconcileLog(), w.ns, w.name), namespace: w.ns, written: pods.writtenOrder(), readies: pods.readyOrder(), finishes: pods.finishes(), k: K })
        : undefined;
    return { wallMs, step, cpu: cpuPerPod, breakdown, own: requestsOf(w.own, before, after), all: allRequests(before, after), selfCounted: w.writer === 'neoset' ? counted.sum : undefined };
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

/** One run's figures by column (medians are taken per column: of each run's own ratio, not ratios of medians). */
type Values = Record<string, number>;

function rolloutValues(r: Row): Values {
  const { neoset: a, native: b } = r;
  const per = (x: number) => x / r.n;
  return {
    restartK: r.restartMs,
    restartOne: r.restartOneMs,
    limitK: r.limitMs,
    limitOne: r.limitOneMs,
    neoset: a.wallMs,
    perLimitK: a.wallMs / r.limitMs,
    perLimitOne: a.wallMs / r.limitOneMs,
    native: b.wallMs,
    neoPerSts: a.wallMs / b.wallMs,
    neoStep50: a.step.p50,
    neoStep90: a.step.p90,
    stsStep50: b.step.p50,
    stsStep90: b.step.p90,
    neoOwn: per(a.own.reads + a.own.writes),
    neoOwnR: per(a.own.reads),
    neoOwnW: per(a.own.writes),
    stsOwn: per(b.own.reads + b.own.writes),
    stsOwnR: per(b.own.reads),
    stsOwnW: per(b.own.writes),
    neoAll: per(a.all.reads + a.all.writes),
    stsAll: per(b.all.reads + b.all.writes),
  };
}

const ROLLOUT_HEADER = [
  'N',
  'run',
  'restart k/1 ms',
  'limit k/1 s',
  'NeoSet s',
  '/limit k',
  '/limit 1',
  'StatefulSet s',
  'Neo/STS',
  'Neo step p50/p90 ms',
  'STS step p50/p90 ms',
  'Neo fn req/pod (R/W)',
  'STS ctrl req/pod (R/W)',
  'Neo all req/pod',
  'STS all req/pod',
];

const rolloutCells = (v: Values): string[] => [
  `${fixed(v.restartK, 0)}/${fixed(v.restartOne, 0)}`,
  `${fixed(seconds(v.limitK), 2)}/${fixed(seconds(v.limitOne), 2)}`,
  fixed(seconds(v.neoset), 2),
  fixed(v.perLimitK, 2),
  fixed(v.perLimitOne, 2),
  fixed(seconds(v.native), 2),
  fixed(v.neoPerSts, 2),
  `${fixed(v.neoStep50, 0)}/${fixed(v.neoStep90, 0)}`,
  `${fixed(v.stsStep50, 0)}/${fixed(v.stsStep90, 0)}`,
  `${fixed(v.neoOwn, 1)} (${fixed(v.neoOwnR, 1)}/${fixed(v.neoOwnW, 1)})`,
  `${fixed(v.stsOwn, 1)} (${fixed(v.stsOwnR, 1)}/${fixed(v.stsOwnW, 1)})`,
  fixed(v.neoAll, 1),
  fixed(v.stsAll, 1),
];

function cpuValues(r: Row): Values {
  return Object.fromEntries(
    (['neoset', 'native'] as const).flatMap((side) => CPU_PARTIES.map((party) => [`${side} ${party}`, r[side].cpu.get(party) ?? NaN])),
  );
}

const CPU_HEADER = ['N', 'run', 'side', ...CPU_PARTIES];

const cpuCells = (v: Values, side: 'neoset' | 'native'): string[] => [side === 'neoset' ? 'NeoSet' : 'StatefulSet', ...CPU_PARTIES.map((party) => fixed(v[`${side} ${party}`], 1))];

function breakdownValues(r: { neoset: Side }): Values {
  const b = r.neoset.breakdown;
  const p50 = SEGMENTS.map((s) => b?.p50[s] ?? NaN);
  return { steps: b?.steps ?? 0, ...Object.fromEntries(SEGMENTS.map((s, i) => [s, p50[i]])), total: b?.total ?? NaN };
}

const BREAKDOWN_HEADER = ['N', 'run', 'steps', ...SEGMENTS, 'ready→drain'];
const breakdownCells = (v: Values): string[] => [fixed(v.steps, 0), ...SEGMENTS.map((s) => fixed(v[s], 1)), fixed(v.total, 1)];

/** The real Knative side's CPU ms per pod, by KNATIVE_CPU_PARTIES. */
const brokerCpuValues = (r: BrokerRow): Values => Object.fromEntries(KNATIVE_CPU_PARTIES.map((party) => [party, r.neoset.cpu.get(party) ?? NaN]));
const BROKER_CPU_HEADER = ['N', 'run', ...KNATIVE_CPU_PARTIES];
const brokerCpuCells = (v: Values): string[] => KNATIVE_CPU_PARTIES.map((party) => fixed(v[party], 1));

const medianValues = (vs: Values[]): Values => Object.fromEntries(Object.keys(vs[0]).map((k) => [k, median(vs.map((v) => v[k]))]));

/** Each N's rows, then (several runs) their median: the rows of one table. */
function tableRows<R extends Limits>(rows: R[], values: (r: R) => Values, cells: (v: Values) => string[]): string[][] {
  return SIZES.flatMap((n) => {
    const of = rows.filter((r) => r.n === n).map((r) => ({ r, v: values(r) }));
    const out = of.map(({ r, v }) => [`${n}`, `${r.run}`, ...cells(v)]);
    if (of.length > 1) out.push([`${n}`, 'median', ...cells(medianValues(of.map(({ v }) => v)))]);
    return out;
  });
}

/**
 * One path's NeoSet figures for the comparison: `events` is the party whose CPU carries the events
 * (the bridge's process, or Knative's).
 */
function pathValues(r: Limits & { neoset: Side }, events: string): Values {
  const a = r.neoset;
  const per = (x: number) => x / r.n;
  return {
    limitOne: r.limitOneMs,
    wall: a.wallMs,
    perLimitOne: a.wallMs / r.limitOneMs,
    perStep: a.wallMs / Math.ceil(r.n / K),
    step50: a.step.p50,
    step90: a.step.p90,
    event: a.breakdown?.p50['finish→event'] ?? NaN,
    drain: a.breakdown?.total ?? NaN,
    fnReq: per(a.own.reads + a.own.writes),
    allReq: per(a.all.reads + a.all.writes),
    cpuFunctions: a.cpu.get('functions') ?? NaN,
    cpuApiserver: a.cpu.get('kube-apiserver') ?? NaN,
    cpuEtcd: a.cpu.get('etcd') ?? NaN,
    cpuEvents: a.cpu.get(events) ?? NaN,
  };
}

const COMPARE_HEADER = ['N', 'path', 'runs', 'limit 1 s', 'NeoSet s', '/limit 1', 'per step ms', 'step p50/p90 ms', 'finish→event p50 ms', 'ready→drain p50 ms', 'fn req/pod', 'all req/pod', 'CPU ms/pod: functions', 'kube-apiserver', 'etcd', 'event path'];

const compareCells = (v: Values): string[] => [
  fixed(seconds(v.limitOne), 2),
  fixed(seconds(v.wall), 2),
  fixed(v.perLimitOne, 2),
  fixed(v.perStep, 0),
  `${fixed(v.step50, 0)}/${fixed(v.step90, 0)}`,
  fixed(v.event, 1),
  fixed(v.drain, 1),
  fixed(v.fnReq, 1),
  fixed(v.allReq, 1),
  fixed(v.cpuFunctions, 1),
  fixed(v.cpuApiserver, 1),
  fixed(v.cpuEtcd, 1),
  fixed(v.cpuEvents, 1),
];

/** Per N with runs on both paths: the bridge's medians, the real Broker's, and what the Broker adds (their difference). */
function compared(bridge: Row[], broker: BrokerRow[]): { n: number; runs: [number, number]; bridge: Values; broker: Values; diff: Values }[] {
  return SIZES.flatMap((n) => {
    const a = bridge.filter((r) => r.n === n).map((r) => pathValues(r, 'bridge+bench'));
    const b = broker.filter((r) => r.n === n).map((r) => pathValues(r, 'knative'));
    if (a.length === 0 || b.length === 0) return [];
    const [ma, mb] = [medianValues(a), medianValues(b)];
    return [{ n, runs: [a.length, b.length], bridge: ma, broker: mb, diff: Object.fromEntries(Object.keys(mb).map((k) => [k, mb[k] - ma[k]])) }];
  });
}

const compareRows = (bridge: Row[], broker: BrokerRow[]): string[][] =>
  compared(bridge, broker).flatMap((c) => [
    [`${c.n}`, 'bridge', `${c.runs[0]}`, ...compareCells(c.bridge)],
    [`${c.n}`, 'real Broker', `${c.runs[1]}`, ...compareCells(c.broker)],
    [`${c.n}`, 'Broker − bridge', '', ...compareCells(c.diff)],
  ]);

/** What the Broker adds, in words, per N. */
const brokerSummary = (bridge: Row[], broker: BrokerRow[]): string[] =>
  compared(bridge, broker).map(
    ({ n, bridge: a, broker: b, diff: d }) =>
      `N=${n}: the real Broker adds ${fixed(seconds(d.wall), 2)} s per rollout (${fixed((d.wall / a.wall) * 100, 0)}%: ${fixed(seconds(a.wall), 2)} → ${fixed(seconds(b.wall), 2)} s), ` +
      `${fixed(d.perStep, 0)} ms per step (step p50 ${fixed(d.step50, 0)} ms, its event path finish→event ${fixed(d.event, 1)} ms); ` +
      `the events cost ${fixed(b.cpuEvents, 1)} ms of Knative's CPU per pod against ${fixed(a.cpuEvents, 1)} ms of the bridge's process (with the benchmark's watches)`,
  );

/** Each row's figures on one line as soon as they are measured: a later run that fails loses nothing of this one. */
const labelled = (header: string[], cells: string[], skip = 2) => cells.map((cell, i) => `${header[i + skip]} ${cell}`).join(' | ');

/** The physical limit of this stack for N and run (bare pods, no controller). */
async function limitsOf(s: RolloutStack, n: number, run: number, path: string): Promise<Limits> {
  const bare = await physicalLimit(s, n, run);
  const steps = Math.ceil(n / K);
  const limits = { n, run, restartMs: bare.atOnceMs, restartOneMs: bare.oneMs, limitMs: steps * bare.atOnceMs, limitOneMs: steps * bare.oneMs };
  say(`${path} N=${n} run ${run}: bare pod restart → Ready ${fixed(bare.atOnceMs, 0)} ms (${K} at once), ${fixed(bare.oneMs, 0)} ms (one at a time); limit ${fixed(seconds(limits.limitMs), 2)} / ${fixed(seconds(limits.limitOneMs), 2)} s`);
  return limits;
}

/** The bridge side: the dev stack (dev/stack.ts), NeoSet against the physical limit and the native StatefulSet. */
async function bridgeSide(dir: string, log: (line: string) => void): Promise<{ rows: Row[]; version: string }> {
  // The control plane is the benchmark's, so that the dev stack starts no kubelet in this process.
  const controlPlane = await startControlPlane({ dir: join(dir, 'control-plane'), log });
  let stack: DevStack | undefined;
  let kcm: ManagedProcess | undefined;
  let kubelets: ManagedProcess[] = [];
  const rows: Row[] = [];
  try {
    stack = await startDevStack({ dir, cluster: { kubeconfig: controlPlane.kubeconfigPath }, ports: { reconcile: 0, readiness: 0, admission: 0 }, resyncMs: RESYNC_MS, log });
    const admin = createKubeClient(stack.cluster.kubeConfig());
    kcm = await startControllerManager(controlPlane, { name: 'kcm-statefulset', controllers: ['statefulset-controller'] });
    kubelets = await startKubelets(admin, controlPlane.kubeconfigPath, Math.ceil(Math.max(...SIZES) / PODS_PER_NODE), dir);
    const bench = bridgeRolloutStack(stack, admin, benchCpuGroups(stack, kcm, kubelets));
    await installFlowSchemas(admin, [NEOSET_FUNCTIONS, STATEFULSET_CONTROLLER]);
    say(`stack ready: kube-apiserver ${controlPlane.version}, statefulset-controller in its own kube-controller-manager (pid ${kcm.pid}), ${kubelets.length} simulated node(s) in their own processes`);
    for (const n of SIZES) {
      for (let run = 1; run <= RUNS; run++) {
        try {
          const limits = await limitsOf(bench, n, run, 'bridge');
          const neosetSide = await rollout(bench, neosetWorkload(n, run), n);
          say(
            `N=${n} run ${run}: NeoSet ${fixed(seconds(neosetSide.wallMs), 2)} s; API server counted ${neosetSide.own.reads + neosetSide.own.writes} requests of the functions, ` +
              `reconcile and readiness counted ${neosetSide.selfCounted} themselves (admission's are only in the first figure)`,
          );
          const nativeSide = await rollout(bench, statefulSetWorkload(n, run), n);
          say(`N=${n} run ${run}: StatefulSet ${fixed(seconds(nativeSide.wallMs), 2)} s`);
          const row: Row = { ...limits, neoset: neosetSide, native: nativeSide };
          rows.push(row);
          say(`N=${n} run ${run}: ${labelled(ROLLOUT_HEADER, rolloutCells(rolloutValues(row)))}`);
          say(`N=${n} run ${run}: CPU ms/pod ${labelled(CPU_HEADER, cpuCells(cpuValues(row), 'neoset'))}; ${labelled(CPU_HEADER, cpuCells(cpuValues(row), 'native'))}`);
          say(`N=${n} run ${run}: step p50 ms ${labelled(BREAKDOWN_HEADER, breakdownCells(breakdownValues(row)))}`);
          say(`N=${n} run ${run}: reconcile's reads, p50 ms from its run's start: ${Object.entries(neosetSide.breakdown?.reads ?? {}).map(([what, ms]) => `${what} ${fixed(ms, 1)}`).join(', ')}`);
        } catch (err) {
          say(`N=${n} run ${run} FAILED, left out of the table: ${(err as Error).message}`);
        }
      }
    }
  } finally {
    for (const kubelet of kubelets) await kubelet.stop();
    await kcm?.stop();
    await stack?.stop();
    await controlPlane.stop();
  }
  return { rows, version: controlPlane.version };
}

/** The real-Knative side: the same limits and NeoSet rollouts through the real ApiServerSource → Broker → Triggers. */
async function brokerSide(dir: string, log: (line: string) => void): Promise<{ rows: BrokerRow[]; version: string; knativeVersion: string } | { skipped: string }> {
  const why = knativeUnavailable();
  if (why) return { skipped: why };
  const started = Date.now();
  let side: KnativeSide;
  try {
    side = await startKnativeSide({ dir: join(dir, 'knative'), nodes: Math.ceil(Math.max(...SIZES) / PODS_PER_NODE), log });
  } catch (err) {
    return { skipped: `its stack did not come up: ${(err as Error).message.split('\n')[0]}` };
  }
  const rows: BrokerRow[] = [];
  try {
    say(`real-Knative stack ready in ${fixed(seconds(Date.now() - started), 1)} s: kube-apiserver ${side.version}, Knative Eventing v${side.knativeVersion}, the functions as process-mode pods, ${side.nodes} simulated node(s) in their own processes`);
    say(`real-Knative CPU read from (processes): ${side.cpuGroups().map((g) => `${g.name} ${g.pids.length}`).join(', ')}`);
    for (const n of SIZES) {
      for (let run = 1; run <= RUNS; run++) {
        try {
          const limits = await limitsOf(side, n, run, 'Broker');
          const neosetSide = await rollout(side, neosetWorkload(n, run), n);
          const row: BrokerRow = { ...limits, neoset: neosetSide };
          rows.push(row);
          say(`Broker N=${n} run ${run}: ${labelled(COMPARE_HEADER, compareCells(pathValues(row, 'knative')), 3)}`);
          say(`Broker N=${n} run ${run}: CPU ms/pod ${labelled(BROKER_CPU_HEADER, brokerCpuCells(brokerCpuValues(row)))}`);
          say(`Broker N=${n} run ${run}: step p50 ms ${labelled(BREAKDOWN_HEADER, breakdownCells(breakdownValues(row)))}`);
        } catch (err) {
          say(`Broker N=${n} run ${run} FAILED, left out of the table: ${(err as Error).message}`);
        }
      }
    }
  } finally {
    await side.stop();
  }
  return { rows, version: side.version, knativeVersion: side.knativeVersion };
}

function printBridge(rows: Row[], version: string): void {
  console.log(`rollout, k = maxUnavailable ${K}, Parallel, image change; dev stack (kube-apiserver ${version}, simulated kubelet, bridge resync ${RESYNC_MS} ms)`);
  console.log(table(ROLLOUT_HEADER, tableRows(rows, rolloutValues, rolloutCells)));
  console.log(
    [
      `restart = median image patch → Ready on the new image of bare pods (no controller): k = ${K} patched at once / ${BARE_ONE} one at a time on the idle stack;`,
      '  limit = ceil(N/k) × restart; /limit k and /limit 1 = NeoSet\'s time over each.',
      'step = a pod Ready on the new image → the next pod\'s update written (NeoSet: in-place state annotation; StatefulSet: pod deletion).',
      'fn req/pod = requests of the NeoSet functions\' ServiceAccounts (reconcile, readiness, admission), ctrl req/pod = statefulset-controller\'s,',
      '  counted by the API server per FlowSchema (apiserver_flowcontrol_dispatched_requests_total), reads (get/list/watch) / writes;',
      'all req/pod = apiserver_request_total of every client over the rollout (kubelet, bridge and benchmark watches included).',
    ].join('\n'),
  );
  console.log('\nCPU ms per pod updated (utime+stime from /proc over each side\'s rollout, / N)');
  const cpuRows = (side: 'neoset' | 'native') => tableRows(rows, cpuValues, (v) => cpuCells(v, side));
  console.log(table(CPU_HEADER, [...cpuRows('neoset'), ...cpuRows('native')]));
  console.log('functions = reconcile + readiness + admission (each also on its own); statefulset-controller = its kube-controller-manager; bridge+bench = this process (the event bridge, the Broker\'s part, and the benchmark\'s watches).');
  console.log('\nNeoSet step breakdown, p50 ms per segment (pod Ready seen → readiness\'s finish seen → reconcile\'s event arrived → its run started → reads done → decided → claim written → drain written; ready→drain: the p50 of each step\'s whole, as medians do not add up)');
  console.log(table(BREAKDOWN_HEADER, tableRows(rows, breakdownValues, breakdownCells)));
}

function printBroker(bridge: Row[], broker: BrokerRow[], versions: string): void {
  console.log(`\nthe same NeoSet rollouts through the real Knative Eventing (${versions}; ApiServerSource → MT channel-based Broker → in-memory channel → Triggers; the functions as process-mode pods behind their Services; PingSource resync each minute)`);
  console.log('NeoSet step breakdown through the real Broker, p50 ms per segment (as above: finish→event is the event path, the adapter, ingress, channel, filter and Trigger delivery)');
  console.log(table(BREAKDOWN_HEADER, tableRows(broker, breakdownValues, breakdownCells)));
  console.log('\nCPU ms per pod updated through the real Broker (utime+stime from /proc over the rollout, / N)');
  console.log(table(BROKER_CPU_HEADER, tableRows(broker, brokerCpuValues, brokerCpuCells)));
  console.log(
    [
      'functions = reconcile + readiness + admission (two pods) as process-mode pods; knative = every Knative process: adapter (the two ApiServerSource adapters), ingress and filter (the Broker\'s),',
      '  dispatcher (the in-memory channel\'s), knative-other (controllers, webhook, PingSource adapter); kube-proxy+dns = kube-proxy and CoreDNS; kubelet = the simulated kubelets of the',
      '  benchmark\'s pods; kubelet+bench = this process (the process-mode kubelet of the stack\'s pods, their probes, and the benchmark\'s watches).',
    ].join('\n'),
  );
  if (bridge.length === 0) return;
  console.log('\nbridge vs real Broker: NeoSet, the medians of each path\'s runs, and what the Broker adds (real Broker − bridge; per rollout: NeoSet s, per step: per step ms and step p50)');
  console.log(table(COMPARE_HEADER, compareRows(bridge, broker)));
  console.log(
    [
      `per step = NeoSet s / ceil(N/k); finish→event = readiness's finish seen → reconcile's event arrived (the event path's part of a step); ready→drain = a step's whole, p50;`,
      'fn req/pod and all req/pod as above; CPU ms/pod event path = the bridge: this process (the bridge and the benchmark\'s watches), the real Broker: every Knative process.',
      ...brokerSummary(bridge, broker),
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'neoset-bench-rollout-'));
  say(`bench/rollout: N = ${SIZES.join(', ')}, k = ${K}, ${RUNS} run(s) each; dev stack in ${dir}`);
  const log = (line: string) => (process.env.BENCH_VERBOSE ? say(line) : undefined);
  try {
    const bridge = BRIDGE ? await bridgeSide(dir, log) : undefined;
    const broker = await brokerSide(dir, log);
    if (bridge) printBridge(bridge.rows, bridge.version);
    if ('skipped' in broker) console.log(`\nreal Knative Eventing path not run: ${broker.skipped}`);
    else printBroker(bridge?.rows ?? [], broker.rows, `kube-apiserver ${broker.version}, Knative Eventing v${broker.knativeVersion}`);
  } finally {
    if (process.env.BENCH_KEEP) say(`kept ${dir} (the functions' JSON logs)`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

await main();
