// Update hooks (SPEC §4.10) on the real API server with the simulated kubelet: examples/hooks' flow —
// the hook owner (examples/hooks/owner.ts, behind its hono function) fails the primary over before its
// pod is drained — and a hook owner that never answers. Every observed state goes through the
// invariant checker (SPEC §7).
import { readFileSync } from 'node:fs';
import { HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ANNOTATION_INPLACE_STATE, LABEL_LIFECYCLE_STATE } from '../../shared/api/names.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { lifecycleCloudEvent, lifecyclePod, type LifecycleEvent } from '../../shared/events/lifecycle-sink.ts';
import { createHookApp } from '../../examples/hooks/function.ts';
import { createOwner, ROLE, SERVING } from '../../examples/hooks/owner.ts';
import { neosetManifest, paths, startStack, type Stack } from '../e2e/stack.ts';
import { applyNeoSet, setImage, settledOn, untilStatus } from '../e2e/helpers.ts';

const received: LifecycleEvent[] = [];
let deliver: (e: LifecycleEvent) => Promise<void> = async () => {};
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    prefix: 'hooks',
    sink: async (e) => {
      received.push(e);
      await deliver(e);
    },
  });
});
afterAll(async () => {
  await stack?.stop();
});

const stateOf = (p: Pod) => p.metadata.labels?.[LABEL_LIFECYCLE_STATE];
const inUpdate = (p: Pod) => Boolean(p.metadata.annotations?.[ANNOTATION_INPLACE_STATE]) || (stateOf(p) !== undefined && stateOf(p) !== 'Normal');
const history = (neoset: string, since: number) => stack.observer.podHistory.filter((h) => h.seenAt >= since && h.pod.metadata.labels?.app === neoset);

describe('update hooks (§4.10)', () => {
  it("examples/hooks: the primary is failed over before its pod is drained; every pod Normal -> PreparingUpdate -> Updating -> Updated -> Normal", async () => {
    const example = parseAllDocuments(readFileSync(new URL('../../examples/hooks/neoset.yaml', import.meta.url), 'utf8')).map((d) => d.toJS());
    const neoset = example.find((d) => d.kind === 'NeoSet');
    const owner = createOwner(stack.client, stack.namespace, 'mysql');
    const app = createHookApp(owner);
    // The reconcile function's $K_SINK is the example's function, called as Knative would (binary CloudEvent).
    deliver = async (e) => {
      if (e.neoset !== 'mysql') return;
      const message = HTTP.binary(lifecycleCloudEvent(e));
      const res = await app.request('/', { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string });
      if (res.status >= 300) throw new Error(`hook owner answered ${res.status}: ${await res.text()}`);
    };
    let guarding = true;
    const guardLoop = (async () => {
      while (guarding) {
        await owner.guard().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    try {
      await applyNeoSet(stack, neoset);
      await untilStatus(stack, 'mysql', '3 ready, guarded, a primary', (n, pods) =>
        n.status?.readyReplicas === 3 && pods.length === 3 && pods.every((p) => p.metadata.labels?.[SERVING] === 'true' && stateOf(p) === 'Normal') && pods.some((p) => p.metadata.labels?.[ROLE] === 'primary'));
      const primary = stack.observer.pods('mysql').find((p) => p.metadata.labels?.[ROLE] === 'primary')!.metadata.name;
      const since = Date.now();
      // The image alone (a JSON patch: the example's container keeps its name and ports): in place.
      await stack.client.request('PATCH', paths.neoset(stack.namespace, 'mysql'), { patch: 'json', body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'mysql:8.1' }] });
      await untilStatus(stack, 'mysql', 'updated, every pod Normal and guarded', (n, pods) =>
        n.status?.phase === 'Completed' && pods.length === 3 && pods.every((p) => settledOn(p, n.status?.updateRevision) && stateOf(p) === 'Normal' && p.metadata.labels?.[SERVING] === 'true'), 90_000);

      const seen = history('mysql', since);
      // The primary moved (another pod labelled primary) before its old pod was drained (state annotation).
      const moved = seen.find((h) => h.pod.metadata.name !== primary && h.pod.metadata.labels?.[ROLE] === 'primary');
      const drained = seen.find((h) => h.pod.metadata.name === primary && h.pod.metadata.annotations?.[ANNOTATION_INPLACE_STATE]);
      expect(moved, 'the primary label moved').toBeDefined();
      expect(drained, 'the old primary drained').toBeDefined();
      expect(moved!.seenAt).toBeLessThan(drained!.seenAt);
      expect(Number(moved!.pod.metadata.resourceVersion)).toBeLessThan(Number(drained!.pod.metadata.resourceVersion));
      // Every pod through the four states, in order.
      for (const name of ['mysql-0', 'mysql-1', 'mysql-2']) {
        // In place: the same pod all along.
        expect(new Set(seen.filter((h) => h.pod.metadata.name === name).map((h) => h.pod.metadata.uid)).size, name).toBe(1);
        const states = seen.filter((h) => h.pod.metadata.name === name).map((h) => stateOf(h.pod));
        const path = states.filter((s, i) => i === 0 || s !== states[i - 1]);
        expect(path[0] === 'Normal' ? path.slice(1) : path, name).toEqual(['PreparingUpdate', 'Updating', 'Updated', 'Normal']);
        // ... and the CloudEvents, in the same order.
        expect(received.filter((e) => e.pod.metadata?.name === name).map((e) => e.state), name).toEqual(['PreparingUpdate', 'Updating', 'Updated', 'Normal']);
      }
      // At most maxUnavailable (1) pods in hooks or in an update at any moment.
      const current = new Map<string, boolean>();
      let most = 0;
      for (const h of seen) {
        current.set(h.pod.metadata.name, h.type !== 'DELETED' && inUpdate(h.pod));
        most = Math.max(most, [...current.values()].filter(Boolean).length);
      }
      expect(most).toBe(1);
      expect(stack.observer.violations).toEqual([]);
      console.log(`primary ${primary} moved to ${moved!.pod.metadata.name} ${drained!.seenAt - moved!.seenAt} ms before it was drained; ${received.length} hook events`);
    } finally {
      guarding = false;
      await guardLoop;
    }
  });

  it('a forged PreparingUpdate for the primary\'s pod (Normal): answered 2xx, ignored — no failover, no label changed', async () => {
    const example = parseAllDocuments(readFileSync(new URL('../../examples/hooks/neoset.yaml', import.meta.url), 'utf8')).map((d) => d.toJS());
    const owner = createOwner(stack.client, stack.namespace, 'mysql');
    const lines: string[] = [];
    const app = createHookApp(owner, (line) => lines.push(line));
    // The template the test before left (the image it rolled to): applying it starts no rollout, so
    // nothing but the forged events could move a label while this test watches.
    const neoset = example.find((d) => d.kind === 'NeoSet');
    neoset.spec.template.spec.containers[0].image = 'mysql:8.1';
    await applyNeoSet(stack, neoset);
    await untilStatus(stack, 'mysql', 'no rollout pending', (n) => n.status?.observedGeneration === n.metadata.generation && n.status?.currentRevision === n.status?.updateRevision, 90_000);
    const guardedPods = () => {
      const pods = stack.observer.pods('mysql');
      return pods.length === 3 && pods.every((p) => p.metadata.labels?.[SERVING] === 'true' && stateOf(p) === 'Normal') && pods.some((p) => p.metadata.labels?.[ROLE] === 'primary') && pods;
    };
    for (let i = 0; i < 100 && !guardedPods(); i++) {
      await owner.guard().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 200));
    }
    const before = await stack.observer.until('3 Normal pods, guarded, a primary', guardedPods);
    const primary = before.find((p) => p.metadata.labels?.[ROLE] === 'primary')!;
    const since = Date.now();
    // The pod as read, claiming the state in the event's data too: only the label on the pod counts.
    const forgedPod = structuredClone(primary);
    forgedPod.metadata.labels = { ...forgedPod.metadata.labels, [LABEL_LIFECYCLE_STATE]: 'PreparingUpdate' };
    for (const state of ['PreparingUpdate', 'Updated']) {
      const message = HTTP.binary(lifecycleCloudEvent({ state: state as LifecycleEvent['state'], namespace: stack.namespace, neoset: 'mysql', pod: lifecyclePod(forgedPod, stack.namespace, [SERVING]) }));
      const res = await app.request('/', { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string });
      expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: '' });
    }
    expect.soft(lines).toEqual([
      `${primary.metadata.name}: the event says PreparingUpdate, the pod is Normal: ignored`,
      `${primary.metadata.name}: the event says Updated, the pod is Normal: ignored`,
    ]);
    await new Promise((r) => setTimeout(r, 1000));
    const labels = (pods: Pod[]) => pods.map((p) => [p.metadata.name, p.metadata.labels?.[ROLE] ?? '', p.metadata.labels?.[SERVING] ?? '', stateOf(p)]);
    const after = await stack.client.request<{ items: Pod[] }>('GET', paths.pods(stack.namespace), { query: { labelSelector: 'neoset.neo.io/name=mysql' } });
    expect(labels(after.items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)))).toEqual(labels(before));
    // ... and no state in between: no other pod made primary, no pod's serving label removed.
    const changed = history('mysql', since).filter((h) => (h.pod.metadata.name !== primary.metadata.name && h.pod.metadata.labels?.[ROLE] === 'primary') || h.pod.metadata.labels?.[SERVING] !== 'true');
    expect(changed.map((h) => labels([h.pod])[0])).toEqual([]);
  });

  it('a hook owner that never answers: Failed with HookTimeout naming the pod', async () => {
    const NAME = 'stuck';
    const blocker = { 'owner.example/hold': 'true' };
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 2, spec: { lifecycle: { preUpdate: { labelsHandler: blocker, timeoutSeconds: 3 } } } }));
    await untilStatus(stack, NAME, '2 ready', (n) => n.status?.readyReplicas === 2);
    for (const p of stack.observer.pods(NAME)) {
      await stack.client.request('PATCH', `/api/v1/namespaces/${stack.namespace}/pods/${p.metadata.name}`, { patch: 'merge', body: { metadata: { labels: blocker } } });
    }
    await setImage(stack, NAME, 'mysql:8.1');
    const n = await untilStatus(stack, NAME, 'Failed', (n) => n.status?.phase === 'Failed', 30_000);
    const progressing = n.status?.conditions?.find((c) => c.type === 'Progressing');
    expect(progressing).toMatchObject({ status: 'False', reason: 'HookTimeout' });
    expect(progressing?.message).toContain('pod stuck-1: preUpdate hook not answered within 3s (the pod still carries owner.example/hold=true)');
    // Nothing was drained, and the other pod was not started.
    expect(stack.observer.pods(NAME).map((p) => [p.metadata.name, stateOf(p), Boolean(p.metadata.annotations?.[ANNOTATION_INPLACE_STATE])])).toEqual([
      ['stuck-0', 'Normal', false],
      ['stuck-1', 'PreparingUpdate', false],
    ]);
    expect(stack.observer.violations).toEqual([]);
  });
});
