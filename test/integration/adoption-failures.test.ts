// What the StatefulSet controller does with names already taken, and refusals that show (issue:
// "AlreadyExists stalls silently", "write failures are invisible"), on the real API server:
//   - `kubectl delete neo --cascade=orphan` then re-apply: the pods and revisions are adopted;
//   - a pod of that name that cannot be adopted: a Warning Event and the ReplicaFailure condition;
//   - a ResourceQuota that forbids a pod: FailedCreate with the refusal's code and reason in
//     `kubectl describe neo` (SPEC §2.5: not the API server's message), and the invocation's log
//     line has the message and lists the writes made before it.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../shared/k8s/paths.ts';
import { applyNeoSet, settledOn, untilEvents, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';

const logLines: Record<string, unknown>[] = [];
const logSink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n')) if (line.trim()) logLines.push(JSON.parse(line));
    done();
  },
});

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ prefix: 'adoption', logger: pino({ level: 'info' }, logSink), resyncMs: 1000 });
});
afterAll(async () => {
  await stack?.stop();
});

const uidsOf = (name: string) => stack.observer.pods(name).map((p) => p.metadata.uid).sort();

describe('orphans are adopted (SPEC §4.1)', () => {
  const NAME = 'orphans';
  it('kubectl delete --cascade=orphan, then re-apply: the same pods (UIDs) carry on under the new NeoSet', async () => {
    const manifest = neosetManifest({ name: NAME, replicas: 3 });
    await applyNeoSet(stack, manifest);
    await untilStatus(stack, NAME, '3 ready', (n) => n.status?.readyReplicas === 3);
    const before = uidsOf(NAME);
    const t0 = Date.now();
    const del = await stack.kubectl(['delete', 'neo', NAME, '--cascade=orphan', '--wait=false']);
    expect(del.code).toBe(0);
    console.log(`deleted in ${Date.now() - t0} ms`);
    // The garbage collector takes the ownerReferences off the pods, then lets the NeoSet go.
    await stack.observer.until('orphaned', () => stack.observer.pods(NAME).every((p) => !p.metadata.ownerReferences?.length) && !stack.observer.neoset(NAME), 30_000);
    console.log(`orphaned in ${Date.now() - t0} ms`);
    await applyNeoSet(stack, manifest);
    const n = await untilStatus(
      stack,
      NAME,
      'adopted',
      (n, pods) => pods.length === 3 && pods.every((p) => p.metadata.ownerReferences?.some((r) => r.controller && r.uid === n.metadata.uid)) && n.status?.readyReplicas === 3,
    );
    expect(uidsOf(NAME)).toEqual(before);
    const revisions = await stack.client.request<{ items: { metadata: { ownerReferences?: { uid: string; controller?: boolean }[] } }[] }>('GET', paths.revisions(stack.namespace), {
      query: { labelSelector: `neoset.neo.io/name=${NAME}` },
    });
    expect(revisions.items.length).toBeGreaterThan(0);
    expect(revisions.items.every((r) => r.metadata.ownerReferences?.some((o) => o.controller && o.uid === n.metadata.uid))).toBe(true);
    // One Event per reason for a plan's writes (aggregated), naming every adopted pod.
    const adoptedAll = (list: { reason: string; message: string }[]) => {
      const adopted = list.filter((e) => e.reason === 'SuccessfulAdopt').map((e) => e.message).join('; ');
      return [0, 1, 2].every((i) => adopted.includes(`adopted orphan Pod ${NAME}-${i}`));
    };
    expect(adoptedAll(await untilEvents(stack, NAME, 'SuccessfulAdopt naming all three pods', adoptedAll))).toBe(true);
    expect(stack.observer.pods(NAME).every((p) => settledOn(p, n.status?.updateRevision))).toBe(true);
  });
});

describe('a name that cannot be adopted is reported, not retried in silence', () => {
  const NAME = 'taken';
  it('a pod named taken-1 that the NeoSet does not select: a Warning Event and ReplicaFailure within one reconcile', async () => {
    // Someone else's pod with the name ordinal 1 would have (no labels the selector wants).
    const r = await stack.kubectl(['run', `${NAME}-1`, '--image=busybox', '--restart=Never', '--labels=app=someone-else']);
    expect(r.code).toBe(0);
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 2, spec: { podManagementPolicy: 'Parallel' } }));
    const n = await stack.observer.until(
      'ReplicaFailure',
      () => stack.observer.neoset(NAME)?.status?.conditions?.find((c) => c.type === 'ReplicaFailure'),
      15_000,
    );
    expect(n).toMatchObject({ status: 'True', reason: 'FailedCreate' });
    expect(n.message).toContain(`Pod ${NAME}-1 already exists and cannot be adopted`);
    const isWarning = (e: { type: string; reason: string }) => e.type === 'Warning' && e.reason === 'FailedCreate';
    const warning = (await untilEvents(stack, NAME, 'Warning FailedCreate', (list) => list.some(isWarning))).find(isWarning);
    expect(warning?.message).toContain(`${NAME}-1`);
    const describe = await stack.kubectl(['describe', 'neo', NAME]);
    expect(describe.stdout).toMatch(/Warning\s+FailedCreate/);
  });
});

describe('a ResourceQuota that forbids a pod', () => {
  const NAME = 'quota';
  it('kubectl describe neo shows FailedCreate with the refusal\'s code and reason; the log line has the API server message and lists the writes before it', async () => {
    const quota = {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'three-pods' },
      spec: { hard: { pods: '3' } },
    };
    // Start from an empty namespace of pods: remove the earlier scenarios.
    await stack.kubectl(['delete', 'neo', '--all', '--wait=true']);
    await stack.kubectl(['delete', 'pod', '--all', '--wait=true']);
    expect((await stack.kubectl(['apply', '-f', '-'], JSON.stringify(quota))).code).toBe(0);
    await waitForQuotaStatus();
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 4, spec: { podManagementPolicy: 'Parallel' } }));
    const failure = await stack.observer.until(
      'ReplicaFailure',
      () => stack.observer.neoset(NAME)?.status?.conditions?.find((c) => c.type === 'ReplicaFailure'),
      20_000,
    );
    expect(failure.reason).toBe('FailedCreate');
    // The Status's code and reason, not its message (SPEC §2.5: it may name what the NeoSet's readers
    // may not read); the reconcile log line below keeps the API server's words for the operator.
    expect(failure.message).toMatch(/^create Pod \S+: 403 Forbidden$/);
    await untilEvents(stack, NAME, 'Warning FailedCreate', (list) => list.some((e) => e.type === 'Warning' && e.reason === 'FailedCreate'));
    const describe = await stack.kubectl(['describe', 'neo', NAME]);
    expect(describe.stdout).toMatch(/Warning\s+FailedCreate\s+.*create Pod \S+: 403 Forbidden/);
    // The invocation logs its line once its writes are done, which may be after the status was seen.
    const line = await stack.observer.until('the log line of the refused reconcile', () => logLines.find((l) => JSON.stringify(l).includes('exceeded quota')), 10_000);
    const outcome = (line?.neosets as { result: string; actions: string[] }[] | undefined)?.find((o) => o.result === 'failed');
    expect(outcome?.actions).toEqual(expect.arrayContaining(['claim', 'createRevision', 'createPod']));
    console.log(`log line of the refused reconcile: ${JSON.stringify(outcome)}`);
    expect(stack.observer.pods(NAME).length).toBeLessThan(4); // the quota's usage may still count earlier pods
  });
});

async function waitForQuotaStatus(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const q = await stack.client.request<{ status?: { hard?: Record<string, string> } }>('GET', `/api/v1/namespaces/${stack.namespace}/resourcequotas/three-pods`);
    if (q.status?.hard?.pods) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the resourcequota controller never filled the quota status');
}
