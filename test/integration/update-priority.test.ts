// Update priority (SPEC §4.12) on the real API server with the simulated kubelet: examples/hooks'
// MySQL-like set, its primary at ordinal 1 (as after a failover), replicas first by priorityStrategy;
// the hook owner (examples/hooks/owner.ts behind its hono function) fails the primary over before its
// drain. The order is read from the observed pod history (watch order and resourceVersions); every
// observed state goes through the invariant checker, which judges the priority order too (SPEC §7).
import { readFileSync } from 'node:fs';
import { HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ANNOTATION_INPLACE_STATE, LABEL_LIFECYCLE_STATE } from '../../shared/api/names.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { lifecycleCloudEvent, type LifecycleEvent } from '../../shared/events/lifecycle-sink.ts';
import { createHookApp } from '../../examples/hooks/function.ts';
import { createOwner, guardEvery, ROLE, SERVING } from '../../examples/hooks/owner.ts';
import { paths, startStack, type Stack } from '../e2e/stack.ts';
import { applyNeoSet, isReady, settledOn, untilStatus } from '../e2e/helpers.ts';

const NAME = 'mysql';
let hookApp: ReturnType<typeof createHookApp> | null = null;
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    prefix: 'update-priority',
    // The reconcile function's $K_SINK: the example's function, called as Knative would (binary CloudEvent).
    sink: async (e: LifecycleEvent) => {
      if (e.neoset !== NAME || !hookApp) return;
      const message = HTTP.binary(lifecycleCloudEvent(e));
      const res = await hookApp.request('/', { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string });
      if (res.status >= 300) throw new Error(`hook owner answered ${res.status}: ${await res.text()}`);
    },
  });
});
afterAll(async () => {
  await stack?.stop();
});

const stateOf = (p: Pod) => p.metadata.labels?.[LABEL_LIFECYCLE_STATE];
const rv = (p: Pod) => Number(p.metadata.resourceVersion);

describe('update priority (§4.12) with update hooks (§4.10): examples/hooks', () => {
  it('replicas first, the primary (mysql-1) last: failed over, then drained only after every replica\'s update completed', async () => {
    const example = parseAllDocuments(readFileSync(new URL('../../examples/hooks/neoset.yaml', import.meta.url), 'utf8')).map((d) => d.toJS());
    const neoset = example.find((d) => d.kind === 'NeoSet');
    expect(neoset.spec.updateStrategy.priorityStrategy).toBeDefined();
    await applyNeoSet(stack, neoset);
    await untilStatus(stack, NAME, '3 ready', (n) => n.status?.readyReplicas === 3);
    // The primary where a failover left it: not the highest ordinal, not the lowest.
    await stack.client.request('PATCH', `${paths.pods(stack.namespace)}/${NAME}-1`, { patch: 'merge', body: { metadata: { labels: { [ROLE]: 'primary' } } } });
    const owner = createOwner(stack.client, stack.namespace, NAME);
    hookApp = createHookApp(owner);
    const stopGuarding = guardEvery(owner, 200);
    try {
      await stack.observer.until('3 pods guarded, mysql-1 the primary', () => {
        const pods = stack.observer.pods(NAME);
        return pods.length === 3 && pods.every((p) => p.metadata.labels?.[SERVING] === 'true' && stateOf(p) === 'Normal') && pods.find((p) => p.metadata.labels?.[ROLE] === 'primary')?.metadata.name === `${NAME}-1`;
      });
      const since = Date.now();
      await stack.client.request('PATCH', paths.neoset(stack.namespace, NAME), { patch: 'json', body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'mysql:8.1' }] });
      const done = await untilStatus(stack, NAME, 'updated, every pod Normal and guarded', (n, pods) =>
        n.status?.phase === 'Completed' && pods.length === 3 && pods.every((p) => settledOn(p, n.status?.updateRevision) && stateOf(p) === 'Normal' && p.metadata.labels?.[SERVING] === 'true'), 90_000);
      const update = done.status!.updateRevision!;

      const seen = stack.observer.podHistory.filter((h) => h.seenAt >= since && h.pod.metadata.labels?.app === NAME);
      const first = (name: string, holds: (p: Pod) => boolean) => seen.find((h) => h.pod.metadata.name === name && holds(h.pod));
      const started = (name: string) => first(name, (p) => stateOf(p) === 'PreparingUpdate');
      const order = ['mysql-0', 'mysql-1', 'mysql-2'].map((name) => ({ name, at: started(name)! })).sort((a, b) => rv(a.at.pod) - rv(b.at.pod)).map((s) => s.name);
      // Replicas by priority (ties highest ordinal first), the primary last — not the ordinal order 2, 1, 0.
      expect(order).toEqual(['mysql-2', 'mysql-0', 'mysql-1']);
      const primaryStart = started('mysql-1')!;
      const drained = first('mysql-1', (p) => Boolean(p.metadata.annotations?.[ANNOTATION_INPLACE_STATE]))!;
      const moved = seen.find((h) => h.pod.metadata.name !== 'mysql-1' && h.pod.metadata.labels?.[ROLE] === 'primary');
      expect(moved, 'the primary label moved').toBeDefined();
      // The failover before the old primary's drain.
      expect(rv(moved!.pod)).toBeLessThan(rv(drained.pod));
      expect(moved!.seenAt).toBeLessThanOrEqual(drained.seenAt);
      const lines: string[] = [];
      for (const replica of ['mysql-2', 'mysql-0']) {
        // A replica's update completed: on the update revision, Ready, no state, Normal again after its hooks.
        const completed = seen.find((h) => h.pod.metadata.name === replica && rv(h.pod) > rv(started(replica)!.pod) && settledOn(h.pod, update) && isReady(h.pod) && stateOf(h.pod) === 'Normal');
        expect(completed, `${replica} completed`).toBeDefined();
        expect(rv(completed!.pod), `${replica} completed before the primary's update started`).toBeLessThan(rv(primaryStart.pod));
        expect(completed!.seenAt).toBeLessThanOrEqual(drained.seenAt);
        lines.push(`${replica} completed ${drained.seenAt - completed!.seenAt} ms before`);
      }
      expect(stack.observer.violations).toEqual([]);
      console.log(`starts ${order.join(', ')}; primary moved to ${moved!.pod.metadata.name} ${drained.seenAt - moved!.seenAt} ms before mysql-1's drain; ${lines.join(', ')}`);
    } finally {
      await stopGuarding();
    }
  });

  it('kubectl explain documents priorityStrategy and scaleStrategy from the CRD', async () => {
    const priority = await stack.kubectl(['explain', 'neosets.spec.updateStrategy.priorityStrategy']);
    expect(priority.code, priority.stderr).toBe(0);
    const oneLine = (text: string) => text.replace(/\s+/g, ' ');
    expect(oneLine(priority.stdout)).toContain('higher priority first, ties highest ordinal first. The partition keeps its meaning');
    expect(priority.stdout).toMatch(/orderPriority\s+<\[\]Object>/);
    const budget = await stack.kubectl(['explain', 'neosets.spec.scaleStrategy.maxUnavailable']);
    expect(budget.code, budget.stderr).toBe(0);
    expect(oneLine(budget.stdout)).toContain('Parallel only: at most this many pods 0..replicas-1 not Running and Ready at once');
    console.log(`${priority.stdout}\n${budget.stdout}`);
  });
});
