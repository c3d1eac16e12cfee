// Start and reserved ordinals (SPEC §4.12): which ordinals replicas maps to, the admission cases, and
// the decisions — the new range created first, the condemned deleted highest first with their claims
// as whenScaled says, the partition by position, currentRevision and status over the range.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NeoSet } from '../../shared/api/neoset.ts';
import { lastOrdinal, ordinalsInRange, parseReservedOrdinal } from '../../shared/core/ordinals.ts';
import { DEFAULT_LIMITS } from '../../shared/admission/limits.ts';
import { neosetIssues } from '../../shared/admission/validate.ts';
import { detail } from '../../bin/neoset/dashboard/view.ts';
import { formatUndoDryRun } from '../../bin/neoset/undo-view.ts';
import { formatsRan, revisionFormat } from '../../shared/core/revisions/data-format.ts';
import { neoset as fixtureNeoSet, revision } from './plugin-fixtures.ts';
import { checkInvariants } from '../oracle/index.ts';
import { plan, settled, steps } from './helpers.ts';
import { World, type WorldObservation } from './world.ts';

const spec = (replicas: number, start?: number, reserveOrdinals?: (number | string)[]) => ({
  replicas,
  ...(start === undefined ? {} : { ordinals: { start } }),
  ...(reserveOrdinals ? { reserveOrdinals } : {}),
});

describe('ordinalsInRange', () => {
  it.each([
    [spec(3), [0, 1, 2]],
    [spec(3, 5), [5, 6, 7]],
    [spec(3, 0, [1]), [0, 2, 3]],
    [spec(4, 2, [1, 3]), [2, 4, 5, 6]], // Kruise's getStatefulSetReplicasRange example
    [spec(3, 0, ['1-3', 5]), [0, 4, 6]],
    [spec(3, 0, ['2-4', '3-6', 0]), [1, 7, 8]], // overlapping ranges
    [spec(2, 999_999_998, [999_999_999]), [999_999_998]], // stops at the last ordinal a name can hold
    [spec(0, 5, [5]), []],
  ])('%j -> %j', (s, expected) => {
    expect(ordinalsInRange(s)).toEqual(expected);
  });

  it('ignores an entry that does not parse (admission refuses it)', () => {
    expect(ordinalsInRange(spec(3, 0, ['x', '3-1', -1, 1.5, '01', 1]))).toEqual([0, 2, 3]);
    expect(parseReservedOrdinal(' 4-6 ')).toEqual({ from: 4, to: 6 });
    expect(parseReservedOrdinal('7')).toEqual({ from: 7, to: 7 });
  });

  it('lastOrdinal is the last of ordinalsInRange, by arithmetic', () => {
    const entry = fc.oneof(fc.nat(40), fc.tuple(fc.nat(40), fc.nat(6)).map(([a, n]) => `${a}-${a + n}`));
    fc.assert(
      fc.property(fc.nat(30), fc.nat(20), fc.array(entry, { maxLength: 6 }), (replicas, start, reserved) => {
        const s = spec(replicas, start, reserved);
        expect(lastOrdinal(s)).toBe(ordinalsInRange(s).at(-1) ?? start - 1);
      }),
      { numRuns: 500 },
    );
  });
});

describe('admission', () => {
  const neoset = (extra: Record<string, unknown>) =>
    NeoSet.parse({
      apiVersion: 'neo.io/v1alpha1',
      kind: 'NeoSet',
      metadata: { name: 'web', namespace: 'default' },
      spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:v1', readinessProbe: { httpGet: { path: '/', port: 80 } } }] } }, ...extra },
    });
  const issues = (extra: Record<string, unknown>) => neosetIssues(neoset(extra), DEFAULT_LIMITS).map((i) => `${i.path}: ${i.message}`);

  it('accepts ordinals, ranges and a start', () => {
    expect(issues({ ordinals: { start: 5 }, reserveOrdinals: [1, '3-5', '8'] })).toEqual([]);
  });

  it.each([
    ['3-', 'spec.reserveOrdinals[1]: "3-" must be an ordinal from 0 to 999999999 or a range "a-b" of them with a <= b (e.g. 3 or "3-5")'],
    ['5-3', 'spec.reserveOrdinals[1]: "5-3" must be an ordinal'],
    ['a-b', 'spec.reserveOrdinals[1]: "a-b" must be an ordinal'],
    [-1, 'spec.reserveOrdinals[1]: -1 must be an ordinal'],
    ['1-1000000000', 'spec.reserveOrdinals[1]: "1-1000000000" must be an ordinal'],
  ])('refuses the entry %j with its field path', (entry, message) => {
    const [first] = issues({ reserveOrdinals: [0, entry] });
    expect(first.startsWith(message)).toBe(true);
  });

  it('refuses more than 100 entries and a start past the last ordinal (schema)', () => {
    expect(() => neoset({ reserveOrdinals: Array.from({ length: 101 }, (_, i) => i) })).toThrow(/100/);
    expect(() => neoset({ ordinals: { start: 1_000_000_000 } })).toThrow(/999999999/);
  });

  it('refuses pods that would need an ordinal past 999999999', () => {
    expect(issues({ ordinals: { start: 999_999_998 }, reserveOrdinals: ['999999999'] })).toEqual([
      'spec.ordinals.start: 3 pods from ordinal 999999998 (reserved ordinals skipped) would need ordinal 1000000001, over the limit of 999999999 (the pod name <name>-<ordinal> must fit in 63 characters)',
    ]);
    // Huge replicas cost nothing to check (no walk).
    expect(issues({ replicas: 2_000_000_000 })[0]).toMatch(/^spec.replicas: 2000000000 pods from ordinal 0/);
  });
});

/** Settle, checking the oracle over every state change. */
async function settleChecked(w: World): Promise<void> {
  const check = (previous: WorldObservation, current: WorldObservation) => {
    const violations = checkInvariants({ ...current, previous });
    if (violations.length > 0) throw new Error(violations.map((v) => `${v.invariant}: ${v.object ?? ''} ${v.message}`).join('\n'));
  };
  expect(await w.settle(400, check)).toBeGreaterThanOrEqual(0);
}

/** Reconcile and let the kubelet catch up until a decision does more than open gates; that decision's steps. */
async function nextMoves(w: World): Promise<string[]> {
  for (let i = 0; i < 20; i++) {
    const moves = steps(plan(w)).filter((s) => !s.startsWith('setInPlaceReady:'));
    if (moves.length > 0) return moves;
    await w.reconcile();
    w.kubeletSettle();
  }
  return [];
}

/** Apply the decision now due, then let the kubelet catch up. */
async function step(w: World): Promise<void> {
  await w.reconcile();
  w.kubeletSettle();
}

const podNames = (w: World) => [...w.pods.values()].filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name).sort();

describe('decisions', () => {
  it('start 5: pods web-5..web-7, one at a time under OrderedReady', async () => {
    const w = new World(spec(3, 5));
    expect(steps(plan(w))).toEqual(['createRevision', 'createPod:web-5']);
    await settleChecked(w);
    expect(podNames(w)).toEqual(['web-5', 'web-6', 'web-7']);
    expect(w.neoset.status).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 3 });
  });

  it('start 5 -> 0: the new range is created first, then web-7, web-6, web-5 deleted, highest first', async () => {
    const w = await settled(spec(3, 5));
    w.edit((s) => void (s.ordinals = { start: 0 }));
    expect(await nextMoves(w)).toEqual(['createPod:web-0']);
    await step(w);
    expect(await nextMoves(w)).toEqual(['createPod:web-1']);
    await step(w);
    expect(await nextMoves(w)).toEqual(['createPod:web-2']);
    await step(w);
    expect(await nextMoves(w)).toEqual(['deletePod:web-7']);
    await step(w);
    expect(await nextMoves(w)).toEqual(['deletePod:web-6']);
    await settleChecked(w);
    expect(podNames(w)).toEqual(['web-0', 'web-1', 'web-2']);
  });

  it('reserve 1 with replicas 3: web-3 created, then web-1 deleted; its claim follows whenScaled', async () => {
    const claims = [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '1Gi' } } } }];
    const w = await settled({ replicas: 3, volumeClaimTemplates: claims, persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete' } });
    w.edit((s) => void (s.reserveOrdinals = [1]));
    expect(await nextMoves(w)).toEqual(['createPVC:data-web-3', 'createPod:web-3']);
    await step(w);
    // The pod on the reserved ordinal owns its claim before it is deleted (whenScaled=Delete).
    expect(await nextMoves(w)).toEqual(['setPVCOwners:data-web-1', 'deletePod:web-1']);
    await settleChecked(w);
    expect(podNames(w)).toEqual(['web-0', 'web-2', 'web-3']);
  });

  it('Parallel: a newly reserved ordinal and its replacement in one decision', async () => {
    const w = await settled({ replicas: 3, podManagementPolicy: 'Parallel' });
    w.edit((s) => void (s.reserveOrdinals = ['0-1']));
    expect(steps(plan(w))).toEqual(['createPod:web-3', 'createPod:web-4', 'deletePod:web-1', 'deletePod:web-0']);
  });

  it('the partition counts positions: start 5, partition 1 holds web-5 back and updates web-7, web-6', async () => {
    const w = await settled({ ...spec(3, 5), updateStrategy: { partition: 1 } });
    w.setImage('nginx:2');
    await settleChecked(w);
    expect([5, 6, 7].map((i) => w.imageOf(i))).toEqual(['nginx:v1', 'nginx:2', 'nginx:2']);
    expect(w.neoset.status?.currentRevision).not.toBe(w.neoset.status?.updateRevision);
    w.edit((s) => void (s.updateStrategy.partition = 0));
    await settleChecked(w);
    expect([5, 6, 7].map((i) => w.imageOf(i))).toEqual(['nginx:2', 'nginx:2', 'nginx:2']);
    expect(w.neoset.status?.currentRevision).toBe(w.neoset.status?.updateRevision);
  });

  it('the partition skips reserved ordinals: reserve 1, partition 2 holds web-0 and web-2', async () => {
    const w = await settled({ ...spec(3, 0, [1]), updateStrategy: { partition: 2 } });
    w.setImage('nginx:2');
    await settleChecked(w);
    expect([0, 2, 3].map((i) => w.imageOf(i))).toEqual(['nginx:v1', 'nginx:v1', 'nginx:2']);
    expect(w.pod(1)).toBeUndefined();
  });
});

describe('where it shows', () => {
  it('the dashboard draws the partition line before the pod at position partition', () => {
    const at = (spec: Record<string, unknown>) =>
      detail({ neosets: [{ metadata: { name: 'db', namespace: 'ns' }, spec: { selector: { matchLabels: { app: 'db' } }, ...spec } }], pods: [], revisions: [], events: [] }, 'ns', 'db')!.partitionOrdinal;
    expect(at({ replicas: 3, updateStrategy: { partition: 1 } })).toBe(1);
    expect(at({ replicas: 3, ordinals: { start: 5 }, updateStrategy: { partition: 1 } })).toBe(6);
    expect(at({ replicas: 3, reserveOrdinals: ['0-1'], updateStrategy: { partition: 1 } })).toBe(3);
    expect(at({ replicas: 3, updateStrategy: { partition: 3 } })).toBeNull(); // past the last: at the end
    expect(at({ replicas: 2_000_000_000, updateStrategy: { partition: 1_999_999_999 } })).toBeNull(); // bounded walk
  });
});

describe('kubectl neoset rollout undo --dry-run', () => {
  it('"held back by partition" counts positions: start 5, partition 2 holds mysql-5 and mysql-6', () => {
    const revs = [revision(1, 'mysql:8.0'), revision(2, 'mysql:8.4')];
    const pods = [5, 6, 7].map((i) => ({ name: `mysql-${i}`, revision: 'mysql-rev2' }));
    const n = fixtureNeoSet({ replicas: 3, image: 'mysql:8.4', updateStrategy: { partition: 2, type: 'ReCreate' } });
    n.spec.ordinals = { start: 5 };
    const ran = formatsRan({ pods, revisions: revs.map(revisionFormat), currentRevision: 'mysql-rev2', updateRevision: 'mysql-rev2' });
    const text = formatUndoDryRun({ neoset: n, target: revs[0], revisions: revs, pods, ran, downgrade: null, refusal: null });
    expect(text).toContain('  Pods:         mysql-7 recreated from revision 2; mysql-6, mysql-5 held back by partition 2');
  });
});
