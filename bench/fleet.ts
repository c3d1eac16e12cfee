// A fleet rollout that does not queue (issue 24 point 4): M NeoSets of P pods each (maxUnavailable 1)
// bumped at the same moment — the everyday "new base image everywhere" — then M StatefulSets of the
// same template, side by side in one run on one stack (bench/lib/fleet-stack.ts: the dev stack of
// bench/rollout.ts, statefulset-controller in a kube-controller-manager of its own, the simulated
// kubelets as processes of their own). First the same with one set alone (M = 1), so that the table
// shows how much of a set's speed survives the fleet. Each set lives in a namespace of its own.
//
//   wall        first image patch sent → the last set done (every pod Ready on the new image, and the
//               object's status: NeoSet Completed with updatedReadyReplicas P; StatefulSet
//               updatedReplicas = readyReplicas = P and currentRevision = updateRevision)
//   set p50/max each set from its own patch to done: the median set and the slowest
//   step        a pod Ready on the new image → its set's next pod update written, pooled over sets
//   CPU/pod     utime+stime from /proc/<pid>/stat over the fleet's rollout, / (M × P)
//   req/pod     the API server's own counts over the rollout, / (M × P): the side's own identity's
//               (the functions' ServiceAccounts, or statefulset-controller's) and every client's
//
//   npm run bench:fleet                              40 × 5 (and 1 × 5 alone), NeoSet and StatefulSet
//   FLEET_M=200 FLEET_P=3 npm run bench:fleet        the issue's second fleet (nodes: one per 200 pods)
//   FLEET_BIG=1 npm run bench:fleet                  one NeoSet of 1,000 pods, k = 5 and 50
//   FLEET_M=10 FLEET_P=3 FLEET_SOLO=0 npm run bench:fleet
// Other knobs: FLEET_SIDES=neoset,statefulset, FLEET_NODES, FLEET_BIG_N, FLEET_BIG_K=5,50,
// BENCH_VERBOSE=1 (the stack's log), BENCH_KEEP=1 (keep the functions' logs).
import { loadavg } from 'node:os';
import { withFleetStack, FLEET_CPU_PARTIES } from './lib/fleet-stack.ts';
import { fleetRollout, type FleetConfig, type FleetResult } from './lib/fleet-run.ts';
import type { Writer } from './lib/rollout-watch.ts';
import { fixed, median, table } from './lib/stats.ts';
import { benchResyncMs } from './lib/rollout-stack.ts';

const positive = (name: string, raw: string): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}: expected a whole number ≥ 1, got "${raw}"`);
  return n;
};
const whole = (name: string, fallback: number): number => (process.env[name] ? positive(name, process.env[name]) : fallback);

const BIG = process.env.FLEET_BIG === '1';
const M = whole('FLEET_M', 40);
const P = whole('FLEET_P', 5);
const SOLO = process.env.FLEET_SOLO !== '0';
const BIG_N = whole('FLEET_BIG_N', 1000);
const BIG_K = (process.env.FLEET_BIG_K ?? '5,50').split(',').map((k) => positive('FLEET_BIG_K', k));
const SIDES = (process.env.FLEET_SIDES ?? (BIG ? 'neoset' : 'neoset,statefulset')).split(',').map((s) => {
  if (s !== 'neoset' && s !== 'statefulset') throw new Error(`FLEET_SIDES: neoset and/or statefulset, got "${s}"`);
  return s as Writer;
});
const RESYNC_MS = benchResyncMs();
/** A simulated node hands out pod IPs from one /24 and takes at most 250 pods: one node per 200. */
const PODS_PER_NODE = 200;

const CONFIGS: FleetConfig[] = BIG ? BIG_K.map((k) => ({ m: 1, p: BIG_N, k })) : [...(SOLO ? [{ m: 1, p: P, k: 1 }] : []), { m: M, p: P, k: 1 }];
const NODES = whole('FLEET_NODES', Math.ceil(Math.max(...CONFIGS.map((c) => c.m * c.p)) / PODS_PER_NODE));

const say = (line: string) => process.stderr.write(`${line}\n`);
const s = (ms: number) => fixed(ms / 1000, 2);
const label = (c: FleetConfig) => `${c.m} × ${c.p}, k ${c.k}`;
const sideName = (side: Writer) => (side === 'neoset' ? 'NeoSet' : 'StatefulSet');
const sameConfig = (a: FleetConfig, b: FleetConfig) => a.m === b.m && a.p === b.p && a.k === b.k;

const HEADER = ['fleet', 'side', 'load', 'wall s', 'set p50/max s', '/alone', 'Neo/STS', 'step p50/p90 ms', 'own req/pod (R/W)', 'all req/pod'];

function rows(results: FleetResult[]): string[][] {
  return results.map((r) => {
    const pods = r.m * r.p;
    const alone = results.find((o) => o.side === r.side && o.m === 1 && o.p === r.p && o.k === r.k);
    const sts = results.find((o) => o.side === 'statefulset' && sameConfig(o, r));
    return [
      label(r),
      sideName(r.side),
      fixed(r.load, 1),
      s(r.wallMs),
      `${s(median(r.setMs))}/${s(Math.max(...r.setMs))}`,
      alone && r.m > 1 ? fixed(r.wallMs / alone.wallMs, 2) : '-',
      r.side === 'neoset' && sts ? fixed(r.wallMs / sts.wallMs, 2) : '-',
      `${fixed(r.step.p50, 0)}/${fixed(r.step.p90, 0)}`,
      `${fixed((r.own.reads + r.own.writes) / pods, 1)} (${fixed(r.own.reads / pods, 1)}/${fixed(r.own.writes / pods, 1)})`,
      fixed((r.all.reads + r.all.writes) / pods, 1),
    ];
  });
}

const CPU_HEADER = ['fleet', 'side', ...FLEET_CPU_PARTIES];
const cpuRows = (results: FleetResult[]) => results.map((r) => [label(r), sideName(r.side), ...FLEET_CPU_PARTIES.map((party) => fixed(r.cpu.get(party) ?? NaN, 1))]);

/** Point 4's goals, for each fleet measured on both sides: ≥ 3× faster, functions' CPU per pod ≤ the controller's. */
function goalLines(results: FleetResult[]): string[] {
  return results
    .filter((r) => r.side === 'neoset' && r.m > 1)
    .flatMap((neo) => {
      const sts = results.find((o) => o.side === 'statefulset' && sameConfig(o, neo));
      if (!sts) return [];
      const speedup = sts.wallMs / neo.wallMs;
      const fn = neo.cpu.get('functions') ?? NaN;
      const ctrl = sts.cpu.get('statefulset-controller') ?? NaN;
      const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
      return [
        `${label(neo)}: the NeoSet fleet ${fixed(speedup, 2)}× as fast as the StatefulSet fleet (goal ≥ 3×: ${mark(speedup >= 3)}); ` +
          `the functions ${fixed(fn, 1)} ms CPU per pod vs statefulset-controller ${fixed(ctrl, 1)} ms (goal ≤: ${mark(fn <= ctrl)}); ` +
          `kube-apiserver ${fixed(neo.cpu.get('kube-apiserver') ?? NaN, 1)} vs ${fixed(sts.cpu.get('kube-apiserver') ?? NaN, 1)} ms per pod`,
      ];
    });
}

/** One set of many pods at several k: how step latency and CPU per pod grow with the pods a step touches. */
function scalingLines(results: FleetResult[]): string[] {
  const big = results.filter((r) => r.m === 1 && r.side === 'neoset').sort((a, b) => a.k - b.k);
  return big.slice(1).map((r) => {
    const base = big[0];
    if (base.p !== r.p) return '';
    const cpu = (x: FleetResult) => x.cpu.get('functions') ?? NaN;
    const api = (x: FleetResult) => x.cpu.get('kube-apiserver') ?? NaN;
    return (
      `${r.p} pods, k ${base.k} → ${r.k} (× ${fixed(r.k / base.k, 1)} pods per step): step p50 × ${fixed(r.step.p50 / base.step.p50, 2)}, ` +
      `CPU per pod the functions × ${fixed(cpu(r) / cpu(base), 2)}, kube-apiserver × ${fixed(api(r) / api(base), 2)} (goal: neither grows faster than the pods per step)`
    );
  }).filter((line) => line !== '');
}

async function main(): Promise<void> {
  say(`bench/fleet: ${CONFIGS.map(label).join('; ')}; ${SIDES.map(sideName).join(' then ')}; ${NODES} simulated node(s); load ${loadavg().map((l) => fixed(l, 1)).join(' ')}`);
  const log = (line: string) => (process.env.BENCH_VERBOSE ? say(line) : undefined);
  const results: FleetResult[] = [];
  let version = '';
  await withFleetStack({ nodes: NODES, resyncMs: RESYNC_MS, log, keep: Boolean(process.env.BENCH_KEEP) }, async (stack) => {
    version = stack.version;
    say(`stack ready: kube-apiserver ${stack.version}, statefulset-controller in its own kube-controller-manager, ${stack.nodes} simulated node(s) in their own processes`);
    for (const config of CONFIGS) {
      for (const side of SIDES) {
        try {
          const r = await fleetRollout(stack, side, config, say);
          results.push(r);
          // Each row as soon as it is measured: a later fleet that fails loses nothing of this one.
          const cells = rows(results).at(-1)!;
          say(`${cells.map((cell, i) => `${HEADER[i]} ${cell}`).join(' | ')}`);
          say(`  CPU ms/pod: ${FLEET_CPU_PARTIES.map((party) => `${party} ${fixed(r.cpu.get(party) ?? NaN, 1)}`).join(', ')}`);
        } catch (err) {
          say(`${sideName(side)} fleet ${label(config)} FAILED, left out of the table: ${(err as Error).message}`);
        }
      }
    }
  });
  console.log(`fleet rollout: M sets × P pods, image change bumped in every set at once; dev stack (kube-apiserver ${version}, ${NODES} simulated node(s), bridge resync ${RESYNC_MS} ms)`);
  console.log(table(HEADER, rows(results)));
  console.log(
    [
      'load = 1-minute load average as the rollout began; wall = first patch sent → the last set done (all pods Ready on the new image, status rolled out);',
      'set p50/max = each set from its own patch to done: the median set and the slowest; /alone = wall over the same side\'s one set alone;',
      'Neo/STS = NeoSet\'s wall over the StatefulSet fleet\'s; step = a pod Ready on the new image → its set\'s next pod update written (NeoSet: in-place',
      '  state annotation; StatefulSet: pod deletion), pooled over the sets; own req/pod = the side\'s own requests (the NeoSet functions\' ServiceAccounts,',
      '  or statefulset-controller\'s) counted by the API server per FlowSchema, reads/writes; all req/pod = apiserver_request_total of every client.',
    ].join('\n'),
  );
  console.log('\nCPU ms per pod updated (utime+stime from /proc over the fleet\'s rollout, / (M × P))');
  console.log(table(CPU_HEADER, cpuRows(results)));
  console.log('functions = reconcile + readiness + admission (each also on its own); statefulset-controller = its kube-controller-manager; bridge+bench = this process (the event bridge and the benchmark\'s watches).');
  const goals = BIG ? scalingLines(results) : goalLines(results);
  if (goals.length > 0) console.log(`\nissue 24 point 4's goals\n${goals.join('\n')}`);
  if (results.length < CONFIGS.length * SIDES.length) process.exitCode = 1;
}

await main();
