// The scale budget (SPEC §4.12, scaleStrategy.maxUnavailable) on the real API server with the
// simulated kubelet: a Parallel scale 0 -> 10 with budget 3 never has more than 3 created pods not
// Ready at once, as an observer over the pod watch counts them after every event; every observed
// state also goes through the invariant checker, which judges the budget too (SPEC §7).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyNeoSet, isReady, patchNeoSet, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';

let stack: Stack;
beforeAll(async () => {
  // Pods take a while to become Ready, so that an unbounded burst would show.
  stack = await startStack({ prefix: 'scale-budget', readyDelayMs: 700 });
});
afterAll(async () => {
  await stack?.stop();
});

/** The most pods (of `name`, existing, not deleted) not Ready at once, over the watch's events since `since`. */
function mostNotReady(name: string, since: number): { most: number; created: number } {
  const notReady = new Map<string, boolean>();
  let most = 0;
  for (const { seenAt, type, pod } of stack.observer.podHistory) {
    if (seenAt < since || !pod.metadata.name.startsWith(`${name}-`)) continue;
    notReady.set(pod.metadata.uid!, type !== 'DELETED' && !pod.metadata.deletionTimestamp && !isReady(pod));
    most = Math.max(most, [...notReady.values()].filter(Boolean).length);
  }
  return { most, created: notReady.size };
}

describe('a Parallel scale-up with scaleStrategy.maxUnavailable (§4.12)', () => {
  it('0 -> 10 with budget 3: never more than 3 created pods not Ready at once, and all 10 Ready in the end', async () => {
    const NAME = 'budget';
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 0, spec: { podManagementPolicy: 'Parallel', scaleStrategy: { maxUnavailable: 3 } } }));
    await untilStatus(stack, NAME, 'observed, no pods', (n, pods) => n.status?.replicas === 0 && pods.length === 0);
    const since = Date.now();
    await patchNeoSet(stack, NAME, { spec: { replicas: 10 } });
    await untilStatus(stack, NAME, '10 ready', (n) => n.status?.readyReplicas === 10, 90_000);
    const tookMs = Date.now() - since;
    const { most, created } = mostNotReady(NAME, since);
    expect(created).toBe(10);
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBe(3); // the budget is used, not only respected
    expect(stack.observer.violations).toEqual([]);
    console.log(`0 -> 10 with budget 3: at most ${most} pods not Ready at once, ${created} created, all Ready in ${tookMs} ms`);
  });

  it('without a budget the same scale-up has more than 3 not Ready at once (the burst the budget prevents)', async () => {
    const NAME = 'burst';
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 0, spec: { podManagementPolicy: 'Parallel' } }));
    await untilStatus(stack, NAME, 'observed, no pods', (n, pods) => n.status?.replicas === 0 && pods.length === 0);
    const since = Date.now();
    await patchNeoSet(stack, NAME, { spec: { replicas: 10 } });
    await untilStatus(stack, NAME, '10 ready', (n) => n.status?.readyReplicas === 10, 90_000);
    const { most } = mostNotReady(NAME, since);
    expect(most).toBeGreaterThan(3); // 10 when all are created before the first is Ready (the kubelet's 700 ms)
    console.log(`0 -> 10 without a budget: at most ${most} pods not Ready at once`);
  });
});
