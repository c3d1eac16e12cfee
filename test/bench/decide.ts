// Time of decide() on a 1,000-pod NeoSet during a rollout. Two snapshots, built with the in-memory
// world of the unit tests (Parallel, one claim per pod, maxUnavailable 10%), then decide() alone is
// timed on each:
//   batch start: 1,000 pods Ready on v1, the template just changed to v2 — the plan creates the
//                revision and starts 100 in-place updates;
//   mid-rollout: 100 pods done on v2, 100 updating in place (waiting for the kubelet), 800 on v1.
//   node test/bench/decide.ts            (PODS=1000 RUNS=300 to change)
import { ANNOTATION_INPLACE_STATE } from '../../shared/api/names.ts';
import { decide } from '../../shared/core/decide.ts';
import type { Snapshot } from '../../shared/core/snapshot.ts';
import { World } from '../unit/world.ts';

const PODS = Number(process.env.PODS ?? 1000);
const RUNS = Number(process.env.RUNS ?? 300);
const WARMUP = 30;

const world = new World({
  replicas: PODS,
  podManagementPolicy: 'Parallel',
  volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '1Gi' } } } }],
  updateStrategy: { maxUnavailable: '10%' },
});
if (await world.settle(50) < 0) throw new Error('the world did not settle');
world.setImage('nginx:v2');
const batchStart = { snapshot: world.snapshot(), now: new Date(world.now) };
await world.run(9, 0);
await world.reconcile();
const midRollout = { snapshot: world.snapshot(), now: new Date(world.now) };

function bench(name: string, { snapshot, now }: { snapshot: Snapshot; now: Date }): void {
  const plan = decide(snapshot, now);
  const kinds = new Map<string, number>();
  for (const a of plan.actions) kinds.set(a.kind, (kinds.get(a.kind) ?? 0) + 1);
  const updating = snapshot.pods.filter((p) => p.metadata.annotations?.[ANNOTATION_INPLACE_STATE]).length;
  const done = snapshot.pods.filter((p) => p.spec.containers[0].image === 'nginx:v2' && !p.metadata.annotations?.[ANNOTATION_INPLACE_STATE]).length;
  for (let i = 0; i < WARMUP; i++) decide(snapshot, now);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    decide(snapshot, now);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(2);
  console.log(`${name}: ${snapshot.pods.length} pods (${done} done, ${updating} updating), plan of ${plan.actions.length} actions {${[...kinds].map(([k, v]) => `${k}: ${v}`).join(', ')}}`);
  console.log(`  decide() x${RUNS}: median ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`);
}

bench('batch start', batchStart);
bench('mid-rollout', midRollout);
