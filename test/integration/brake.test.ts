// The brake always works (issue 34, point 2; SPEC §2.5), on the real API server: with the admission
// webhooks of knative/admission-webhooks.yaml registered (failurePolicy Fail) and nothing answering
// them — admission scaled to zero, crashed or saturated — `kubectl neoset rollout pause` stops a
// rollout, resume lets it finish, a partition moved by hand and a scale-down pass, and a canary is
// aborted, retried and promoted. What admission enforced for those fields the CRD enforces itself
// (OpenAPI bounds and CEL from the zod schema); everything else still waits for admission.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../dev/cluster/ports.ts';
import { createCa } from '../../dev/cluster/certs.ts';
import { ANNOTATION_INPLACE_STATE } from '../../shared/api/names.ts';
import { kubeconfigPath, kubectl as adminKubectl, run } from '../cluster/harness.ts';
import { testWebhookConfigurations } from '../cluster/webhooks.ts';
import { applyNeoSet, imageOf, setImage, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, paths, startStack, type Stack } from '../e2e/stack.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin');
const WEBHOOK_DOWN = 'failed calling webhook';
const ROLLING = 'rolling';
const CANARY = 'steps';
const BIG = 'big';

let stack: Stack;
let configName: string;

/** `kubectl neoset …` as a user runs it: the real kubectl finds the plugin on PATH. */
const plugin = (args: string[]) =>
  run('kubectl', ['neoset', ...args, '-n', stack.namespace], { env: { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH}`, KUBECONFIG: kubeconfigPath() } });
const patch = (name: string, body: unknown) => stack.kubectl(['patch', 'neoset', name, '--type=merge', '-p', JSON.stringify(body)]);
const drainsIn = (history: Stack['observer']['podHistory']) => {
  // A pod entering its update: the state annotation appears on a pod that had none.
  const had = new Map<string, boolean>();
  const entered: { pod: string; seenAt: number }[] = [];
  for (const { pod, seenAt } of history) {
    const now = Boolean(pod.metadata.annotations?.[ANNOTATION_INPLACE_STATE]);
    if (now && had.get(pod.metadata.name) === false) entered.push({ pod: pod.metadata.name, seenAt });
    had.set(pod.metadata.name, now);
  }
  return entered;
};

beforeAll(async () => {
  stack = await startStack({ prefix: 'brake' });
  // 3 s out of endpoints before each image patch: one pod at a time, a rollout of 6 takes 20 s or more.
  const slow = { maxUnavailable: 1, inPlaceUpdateStrategy: { gracePeriodSeconds: 3 } };
  await applyNeoSet(stack, neosetManifest({ name: ROLLING, replicas: 6, updateStrategy: slow }));
  await applyNeoSet(stack, neosetManifest({ name: CANARY, replicas: 2, updateStrategy: { canary: { steps: [{ partition: 1 }, { pause: {} }] } } }));
  const big = neosetManifest({ name: BIG, replicas: 0 }) as { spec: { template: { metadata: { annotations?: Record<string, string> }; spec: { containers: { env?: unknown[] }[] } } } };
  big.spec.template.spec.containers[0]!.env = Array.from({ length: 1000 }, (_, i) => ({ name: `V${i}`, value: 'x'.repeat(1000) }));
  big.spec.template.metadata.annotations = { big: 'y'.repeat(200_000) };
  await stack.client.request('POST', paths.neosets(stack.namespace), { body: big });
  await untilStatus(stack, ROLLING, '6 ready pods', (n, pods) => n.status?.readyReplicas === 6 && pods.length === 6);
  await untilStatus(stack, CANARY, '2 ready pods', (n, pods) => n.status?.readyReplicas === 2 && pods.length === 2);
  // Rollouts started while admission is up; it goes down under them.
  await setImage(stack, ROLLING, 'mysql:8.1');
  await setImage(stack, CANARY, 'mysql:8.1');
  await untilStatus(stack, CANARY, 'the canary at its pause step', (n) => n.status?.canary?.stepIndex === 1, 30_000);
  // Admission down: the manifest's webhooks, registered for this namespace, at a port nobody listens on.
  const [port] = await freePorts(1);
  configName = `neoset-brake-${stack.namespace}`;
  const ca = await createCa('neoset-brake-ca');
  const registered = await adminKubectl(['apply', '-f', '-'], {
    input: await testWebhookConfigurations({ name: configName, baseUrl: `https://127.0.0.1:${port}`, caPem: ca.certPem, namespace: stack.namespace }),
  });
  expect(registered.code, registered.stderr).toBe(0);
  // The API server picks configurations up asynchronously: until a template change meets them.
  const probe = JSON.stringify({ spec: { template: { metadata: { labels: { probe: 'x' } } } } });
  const deadline = Date.now() + 30_000;
  while (!(await stack.kubectl(['patch', 'neoset', CANARY, '--dry-run=server', '--type=merge', '-p', probe])).stderr.includes(WEBHOOK_DOWN)) {
    if (Date.now() > deadline) throw new Error('the webhooks were not active after 30 s');
    await new Promise((r) => setTimeout(r, 250));
  }
});

afterAll(async () => {
  if (configName) await adminKubectl(['delete', 'mutatingwebhookconfiguration,validatingwebhookconfiguration', configName, '--ignore-not-found']);
  await stack?.stop();
});

describe('with admission down', () => {
  it('pause is accepted mid-rollout and no update starts after it; resume lets the rollout finish', async () => {
    const rolling = stack.observer.pods(ROLLING).filter((p) => imageOf(p) === 'mysql:8.1').length;
    expect(rolling, 'the rollout is still in flight').toBeLessThan(6);
    const paused = await plugin(['rollout', 'pause', ROLLING]);
    const pausedAt = Date.now();
    console.log(JSON.stringify({ 'kubectl neoset rollout pause': paused.code, stdout: paused.stdout.trim(), stderr: paused.stderr.trim() }));
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain('paused');
    await untilStatus(stack, ROLLING, 'phase Paused, the in-flight update done', (n, pods) => n.status?.phase === 'Paused' && pods.every((p) => !p.metadata.annotations?.[ANNOTATION_INPLACE_STATE]), 30_000);
    // Another pod would have entered its drain within 3 s + a restart; wait three times that.
    await new Promise((r) => setTimeout(r, 12_000));
    const history = stack.observer.podHistory.filter((h) => h.pod.metadata.labels?.['neoset.neo.io/name'] === ROLLING);
    // Seen within a second of the pause's answer: started before it landed (the observer's watch lags).
    const drains = drainsIn(history);
    const after = drains.filter((d) => d.seenAt > pausedAt + 1000);
    const updated = stack.observer.pods(ROLLING).filter((p) => imageOf(p) === 'mysql:8.1').length;
    console.log(JSON.stringify({ 'updates started before the pause landed': drains.length - after.length, 'pods on the new image 12 s after': updated, 'updates started after the pause': after }));
    expect(after).toEqual([]);
    expect(updated).toBeLessThan(6);

    const resumed = await plugin(['rollout', 'resume', ROLLING]);
    expect(resumed.code, resumed.stderr).toBe(0);
    await untilStatus(stack, ROLLING, 'the rollout completed', (n, pods) => n.status?.updatedReplicas === 6 && pods.every((p) => imageOf(p) === 'mysql:8.1'), 90_000);
    expect(stack.observer.violations).toEqual([]);
  });

  it('a partition moved by hand and a scale-down pass; on the scale subresource too', async () => {
    expect((await patch(ROLLING, { spec: { updateStrategy: { partition: 2, maxUnavailable: '50%' } } })).code).toBe(0);
    const down = await stack.kubectl(['scale', 'neoset', ROLLING, '--replicas=5']);
    expect(down.code, down.stderr).toBe(0);
    const patched = await patch(ROLLING, { spec: { replicas: 4 } });
    expect(patched.code, patched.stderr).toBe(0);
  });

  it('pause passes for a NeoSet of 1.2 MB (the match condition compares its spec whole: within its CEL cost)', async () => {
    const r = await plugin(['rollout', 'pause', BIG]);
    expect(r.code, r.stderr).toBe(0);
  });

  it("a canary's abort, retry and promote pass (status writes)", async () => {
    for (const command of ['abort', 'retry']) {
      const r = await plugin(['rollout', command, CANARY]);
      console.log(JSON.stringify({ [`kubectl neoset rollout ${command}`]: r.code, stdout: r.stdout.trim() }));
      expect(r.code, r.stderr).toBe(0);
    }
    await untilStatus(stack, CANARY, 'the retried canary at its pause step', (n) => n.status?.canary?.stepIndex === 1 && !n.status.canary.abort, 30_000);
    const promoted = await plugin(['rollout', 'promote', CANARY]);
    expect(promoted.code, promoted.stderr).toBe(0);
    await untilStatus(stack, CANARY, 'the canary promoted to the end', (n) => n.status?.updatedReplicas === 2, 30_000);
  });

  it.each([
    ['partition -1', { updateStrategy: { partition: -1 } }, 'spec.updateStrategy.partition'],
    ['maxUnavailable 0', { updateStrategy: { maxUnavailable: 0 } }, 'spec.updateStrategy.maxUnavailable'],
    ['maxUnavailable "0%"', { updateStrategy: { maxUnavailable: '0%' } }, 'spec.updateStrategy.maxUnavailable'],
    ['maxUnavailable "150%"', { updateStrategy: { maxUnavailable: '150%' } }, 'spec.updateStrategy.maxUnavailable'],
    ['maxUnavailable "2.5%"', { updateStrategy: { maxUnavailable: '2.5%' } }, 'spec.updateStrategy.maxUnavailable'],
    ['pause "yes"', { updateStrategy: { pause: 'yes' } }, 'spec.updateStrategy.pause'],
  ])('what admission refused there the CRD refuses itself: %s', async (_, spec, field) => {
    const r = await patch(ROLLING, { spec });
    console.log(JSON.stringify({ refused: r.stderr.trim() }));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(field);
    expect(r.stderr).not.toContain(WEBHOOK_DOWN);
  });

  it.each([
    ['a template change', ['patch', 'neoset', ROLLING, '--type=merge', '-p', JSON.stringify({ spec: { template: { spec: { containers: [{ name: 'main', image: 'mysql:8.2' }] } } } })]],
    ['a replicas raise', ['patch', 'neoset', ROLLING, '--type=merge', '-p', JSON.stringify({ spec: { replicas: 7 } })]],
    ['a replicas raise on the scale subresource', ['scale', 'neoset', ROLLING, '--replicas=7']],
    ['a new field (canary steps)', ['patch', 'neoset', ROLLING, '--type=merge', '-p', JSON.stringify({ spec: { updateStrategy: { canary: { steps: [{ partition: 1 }] } } } })]],
    ['a changed minReadySeconds', ['patch', 'neoset', ROLLING, '--type=merge', '-p', JSON.stringify({ spec: { minReadySeconds: 5 } })]],
    ['a data-format acknowledgement', ['annotate', 'neoset', ROLLING, 'neoset.neo.io/data-format-downgrade=2->1']],
  ])('everything else still waits for admission: %s is refused', async (_, args) => {
    const r = await stack.kubectl(args);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(WEBHOOK_DOWN);
  });

  it('undo writes a template: it waits for admission (what it restores cannot be proven admitted by a match condition)', async () => {
    const r = await plugin(['rollout', 'undo', ROLLING]);
    console.log(JSON.stringify({ 'kubectl neoset rollout undo': r.code, stderr: r.stderr.trim() }));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(WEBHOOK_DOWN);
  });
});
