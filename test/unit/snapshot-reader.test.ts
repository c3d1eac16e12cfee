// The snapshot reader (shared/k8s/snapshot-reader.ts) and what the applier records for it: the NeoSet
// from etcd first, then its children as the watch cache has them at the lists the NeoSet's status was
// decided from (status.observedResourceVersions) — pods also at the newest Pod the events showed — or
// later; a version the API server has not reached falls back to a consistent read.
import { describe, expect, it } from 'vitest';
import { decide } from '../../shared/core/decide.ts';
import { applyPlan } from '../../shared/k8s/apply.ts';
import type { KubeClient, RequestOptions } from '../../shared/k8s/client.ts';
import { readSnapshot } from '../../shared/k8s/snapshot-reader.ts';
import { NAMESPACE, World } from './world.ts';

interface Sent {
  verb: string;
  path: string;
  query?: RequestOptions['query'];
}

async function settled(): Promise<{ w: World; sent: Sent[]; client: KubeClient }> {
  const w = new World({ replicas: 3 });
  expect(await w.settle()).toBeGreaterThanOrEqual(0);
  const sent: Sent[] = [];
  const client: KubeClient = {
    request: (verb, path, opts) => {
      sent.push({ verb, path, query: opts?.query });
      return w.api.client.request(verb, path, opts);
    },
  };
  return { w, sent, client };
}

const lists = (sent: Sent[]) => sent.filter((s) => s.verb === 'GET' && /\/(pods|controllerrevisions)$/.test(s.path));
const selector = (w: World) => `neoset.neo.io/name=${w.name}`;

describe('readSnapshot', () => {
  it('reads the NeoSet first; with no recorded lists, lists its pods and revisions not older than the NeoSet', async () => {
    const { w, sent, client } = await settled();
    w.mutateNeoSet((n) => void delete n.status!.observedResourceVersions);
    const snapshot = (await readSnapshot(client, NAMESPACE, w.name))!;
    const version = snapshot.neoset.metadata.resourceVersion;
    expect(sent[0]).toMatchObject({ verb: 'GET', path: `/apis/neo.io/v1alpha1/namespaces/${NAMESPACE}/neosets/${w.name}` });
    expect(sent.slice(1).map((s) => s.path.split('/').at(-1))).toEqual(['pods', 'controllerrevisions']); // no claim templates: no PVC list
    for (const s of sent.slice(1)) expect(s.query).toEqual({ labelSelector: selector(w), resourceVersion: version, resourceVersionMatch: 'NotOlderThan' });
    expect(snapshot.pods.map((p) => p.metadata.name)).toEqual([`${w.name}-0`, `${w.name}-1`, `${w.name}-2`]);
    expect(snapshot.listed).toEqual({ pods: w.api.store.resourceVersion, controllerrevisions: w.api.store.resourceVersion });
  });

  it('the applier records the lists with every status it writes; the next read lists not older than those', async () => {
    const { w, sent, client } = await settled();
    w.mutateNeoSet((n) => void (n.spec.replicas = 4));
    const snapshot = (await readSnapshot(client, NAMESPACE, w.name))!;
    const plan = decide(snapshot, new Date(w.now));
    expect(plan.status).not.toBeNull();
    await applyPlan(client, snapshot, plan, { now: () => new Date(w.now) });
    expect(w.neoset.status?.observedResourceVersions).toEqual(snapshot.listed);
    sent.length = 0;
    await readSnapshot(client, NAMESPACE, w.name);
    expect(lists(sent).map((s) => s.query?.resourceVersion)).toEqual([snapshot.listed!.pods, snapshot.listed!.controllerrevisions]);
    // Older than the NeoSet itself: the status write came after those lists.
    expect(Number(snapshot.listed!.pods)).toBeLessThan(Number(w.neoset.metadata.resourceVersion));
  });

  it('lists pods not older than the newest Pod of the events it answers, when that is newer than the record', async () => {
    const { w, sent, client } = await settled();
    const recorded = w.neoset.status!.observedResourceVersions!.pods!;
    const pod = w.api.store.mutate('pods', NAMESPACE, `${w.name}-1`, (p) => void (p.metadata.labels!.touched = 'yes'))!;
    await readSnapshot(client, NAMESPACE, w.name, pod.metadata.resourceVersion);
    expect(lists(sent).map((s) => s.query?.resourceVersion)).toEqual([pod.metadata.resourceVersion, w.neoset.status!.observedResourceVersions!.controllerrevisions]);
    sent.length = 0;
    await readSnapshot(client, NAMESPACE, w.name, '1'); // older than the record: the record
    expect(lists(sent)[0].query?.resourceVersion).toBe(recorded);
  });

  it('falls back to a consistent list when the API server has not reached the version (504 after its wait)', async () => {
    const { w, sent, client } = await settled();
    const snapshot = (await readSnapshot(client, NAMESPACE, w.name, '99999999'))!;
    expect(snapshot.pods).toHaveLength(3);
    expect(sent.filter((s) => s.path.endsWith('/pods')).map((s) => s.query)).toEqual([
      { labelSelector: selector(w), resourceVersion: '99999999', resourceVersionMatch: 'NotOlderThan' },
      { labelSelector: selector(w) },
    ]);
  });

  it('passes any other refusal on', async () => {
    const { w, client } = await settled();
    w.api.failNext({ verb: 'GET', path: /\/pods$/ }, { status: 500, reason: 'InternalError', message: 'etcd is down' });
    await expect(readSnapshot(client, NAMESPACE, w.name)).rejects.toThrow(/500 InternalError: etcd is down/);
  });
});
