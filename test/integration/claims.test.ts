// SPEC §2.0 claim before act, on the real API server: a reconcile instance whose NeoSet reads lag
// 0.5–2 s behind (it decides on a stale spec) runs beside a normal one while the user raises the
// partition and pauses mid-rollout. Once a status acknowledges the new partition, no pod below it
// starts an update, and once one acknowledges the pause, no pod at all; and the API server's audit log shows the claim (the NeoSet status
// write) landing before the pod writes of the batch it claims.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_STATE } from '../../shared/api/names.ts';
import type { Pod } from '../../shared/core/objects.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { auditLogPath } from '../cluster/harness.ts';
import { applyNeoSet, ordinalOf, patchNeoSet, setImage, settledOn, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';

const NAME = 'stale';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client whose NeoSet GETs answer 0.5–2 s late: what it returns is that old when it decides. */
function laggingNeoSetReads(client: KubeClient): KubeClient {
  return {
    async request<T>(...args: Parameters<KubeClient['request']>): Promise<T> {
      const [verb, path] = args;
      const answer = await client.request<T>(...args);
      if (verb === 'GET' && /\/neosets\/[^/]+$/.test(path)) await sleep(500 + Math.random() * 1500);
      return answer;
    },
  };
}

/** A pod version that began an update: its state annotation's drainStartedAt was not there before. */
function drainStarts(history: Stack['observer']['podHistory']): { pod: Pod; resourceVersion: number }[] {
  const seen = new Map<string, string>();
  const starts: { pod: Pod; resourceVersion: number }[] = [];
  for (const { pod } of history) {
    const raw = pod.metadata.annotations?.[ANNOTATION_INPLACE_STATE];
    const drain = raw ? (JSON.parse(raw) as { drainStartedAt: string }).drainStartedAt : undefined;
    const key = `${pod.metadata.uid}`;
    if (drain && seen.get(key) !== drain) starts.push({ pod, resourceVersion: Number(pod.metadata.resourceVersion) });
    if (drain) seen.set(key, drain);
    else seen.delete(key);
  }
  return starts;
}

interface AuditEvent {
  verb: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  stageTimestamp: string;
}

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    prefix: 'claims',
    reconcileInstances: 2,
    reconcileClient: (i, client) => (i === 1 ? laggingNeoSetReads(client) : client),
    resyncMs: 500,
  });
});
afterAll(async () => {
  await stack?.stop();
});

describe('a decider holding a stale spec cannot act on it (SPEC §2.0)', () => {
  let partitionRv = 0;
  let ackRv = 0;

  it('raising the partition and pausing mid-rollout: no drain below the new partition, none after the pause is acknowledged', async () => {
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 6, spec: { podManagementPolicy: 'Parallel' }, updateStrategy: { maxUnavailable: 2 } }));
    await untilStatus(stack, NAME, '6 ready', (n) => n.status?.readyReplicas === 6);
    await setImage(stack, NAME, 'mysql:8.1');
    await untilStatus(stack, NAME, 'two pods updated', (n, pods) => pods.filter((p) => settledOn(p, n.status?.updateRevision)).length >= 2);

    await patchNeoSet(stack, NAME, { spec: { updateStrategy: { partition: 3 } } });
    // From the status that acknowledges it on, nothing starts below the partition: claims made
    // before it are released before that status is written (SPEC §2.0).
    const raised = await untilStatus(stack, NAME, 'partition acknowledged', (n) => n.spec.updateStrategy.partition === 3);
    partitionRv = Number(raised.metadata.resourceVersion);
    await sleep(3000); // the lagging instance decides many times on the old partition meanwhile

    await patchNeoSet(stack, NAME, { spec: { updateStrategy: { pause: true } } });
    const acked = await untilStatus(stack, NAME, 'pause acknowledged', (n) => n.spec.updateStrategy.pause && n.status?.phase !== undefined);
    ackRv = Number(acked.metadata.resourceVersion);
    await sleep(4000);

    const starts = drainStarts(stack.observer.podHistory);
    const belowPartition = starts.filter((s) => s.resourceVersion > partitionRv && ordinalOf(s.pod) < 3).map((s) => s.pod.metadata.name);
    const afterPause = starts.filter((s) => s.resourceVersion > ackRv).map((s) => s.pod.metadata.name);
    expect(belowPartition).toEqual([]);
    expect(afterPause).toEqual([]);
    expect(stack.observer.violations).toEqual([]);
  });

  it('the claim lands before the pod writes of the batch it claims (the API server audit log)', async () => {
    const lines = (await readFile(auditLogPath(), 'utf8')).trim().split('\n');
    const events = lines
      .map((l) => JSON.parse(l) as AuditEvent)
      .filter((e) => e.objectRef?.namespace === stack.namespace && (e.responseStatus?.code ?? 0) < 300);
    // The image change, then the first pod write after it: a drain's state annotation (patch pods).
    const imageChange = events.findIndex((e) => e.verb === 'patch' && e.objectRef?.resource === 'neosets' && !e.objectRef.subresource);
    const firstPodWrite = events.findIndex((e, i) => i > imageChange && e.objectRef?.resource === 'pods' && e.verb === 'patch');
    expect(imageChange).toBeGreaterThanOrEqual(0);
    expect(firstPodWrite).toBeGreaterThan(imageChange);
    const between = events.slice(imageChange + 1, firstPodWrite).map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.subresource ?? ''}`);
    expect(between).toContain('patch neosets/status');
    console.log(`audit, image change -> first pod write: ${between.join(', ')} -> patch pods/${events[firstPodWrite].objectRef?.name}`);
  });

  it('resumed with partition 0, the rollout completes', async () => {
    await patchNeoSet(stack, NAME, { spec: { updateStrategy: { pause: false, partition: 0 } } });
    await untilStatus(stack, NAME, 'completed', (n, pods) => n.status?.phase === 'Completed' && pods.length === 6 && pods.every((p) => settledOn(p, n.status?.updateRevision)), 90_000);
    expect(stack.observer.violations).toEqual([]);
    expect(partitionRv).toBeGreaterThan(0);
    expect(ackRv).toBeGreaterThan(partitionRv);
  });
});
