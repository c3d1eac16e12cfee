// The seeds' walkthrough as a reusable scenario: 5 replicas on v1, canary of pod 4, pause, batch of
// pods 3 and 2, completion. Run once plainly and once with many instances and duplicated, shuffled
// events; every observed state goes through the invariant checker (SPEC §7).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, neosetManifest, type Stack } from './stack.ts';
import { apiRequestsTotal, applyNeoSet, identities, imageOf, restartsOf, runningImageOf, setImage, setStrategy, settledOn, untilEvents, untilStatus } from './helpers.ts';

export const NAME = 'mysql';

export function walkthrough(label: string, stackOptions: Partial<Parameters<typeof startStack>[0]>, after?: (stack: () => Stack) => void) {
  describe(label, () => {
    let stack: Stack;
    let requestsAtStart = 0;
    beforeAll(async () => {
      stack = await startStack({ prefix: `walk-${label}`, ...stackOptions });
      requestsAtStart = await apiRequestsTotal();
    });
    afterAll(async () => {
      await stack?.stop();
    });

    it('a 5-replica NeoSet on v1 becomes 5 Ready pods', async () => {
      await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 5, image: 'mysql:8.0' }));
      const n = await untilStatus(stack, NAME, '5 ready pods', (n, pods) => n.status?.readyReplicas === 5 && pods.length === 5);
      expect(n.status?.phase).toBe('Idle');
      expect(n.status?.currentImage).toBe('mysql:8.0');
      expect(n.status?.currentRevision).toBe(n.status?.updateRevision);
    });

    it('v2 with partition 4 updates only pod 4, in place (Canary)', async () => {
      const before = stack.observer.pods(NAME);
      const ids = identities(before);
      const restarts = restartsOf(before[4]);
      await setImage(stack, NAME, 'mysql:8.1', { partition: 4 });
      const n = await untilStatus(stack, NAME, 'pod 4 updated', (n, pods) => n.status?.updatedReplicas === 1 && settledOn(pods[4], n.status?.updateRevision) && n.status?.readyReplicas === 5);
      const pods = stack.observer.pods(NAME);
      expect(n.status?.phase).toBe('Canary');
      expect(n.status?.targetImage).toBe('mysql:8.1');
      expect(identities(pods)).toEqual(ids); // same UID, podIP and node for every pod
      expect(restartsOf(pods[4])).toBe(restarts + 1);
      expect(runningImageOf(pods[4])).toMatch(/mysql:8\.1$/);
      expect(pods.slice(0, 4).map(imageOf)).toEqual(Array(4).fill('mysql:8.0'));
    });

    it('pause, then partition 2 and resume: pods 3 and 2 are updated, within maxUnavailable', async () => {
      await setStrategy(stack, NAME, { pause: true });
      await untilStatus(stack, NAME, 'phase Paused', (n) => n.status?.phase === 'Paused');
      await setStrategy(stack, NAME, { partition: 2 });
      const paused = await untilStatus(stack, NAME, 'partition 2 observed while paused', (n) => n.spec.updateStrategy.partition === 2);
      expect(paused.status?.updatedReplicas).toBe(1); // pause starts nothing new
      await setStrategy(stack, NAME, { pause: false });
      const n = await untilStatus(stack, NAME, 'pods 3 and 2 updated', (n, pods) => n.status?.updatedReplicas === 3 && pods.slice(2).every((p) => settledOn(p, n.status?.updateRevision)));
      expect(n.status?.phase).toBe('Canary');
      expect(stack.observer.pods(NAME).slice(0, 2).map(imageOf)).toEqual(['mysql:8.0', 'mysql:8.0']);
    });

    it('partition 0 completes the rollout: currentRevision == updateRevision, phase Completed', async () => {
      await setStrategy(stack, NAME, { partition: 0 });
      const n = await untilStatus(stack, NAME, 'rollout complete', (n) => n.status?.phase === 'Completed' && n.status?.updatedReplicas === 5 && n.status?.readyReplicas === 5);
      expect(n.status?.currentRevision).toBe(n.status?.updateRevision);
      expect(n.status?.currentImage).toBe('mysql:8.1');
      expect(stack.observer.pods(NAME).map(imageOf)).toEqual(Array(5).fill('mysql:8.1'));
      console.log(`[walkthrough ${label}] API requests by the functions for the 5-replica walkthrough: ${(await apiRequestsTotal()) - requestsAtStart}`);
    });

    it('kubectl describe neo shows the rollout as Events', async () => {
      await untilEvents(stack, NAME, 'an Event naming mysql-4', (list) => list.some((e) => e.message.includes('mysql-4')));
      const r = await stack.kubectl(['describe', 'neo', NAME]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Events:/);
      expect(r.stdout).toMatch(/mysql-4/);
    });

    it('no invariant was violated in any observed state', () => {
      expect(stack.observer.checks).toBeGreaterThan(20);
      expect(stack.observer.violations).toEqual([]);
    });

    after?.(() => stack);
  });
}

