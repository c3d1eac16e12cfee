// Scaling policies, PVC retention, and the time-based waits (minReadySeconds, gracePeriodSeconds),
// on the real API server with the simulated kubelet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_STATE } from '../../shared/api/names.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { applyNeoSet, isReady, ordinalOf, patchNeoSet, setImage, settledOn, untilStatus, DATA_CLAIM, pvcNames as pvcNamesOf } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';
import { poll } from '../../dev/cluster/wait.ts';

/** Waits until `check` holds (the harness's poll, for a boolean). */
const pollFor = (check: () => Promise<boolean>, what: string) => poll(what, async () => ((await check()) ? true : undefined), { timeoutMs: 60_000, intervalMs: 250 });

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ prefix: 'scaling-timing', readyDelayMs: 700 });
});
afterAll(async () => {
  await stack?.stop();
});

/** First local time each pod (by name and uid) was seen, and first seen Ready; last seen before deletion. */
function timeline(name: string) {
  const firstSeen = new Map<string, number>();
  const firstReady = new Map<string, number>();
  const gone = new Map<string, number>();
  for (const { seenAt, type, pod } of stack.observer.podHistory) {
    if (!pod.metadata.name.startsWith(`${name}-`)) continue;
    const key = pod.metadata.name;
    if (!firstSeen.has(key)) firstSeen.set(key, seenAt);
    if (isReady(pod) && !firstReady.has(key)) firstReady.set(key, seenAt);
    if (type === 'DELETED') gone.set(key, seenAt);
  }
  return { firstSeen, firstReady, gone };
}

const claim = DATA_CLAIM;
const pvcNames = (prefix: string) => pvcNamesOf(stack, prefix);

describe('OrderedReady', () => {
  const NAME = 'ordered';
  it('creates one ordinal at a time, each after the previous is Ready', async () => {
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3 }));
    await untilStatus(stack, NAME, '3 ready', (n) => n.status?.readyReplicas === 3);
    const { firstSeen, firstReady } = timeline(NAME);
    for (const i of [1, 2]) expect(firstSeen.get(`${NAME}-${i}`)!).toBeGreaterThanOrEqual(firstReady.get(`${NAME}-${i - 1}`)!);
  });

  it('scales down from the highest ordinal, one at a time', async () => {
    await patchNeoSet(stack, NAME, { spec: { replicas: 1 } });
    await untilStatus(stack, NAME, '1 pod', (n, pods) => pods.length === 1 && n.status?.replicas === 1);
    const { gone } = timeline(NAME);
    expect(gone.get(`${NAME}-2`)!).toBeLessThanOrEqual(gone.get(`${NAME}-1`)!);
    const deletionStarted = stack.observer.podHistory.find((h) => h.pod.metadata.name === `${NAME}-1` && h.pod.metadata.deletionTimestamp)?.seenAt;
    expect(deletionStarted).toBeGreaterThanOrEqual(gone.get(`${NAME}-2`)!);
  });
});

describe('Parallel', () => {
  it('creates all pods at once', async () => {
    const NAME = 'parallel';
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 4, spec: { podManagementPolicy: 'Parallel' } }));
    await untilStatus(stack, NAME, '4 ready', (n) => n.status?.readyReplicas === 4);
    const { firstSeen, firstReady } = timeline(NAME);
    const lastCreated = Math.max(...[0, 1, 2, 3].map((i) => firstSeen.get(`${NAME}-${i}`)!));
    const firstReadyAt = Math.min(...[0, 1, 2, 3].map((i) => firstReady.get(`${NAME}-${i}`)!));
    expect(lastCreated).toBeLessThan(firstReadyAt);
  });
});

describe('PVCs from volumeClaimTemplates', () => {
  it('whenScaled: Delete removes the claims of removed ordinals; whenDeleted: Retain keeps the rest', async () => {
    const NAME = 'store';
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3, spec: { podManagementPolicy: 'Parallel', volumeClaimTemplates: [claim], persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete', whenDeleted: 'Retain' } } }));
    await untilStatus(stack, NAME, '3 ready', (n) => n.status?.readyReplicas === 3);
    expect(await pvcNames(`data-${NAME}-`)).toEqual([`data-${NAME}-0`, `data-${NAME}-1`, `data-${NAME}-2`]);
    const pod0 = stack.observer.pods(NAME)[0];
    expect(pod0.spec.volumes?.some((v) => (v as { persistentVolumeClaim?: { claimName: string } }).persistentVolumeClaim?.claimName === `data-${NAME}-0`)).toBe(true);
    await patchNeoSet(stack, NAME, { spec: { replicas: 1 } });
    await untilStatus(stack, NAME, '1 pod', (n, pods) => pods.length === 1);
    await pollFor(async () => (await pvcNames(`data-${NAME}-`)).join(',') === `data-${NAME}-0`, 'PVCs of ordinals 1, 2 deleted');
    await stack.client.request('DELETE', paths.neoset(stack.namespace, NAME));
    await pollFor(async () => stack.observer.pods(NAME).length === 0, 'pods garbage-collected');
    expect(await pvcNames(`data-${NAME}-`)).toEqual([`data-${NAME}-0`]);
  });

  it('whenDeleted: Delete removes the claims with the NeoSet; whenScaled: Retain keeps them on scale-down', async () => {
    const NAME = 'scratch';
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 2, spec: { podManagementPolicy: 'Parallel', volumeClaimTemplates: [claim], persistentVolumeClaimRetentionPolicy: { whenScaled: 'Retain', whenDeleted: 'Delete' } } }));
    await untilStatus(stack, NAME, '2 ready', (n) => n.status?.readyReplicas === 2);
    await patchNeoSet(stack, NAME, { spec: { replicas: 1 } });
    await untilStatus(stack, NAME, '1 pod', (n, pods) => pods.length === 1);
    expect(await pvcNames(`data-${NAME}-`)).toEqual([`data-${NAME}-0`, `data-${NAME}-1`]);
    await stack.client.request('DELETE', paths.neoset(stack.namespace, NAME));
    await pollFor(async () => (await pvcNames(`data-${NAME}-`)).length === 0, 'PVCs deleted with the NeoSet');
  });
});

describe('time-based waits', () => {
  const state = (p: Pod) => {
    const raw = p.metadata.annotations?.[ANNOTATION_INPLACE_STATE];
    return raw ? (JSON.parse(raw) as { phase: string; drainStartedAt: string; startedAt?: string }) : undefined;
  };

  it('gracePeriodSeconds delays the image patch after the drain; minReadySeconds delays the next pod', async () => {
    const NAME = 'timing';
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 2, spec: { minReadySeconds: 3 }, updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: 2 } } }));
    await untilStatus(stack, NAME, '2 available', (n) => n.status?.availableReplicas === 2, 60_000);
    await setImage(stack, NAME, 'mysql:8.1');
    await untilStatus(stack, NAME, 'both updated', (n, pods) => n.status?.phase === 'Completed' && pods.every((p) => settledOn(p, n.status?.updateRevision)) && n.status?.availableReplicas === 2, 90_000);
    const states = stack.observer.podHistory.filter((h) => h.pod.metadata.name.startsWith(`${NAME}-`)).map((h) => ({ ...h, state: state(h.pod) }));
    for (const i of [0, 1]) {
      const updating = states.find((s) => ordinalOf(s.pod) === i && s.state?.phase === 'Updating')!.state!;
      const graceMs = Date.parse(updating.startedAt!) - Date.parse(updating.drainStartedAt);
      expect(graceMs).toBeGreaterThanOrEqual(2000 - 1000); // RFC 3339 timestamps have 1 s resolution
    }
    // Pod 1 goes first; pod 0's drain starts only after pod 1 has been Ready for minReadySeconds.
    const pod1Ready = states.filter((s) => ordinalOf(s.pod) === 1 && !s.state && isReady(s.pod) && s.pod.spec.containers[0].image === 'mysql:8.1')[0];
    const pod0Drain = states.find((s) => ordinalOf(s.pod) === 0 && s.state?.phase === 'Draining')!;
    const readyAt = Date.parse(pod1Ready.pod.status!.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime!);
    expect(Date.parse(pod0Drain.state!.drainStartedAt) - readyAt).toBeGreaterThanOrEqual(3000 - 1000);
  });
});

describe('invariants', () => {
  it('no invariant was violated', () => {
    expect(stack.observer.violations).toEqual([]);
  });
});
