// Update priority (SPEC §4.12, OpenKruise priorityStrategy): among the pods the partition allows,
// higher priority first, ties highest ordinal first; the partition keeps its meaning.
import { describe, expect, it } from 'vitest';
import { orderSuffix, priorityOf } from '../../shared/core/update/priority.ts';
import { checkInvariants } from '../oracle/index.ts';
import { plan, revisionsOfPods, settled, steps } from './helpers.ts';
import type { World } from './world.ts';

const label = (w: World, ordinal: number, labels: Record<string, string>) =>
  w.changePod(`web-${ordinal}`, (p) => void (p.metadata.labels = { ...p.metadata.labels, ...labels }));

describe('priorityOf (Kruise priority_sort.go)', () => {
  const weights = { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { role: 'replica' } } }, { weight: 10, matchSelector: { matchExpressions: [{ key: 'zone', operator: 'In' as const, values: ['a'] }] } }] };

  it('weightPriority: the sum of the weights whose selector selects the pod', () => {
    expect(priorityOf(weights, { role: 'replica', zone: 'a' })[0]).toBe(60);
    expect(priorityOf(weights, { role: 'replica' })[0]).toBe(50);
    expect(priorityOf(weights, { role: 'primary', zone: 'a' })[0]).toBe(10);
    expect(priorityOf(weights, {})[0]).toBe(0);
  });

  it('orderPriority: the first key the pod carries (earlier terms first), then the value\'s integer suffix, largest first; no key last', () => {
    const order = { orderPriority: [{ orderedKey: 'key1' }, { orderedKey: 'key2' }] };
    const [k1a, k1b, k2, none] = ([{ key1: 'o-10' }, { key1: 'o-5' }, { key2: 'o-20' }, { other: 'x' }] as Record<string, string>[]).map((l) => priorityOf(order, l));
    const before = (a: number[], b: number[]) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
    expect(before(k1a, k1b)).toBe(true); // Kruise: {key1: o-10} before {key1: o-5}
    expect(before(k2, k1a)).toBe(false); // Kruise: {key2: o-20} after {key1: o-10}
    expect(before(k2, none)).toBe(true); // departure: Kruise puts a pod with no key first
    expect(before(none, k2)).toBe(false);
  });

  it('orderSuffix: the trailing digits, 0 without any', () => {
    expect([orderSuffix('sts-10'), orderSuffix('5'), orderSuffix('abc'), orderSuffix(''), orderSuffix('a1b')]).toEqual([10, 5, 0, 0, 0]);
  });
});

describe('a rollout with update priority', () => {
  it('replicas first, the primary (role=primary, ordinal 1) last; ties highest ordinal first', async () => {
    const w = await settled({ replicas: 4, image: 'mysql:8.0', updateStrategy: { priorityStrategy: { weightPriority: [{ weight: 100, matchSelector: { matchLabels: { role: 'replica' } } }] } } });
    for (const i of [0, 2, 3]) label(w, i, { role: 'replica' });
    label(w, 1, { role: 'primary' });
    w.setImage('mysql:8.1');
    const order: string[] = [];
    const rounds = await w.settle(300, (previous, current) => {
      expect(checkInvariants({ ...current, previous })).toEqual([]);
      for (const p of current.pods) {
        const before = previous.pods.find((q) => q.metadata.uid === p.metadata.uid);
        if (p.metadata.annotations?.['neoset.neo.io/inplace-update-state'] && !before?.metadata.annotations?.['neoset.neo.io/inplace-update-state']) order.push(p.metadata.name);
      }
    });
    expect(rounds).toBeGreaterThanOrEqual(0);
    expect(order).toEqual(['web-3', 'web-2', 'web-0', 'web-1']);
  });

  it('maxUnavailable 2: a batch is the two highest priorities', async () => {
    const w = await settled({ replicas: 5, updateStrategy: { maxUnavailable: 2, priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }] } } });
    label(w, 0, { rank: 'r-9' });
    label(w, 2, { rank: 'r-3' });
    w.setImage('nginx:v2');
    expect(steps(plan(w))).toEqual(['createRevision', 'markDraining:web-0', 'markDraining:web-2']);
  });

  it('the partition keeps its meaning: a high-priority pod below it is not updated', async () => {
    const w = await settled({ replicas: 4, updateStrategy: { partition: 2, priorityStrategy: { weightPriority: [{ weight: 100, matchSelector: { matchLabels: { first: 'yes' } } }] } } });
    label(w, 0, { first: 'yes' });
    label(w, 2, { first: 'yes' });
    w.setImage('nginx:v2');
    expect(steps(plan(w))).toEqual(['createRevision', 'markDraining:web-2']);
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    const [v1, , v2] = [w.revisionOf(0), w.revisionOf(1), w.revisionOf(2)];
    expect(revisionsOfPods(w)).toEqual([v1, v1, v2, v2]);
  });

  it('without priorityStrategy, or with no pod labelled: highest ordinal first, as before', async () => {
    const w = await settled({ replicas: 3, updateStrategy: { priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }] } } });
    w.setImage('nginx:v2');
    expect(steps(plan(w))).toEqual(['createRevision', 'markDraining:web-2']);
  });
});
