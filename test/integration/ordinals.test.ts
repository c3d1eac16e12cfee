// Start and reserved ordinals (SPEC §4.12) on the real API server with the simulated kubelet and the
// real admission webhook: start 5 -> pods web-5..web-7; start 5 -> 0 as the StatefulSet controller
// does it (the new range created first, in order, then the condemned deleted highest first); a
// reserved ordinal with replicas 3 -> pods 0, 2, 3, the pod on the newly reserved ordinal deleted
// with its claim (whenScaled Delete) and replaced; a rollout held by a partition counted in
// positions, with claims retained on a scale-down (whenScaled Retain). Every observed state goes
// through the invariant checker (SPEC §7), which knows the ordinals in range.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/core/objects.ts';
import { startTestAdmission, type TestAdmission } from '../cluster/test-admission.ts';
import { applyNeoSet, identities, isReady, patchNeoSet, setImage, settledOn, untilStatus, DATA_CLAIM, pvcNames as pvcNamesOf } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';

let stack: Stack;
let admission: TestAdmission;
beforeAll(async () => {
  stack = await startStack({ prefix: 'ordinals', resyncMs: 500 });
  // Active once a NeoSet with a bad reserved range (our rule, not the schema's) is refused by it.
  const probe = neosetManifest({ name: 'probe', replicas: 1, spec: { reserveOrdinals: ['5-3'] } });
  admission = await startTestAdmission({
    name: 'ordinals',
    namespace: stack.namespace,
    active: async () => {
      const r = await stack.kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(probe));
      return r.code !== 0 && r.stderr.includes('spec.reserveOrdinals[0]');
    },
  });
}, 120_000);
afterAll(async () => {
  await admission?.stop();
  await stack?.stop();
});

const names = (pods: Pod[]) => pods.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name).sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));

/** When each pod of `name` was first seen, first Ready, and first seen terminating (local ms), from the observer's watch. */
function timeline(name: string, since = 0) {
  const created = new Map<string, number>();
  const ready = new Map<string, number>();
  const terminating = new Map<string, number>();
  for (const { seenAt, type, pod } of stack.observer.podHistory) {
    if (seenAt < since || !pod.metadata.name.startsWith(`${name}-`)) continue;
    const key = pod.metadata.name;
    if (!created.has(key)) created.set(key, seenAt);
    if (isReady(pod) && !ready.has(key)) ready.set(key, seenAt);
    if ((pod.metadata.deletionTimestamp || type === 'DELETED') && !terminating.has(key)) terminating.set(key, seenAt);
  }
  return { created, ready, terminating };
}

const claim = DATA_CLAIM;
const pvcNames = (prefix: string) => pvcNamesOf(stack, prefix);

const allReady = (want: string[]) => (_: unknown, pods: Pod[]) => names(pods).join() === want.join() && pods.length === want.length && pods.every(isReady);

describe('spec.ordinals.start (the StatefulSet behaviour)', () => {
  const NAME = 'web';
  it('start 5: pods web-5, web-6, web-7, created in order', async () => {
    const since = Date.now();
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3, spec: { ordinals: { start: 5 } } }));
    await untilStatus(stack, NAME, 'web-5..web-7 Ready', (n, pods) => allReady(['web-5', 'web-6', 'web-7'])(n, pods) && n.status?.availableReplicas === 3);
    const { created, ready } = timeline(NAME, since);
    expect(created.get('web-6')!).toBeGreaterThanOrEqual(ready.get('web-5')!);
    expect(created.get('web-7')!).toBeGreaterThanOrEqual(ready.get('web-6')!);
    expect(stack.observer.violations).toEqual([]);
  });

  it('start 5 -> 0: web-0, web-1, web-2 created in order first, then web-7, web-6, web-5 deleted, highest first', async () => {
    const since = Date.now();
    await patchNeoSet(stack, NAME, { spec: { ordinals: { start: 0 } } });
    await untilStatus(stack, NAME, 'web-0..web-2 Ready, 5..7 gone', allReady(['web-0', 'web-1', 'web-2']), 90_000);
    const { created, ready, terminating } = timeline(NAME, since);
    expect(created.get('web-1')!).toBeGreaterThanOrEqual(ready.get('web-0')!);
    expect(created.get('web-2')!).toBeGreaterThanOrEqual(ready.get('web-1')!);
    // The condemned go only once the new range is Running and Ready, one at a time, highest first.
    expect(terminating.get('web-7')!).toBeGreaterThanOrEqual(ready.get('web-2')!);
    expect(terminating.get('web-6')!).toBeGreaterThan(terminating.get('web-7')!);
    expect(terminating.get('web-5')!).toBeGreaterThan(terminating.get('web-6')!);
    expect(stack.observer.violations).toEqual([]);
    console.log(`start 5 -> 0 in ${Math.max(...terminating.values()) - since} ms: created ${[...created.keys()].join(', ')}; deleted ${[...terminating.entries()].sort((a, b) => a[1] - b[1]).map(([n]) => n).join(', ')}`);
  });
});

describe('spec.reserveOrdinals (the OpenKruise behaviour)', () => {
  const NAME = 'db';
  it('reserve 1 with replicas 3: db-1 and its claim (whenScaled Delete) go, db-3 takes its place; db-0 and db-2 keep their UIDs', async () => {
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3, spec: { volumeClaimTemplates: [claim], persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete', whenDeleted: 'Retain' } } }));
    await untilStatus(stack, NAME, 'db-0..db-2 Ready', allReady(['db-0', 'db-1', 'db-2']));
    const before = identities(stack.observer.pods(NAME));
    const since = Date.now();
    await patchNeoSet(stack, NAME, { spec: { reserveOrdinals: [1] } });
    await untilStatus(stack, NAME, 'db-0, db-2, db-3 Ready', allReady(['db-0', 'db-2', 'db-3']), 90_000);
    const after = identities(stack.observer.pods(NAME));
    expect(after['db-0']).toEqual(before['db-0']);
    expect(after['db-2']).toEqual(before['db-2']);
    const { ready, terminating } = timeline(NAME, since);
    expect(terminating.get('db-1')!).toBeGreaterThanOrEqual(ready.get('db-3')!); // replaced first, then deleted
    for (let i = 0; i < 240 && (await pvcNames('data-db-')).includes('data-db-1'); i++) await new Promise((r) => setTimeout(r, 250));
    expect(await pvcNames('data-db-')).toEqual(['data-db-0', 'data-db-2', 'data-db-3']);
    const n = stack.observer.neoset(NAME)!;
    expect(n.status).toMatchObject({ replicas: 3, readyReplicas: 3 });
    expect(stack.observer.violations).toEqual([]);
  });

  it('a bad range is refused with the field path; kubectl explain documents both fields', async () => {
    const bad = await stack.kubectl(['patch', 'neoset', NAME, '--type=merge', '-p', JSON.stringify({ spec: { reserveOrdinals: [1, '7-2'] } })]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('spec.reserveOrdinals[1]: "7-2" must be an ordinal from 0 to 999999999 or a range "a-b" of them with a <= b');
    const many = await stack.kubectl(['patch', 'neoset', NAME, '--type=merge', '-p', JSON.stringify({ spec: { reserveOrdinals: Array.from({ length: 101 }, (_, i) => i) } })]);
    expect(many.code).not.toBe(0);
    expect(many.stderr).toMatch(/reserveOrdinals: Too many: 101: must have at most 100 items/);
    const oneLine = (text: string) => text.replace(/\s+/g, ' ');
    const reserve = await stack.kubectl(['explain', 'neosets.spec.reserveOrdinals']);
    expect(reserve.code, reserve.stderr).toBe(0);
    expect(oneLine(reserve.stdout)).toContain('Ordinals never used (OpenKruise reserveOrdinals)');
    const start = await stack.kubectl(['explain', 'neosets.spec.ordinals.start']);
    expect(start.code, start.stderr).toBe(0);
    expect(oneLine(start.stdout)).toContain('A change moves the pods as the StatefulSet controller does');
    console.log(`${bad.stderr.trim()}\n${many.stderr.trim()}\n${reserve.stdout}\n${start.stdout}`);
  });
});

describe('a rollout under start and reserved ordinals', () => {
  const NAME = 'roll';
  it('start 2, reserve 3, partition 1: roll-4 and roll-5 updated, roll-2 held; then all; a scale-down retains its claim (whenScaled Retain)', async () => {
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3, spec: { ordinals: { start: 2 }, reserveOrdinals: [3], volumeClaimTemplates: [claim] } }));
    await untilStatus(stack, NAME, 'roll-2, roll-4, roll-5 Ready', allReady(['roll-2', 'roll-4', 'roll-5']));
    const ids = identities(stack.observer.pods(NAME));
    await setImage(stack, NAME, 'mysql:8.1', { partition: 1 });
    const held = await untilStatus(stack, NAME, 'positions 1, 2 updated', (n, pods) =>
      n.status?.updateRevision !== undefined && pods.filter((p) => settledOn(p, n.status?.updateRevision) && isReady(p)).map((p) => p.metadata.name).sort().join() === 'roll-4,roll-5', 90_000);
    expect(held.status?.currentRevision).not.toBe(held.status?.updateRevision);
    expect(stack.observer.pods(NAME).find((p) => p.metadata.name === 'roll-2')!.spec.containers[0].image).toBe('mysql:8.0');
    await patchNeoSet(stack, NAME, { spec: { updateStrategy: { partition: 0 } } });
    const done = await untilStatus(stack, NAME, 'all updated, currentRevision advanced', (n, pods) =>
      n.status?.currentRevision === n.status?.updateRevision && pods.length === 3 && pods.every((p) => settledOn(p, n.status?.updateRevision) && isReady(p)), 90_000);
    expect(done.status?.phase).toBe('Completed');
    expect(identities(stack.observer.pods(NAME))).toEqual(ids); // in place: the same pods
    await patchNeoSet(stack, NAME, { spec: { replicas: 2 } });
    await untilStatus(stack, NAME, 'roll-2, roll-4', allReady(['roll-2', 'roll-4']));
    expect(await pvcNames('data-roll-')).toEqual(['data-roll-2', 'data-roll-4', 'data-roll-5']);
    expect(stack.observer.violations).toEqual([]);
    console.log(`observer: ${stack.observer.checks} states checked, ${stack.observer.violations.length} violations`);
  });
});
