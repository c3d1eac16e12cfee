// Failure and recovery (SPEC §4.4 timeout, rescue by rollback) and the four update strategies, on the
// real API server with the simulated kubelet; every observed state goes through the invariant checker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';
import { applyNeoSet, identities, imageOf, patchNeoSet, revisionOf, setImage, settledOn, untilEvents, untilStatus } from '../e2e/helpers.ts';
import { paths } from '../../shared/k8s/paths.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const container = (image: string, extra: Record<string, unknown> = {}) => ({ name: 'main', image, readinessProbe: { tcpSocket: { port: 3306 } }, ...extra });
const uids = (s: Stack, name: string) => s.observer.pods(name).map((p) => p.metadata.uid);

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ prefix: 'failure-strategies' });
});
afterAll(async () => {
  await stack?.stop();
});

describe('a crashlooping image', () => {
  const NAME = 'crash';
  it('fails the rollout after timeoutSeconds with at most maxUnavailable pods on the bad image', async () => {
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 4, image: 'mysql:8.0', updateStrategy: { inPlaceUpdateStrategy: { timeoutSeconds: 4 } } }));
    await untilStatus(stack, NAME, '4 ready', (n) => n.status?.readyReplicas === 4);
    await setImage(stack, NAME, 'mysql:8.1-crashloop');
    const n = await untilStatus(stack, NAME, 'phase Failed', (n) => n.status?.phase === 'Failed', 60_000);
    const progressing = n.status?.conditions?.find((c) => c.type === 'Progressing');
    expect(progressing?.status).toBe('False');
    expect(progressing?.reason).toBe('ProgressDeadlineExceeded');
    await sleep(3000); // nothing more happens while Failed
    const bad = stack.observer.pods(NAME).filter((p) => imageOf(p)?.endsWith('-crashloop'));
    expect(bad.length).toBeLessThanOrEqual(1);
    const warnings = await untilEvents(stack, NAME, 'a Warning', (list) => list.some((e) => e.type === 'Warning'));
    expect(warnings.some((e) => e.type === 'Warning')).toBe(true);
  });

  it('rolling back recovers to Completed without any pod deleted by hand', async () => {
    const ids = identities(stack.observer.pods(NAME));
    await setImage(stack, NAME, 'mysql:8.0');
    const n = await untilStatus(stack, NAME, 'recovered', (n, pods) => n.status?.phase === 'Completed' && pods.every((p) => settledOn(p, n.status?.updateRevision)) && n.status?.readyReplicas === 4, 60_000);
    expect(n.status?.currentImage).toBe('mysql:8.0');
    expect(identities(stack.observer.pods(NAME))).toEqual(ids);
  });
});

describe('strategies', () => {
  it('InPlaceIfPossible recreates pods (new UIDs) for a non-image change, within the budget', async () => {
    const NAME = 'ipip';
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3 }));
    await untilStatus(stack, NAME, '3 ready', (n) => n.status?.readyReplicas === 3);
    const before = uids(stack, NAME);
    await patchNeoSet(stack, NAME, { spec: { template: { spec: { containers: [container('mysql:8.0', { env: [{ name: 'MODE', value: 'b' }] })] } } } });
    await untilStatus(stack, NAME, 'recreated', (n, pods) => n.status?.phase === 'Completed' && pods.length === 3 && pods.every((p) => settledOn(p, n.status?.updateRevision)), 60_000);
    const after = uids(stack, NAME);
    expect(after.filter((u) => before.includes(u))).toEqual([]);
  });

  it('InPlaceOnly fails the rollout with a reason that says why', async () => {
    const NAME = 'ipo';
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 2, updateStrategy: { type: 'InPlaceOnly' } }));
    await untilStatus(stack, NAME, '2 ready', (n) => n.status?.readyReplicas === 2);
    const before = uids(stack, NAME);
    await patchNeoSet(stack, NAME, { spec: { template: { spec: { containers: [container('mysql:8.0', { env: [{ name: 'MODE', value: 'b' }] })] } } } });
    const n = await untilStatus(stack, NAME, 'Failed', (n) => n.status?.phase === 'Failed');
    const progressing = n.status?.conditions?.find((c) => c.type === 'Progressing');
    expect(progressing?.status).toBe('False');
    expect(`${progressing?.reason} ${progressing?.message}`).toMatch(/env|in place/i);
    expect(uids(stack, NAME)).toEqual(before);
  });

  it('OnDelete touches nothing until a pod is deleted, which comes back on the update revision', async () => {
    const NAME = 'ondelete';
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3, updateStrategy: { type: 'OnDelete' } }));
    await untilStatus(stack, NAME, '3 ready', (n) => n.status?.readyReplicas === 3);
    const before = uids(stack, NAME);
    await setImage(stack, NAME, 'mysql:8.1');
    await untilStatus(stack, NAME, 'new revision observed', (n) => n.status?.updateRevision !== n.status?.currentRevision);
    await sleep(3000);
    expect(uids(stack, NAME)).toEqual(before);
    expect(stack.observer.pods(NAME).map(imageOf)).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.0']);
    await stack.client.request('DELETE', paths.pod(stack.namespace, `${NAME}-1`));
    const n = await untilStatus(stack, NAME, 'pod 1 back on v2', (n, pods) => pods.length === 3 && pods[1].metadata.uid !== before[1] && settledOn(pods[1], n.status?.updateRevision), 60_000);
    const pods = stack.observer.pods(NAME);
    expect(imageOf(pods[1])).toBe('mysql:8.1');
    expect(revisionOf(pods[1])).toBe(n.status?.updateRevision);
    expect([pods[0].metadata.uid, pods[2].metadata.uid]).toEqual([before[0], before[2]]);
  });

  it('ReCreate deletes and recreates pods within the budget', async () => {
    const NAME = 'recreate';
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3, updateStrategy: { type: 'ReCreate' } }));
    await untilStatus(stack, NAME, '3 ready', (n) => n.status?.readyReplicas === 3);
    const before = uids(stack, NAME);
    await setImage(stack, NAME, 'mysql:8.1');
    await untilStatus(stack, NAME, 'recreated on v2', (n, pods) => n.status?.phase === 'Completed' && pods.length === 3 && pods.every((p) => settledOn(p, n.status?.updateRevision)), 60_000);
    expect(uids(stack, NAME).filter((u) => before.includes(u))).toEqual([]);
    expect(stack.observer.pods(NAME).map(imageOf)).toEqual(['mysql:8.1', 'mysql:8.1', 'mysql:8.1']);
  });

  it('no invariant was violated', () => {
    expect(stack.observer.violations).toEqual([]);
  });
});
