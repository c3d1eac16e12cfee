// The snapshot reader (shared/k8s/snapshot-reader.ts) and what the applier records for it: the NeoSet
// from etcd, and its children as the watch cache has them, not older than the lists the NeoSet's
// status was decided from (status.observedResourceVersions) — pods not older than the newest Pod the
// events showed either, by a consistent read when the cache is older (never by asking for an event's
// version); a recorded version the API server has not reached falls back to a consistent read.
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

/** The first list of each kind (from the watch cache: resourceVersion 0) answers as of version 2. */
const laggingCache = (client: KubeClient): KubeClient => ({
  request: async (verb, path, opts) => {
    const r = (await client.request(verb, path, opts)) as { metadata?: { resourceVersion?: string } };
    if (opts?.query?.resourceVersion === '0') r.metadata = { resourceVersion: '2' };
    return r as never;
  },
});

const lists = (sent: Sent[]) => sent.filter((s) => s.verb === 'GET' && /\/(pods|controllerrevisions)$/.test(s.path));
const selector = (w: World) => `neoset.neo.io/name=${w.name}`;

const q = (w: World, resourceVersion: string) => ({ labelSelector: selector(w), resourceVersion, resourceVersionMatch: 'NotOlderThan' });

describe('readSnapshot', () => {
  it('lists pods and revisions as the cache has them while it reads the NeoSet, and keeps them when not older than its record', async () => {
    const { w, sent, client } = await settled();
    const recorded = w.neoset.status!.observedResourceVersions!;
    expect(recorded.pods).toMatch(/^[1-9][0-9]*$/);
    const snapshot = (await readSnapshot(client, NAMESPACE, w.name))!;
    expect(sent.map((s) => `${s.verb} ${s.path.split('/').at(-1)}`)).toEqual(['GET pods', 'GET controllerrevisions', `GET ${w.name}`]); // no claim templates: no PVC list
    expect(lists(sent).map((s) => s.query)).toEqual([q(w, '0'), q(w, '0')]);
    expect(snapshot.pods.map((p) => p.metadata.name)).toEqual([`${w.name}-0`, `${w.name}-1`, `${w.name}-2`]);
    expect(snapshot.listed).toEqual({ pods: w.api.store.resourceVersion, controllerrevisions: w.api.store.resourceVersion });
  });

  it('lists again, not older than the record, a list older than it (another API server, whose cache lags)', async () => {
    const { w, sent, client } = await settled();
    const ahead = String(Number(w.api.store.resourceVersion) + 1);
    w.mutateNeoSet((n) => void (n.status!.observedResourceVersions = { pods: ahead, controllerrevisions: '1' }));
    w.api.store.mutate('pods', NAMESPACE, `${w.name}-1`, (p) => void (p.metadata.labels!.touched = 'yes')); // the store reaches `ahead`
    const snapshot = (await readSnapshot(laggingCache(client), NAMESPACE, w.name))!;
    expect(lists(sent).map((s) => s.query)).toEqual([q(w, '0'), q(w, '0'), q(w, ahead)]);
    expect(snapshot.listed).toEqual({ pods: w.api.store.resourceVersion, controllerrevisions: '2' });
  });

  it('with no record (a status never written by a decision), lists again not older than the NeoSet', async () => {
    const { w, sent, client } = await settled();
    w.mutateNeoSet((n) => void delete n.status!.observedResourceVersions);
    const snapshot = (await readSnapshot(client, NAMESPACE, w.name))!;
    const version = snapshot.neoset.metadata.resourceVersion!;
    expect(lists(sent).map((s) => s.query)).toEqual([q(w, '0'), q(w, '0'), q(w, version), q(w, version)]);
  });

  it('the applier records the lists with every status it writes', async () => {
    const { w, client } = await settled();
    w.mutateNeoSet((n) => void (n.spec.replicas = 4));
    const snapshot = (await readSnapshot(client, NAMESPACE, w.name))!;
    const plan = decide(snapshot, new Date(w.now));
    expect(plan.status).not.toBeNull();
    await applyPlan(client, snapshot, plan, { now: () => new Date(w.now) });
    expect(w.neoset.status?.observedResourceVersions).toEqual(snapshot.listed);
    // Older than the NeoSet itself: the status write came after those lists.
    expect(Number(snapshot.listed!.pods)).toBeLessThan(Number(w.neoset.metadata.resourceVersion));
  });

  it('keeps the cached pod list when it is not older than the newest Pod of the events it answers', async () => {
    const { w, sent, client } = await settled();
    const pod = w.api.store.mutate('pods', NAMESPACE, `${w.name}-1`, (p) => void (p.metadata.labels!.touched = 'yes'))!;
    const snapshot = (await readSnapshot(client, NAMESPACE, w.name, pod.metadata.resourceVersion))!;
    expect(lists(sent).map((s) => s.query)).toEqual([q(w, '0'), q(w, '0')]);
    expect(snapshot.pods.find((p) => p.metadata.name === `${w.name}-1`)?.metadata.labels?.touched).toBe('yes');
  });

  it('lists pods consistently when the cache is older than the newest Pod of the events (another API server, whose cache lags)', async () => {
    const { w, sent, client } = await settled();
    const pod = w.api.store.mutate('pods', NAMESPACE, `${w.name}-1`, (p) => void (p.metadata.labels!.touched = 'yes'))!;
    const lagging: KubeClient = {
      request: async (verb, path, opts) => {
        const r = (await client.request(verb, path, opts)) as { metadata?: { resourceVersion?: string }; items?: { metadata: { labels?: Record<string, string> } }[] };
        // The cache's pod list is as of before the event's Pod.
        if (opts?.query?.resourceVersion === '0' && path.endsWith('/pods')) {
          r.metadata = { resourceVersion: String(Number(pod.metadata.resourceVersion) - 1) };
          for (const p of r.items ?? []) delete p.metadata.labels?.touched;
        }
        return r as never;
      },
    };
    const snapshot = (await readSnapshot(lagging, NAMESPACE, w.name, pod.metadata.resourceVersion))!;
    expect(lists(sent).map((s) => s.query)).toEqual([q(w, '0'), q(w, '0'), { labelSelector: selector(w) }]);
    expect(snapshot.pods.find((p) => p.metadata.name === `${w.name}-1`)?.metadata.labels?.touched).toBe('yes');
  });

  it('never asks for a version from an event (anyone may forge 99999999, which the API server waits ~3 s for): a consistent list', async () => {
    const { w, sent, client } = await settled();
    const snapshot = (await readSnapshot(client, NAMESPACE, w.name, '99999999'))!;
    expect(snapshot.pods).toHaveLength(3);
    expect(sent.filter((s) => s.path.endsWith('/pods')).map((s) => s.query)).toEqual([q(w, '0'), { labelSelector: selector(w) }]);
    // What is recorded is what the API server answered, never the event's claim.
    expect(snapshot.listed?.pods).toBe(w.api.store.resourceVersion);
  });

  it('falls back to a consistent list when the API server has not reached the recorded version (504 after its wait)', async () => {
    const { w, sent, client } = await settled();
    w.mutateNeoSet((n) => void (n.status!.observedResourceVersions = { pods: '99999999', controllerrevisions: '1' }));
    const snapshot = (await readSnapshot(laggingCache(client), NAMESPACE, w.name))!;
    expect(snapshot.pods).toHaveLength(3);
    expect(sent.filter((s) => s.path.endsWith('/pods')).map((s) => s.query)).toEqual([q(w, '0'), q(w, '99999999'), { labelSelector: selector(w) }]);
  });

  it('a pod list failing while the NeoSet GET is in flight is no unhandled rejection (issue 19: it ended the process); the read fails with it', async () => {
    const { w, client } = await settled();
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      w.api.failNext({ verb: 'GET', path: /\/pods$/ }, { status: 500, reason: 'InternalError', message: 'etcd is down' });
      const slowNeoSet: KubeClient = {
        request: async (verb, path, opts) => {
          if (path.endsWith(`/neosets/${w.name}`)) await new Promise((r) => setTimeout(r, 50));
          return client.request(verb, path, opts);
        },
      };
      await expect(readSnapshot(slowNeoSet, NAMESPACE, w.name)).rejects.toThrow(/500 InternalError: etcd is down/);
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });

  it('passes any other refusal on', async () => {
    const { w, client } = await settled();
    w.api.failNext({ verb: 'GET', path: /\/pods$/ }, { status: 500, reason: 'InternalError', message: 'etcd is down' });
    await expect(readSnapshot(client, NAMESPACE, w.name)).rejects.toThrow(/500 InternalError: etcd is down/);
  });

  it('a NeoSet that is gone: null, whatever the lists started alongside answer', async () => {
    const { w, client } = await settled();
    w.api.failNext({ verb: 'GET', path: /\/pods$/ }, { status: 500, reason: 'InternalError', message: 'etcd is down' });
    w.api.store.remove('neosets', NAMESPACE, w.name);
    expect(await readSnapshot(client, NAMESPACE, w.name)).toBeNull();
  });
});
