// The snapshot reader (shared/k8s/snapshot-reader.ts) and what the applier records for it: the NeoSet
// from etcd, and its children as the watch cache has them, not older than the lists the NeoSet's
// status was decided from (status.observedResourceVersions) — pods not older than the newest Pod the
// events showed either, by a consistent read when the cache is older (never by asking for an event's
// version); a recorded version the API server has not reached falls back to a consistent read.
import { describe, expect, it } from 'vitest';
import { decide } from '../../shared/core/decide.ts';
import { applyPlan } from '../../shared/k8s/apply.ts';
import { ApiError, type KubeClient, type RequestOptions } from '../../shared/k8s/client.ts';
import { reconcileOne } from '../../shared/k8s/reconcile.ts';
import { readSnapshot, readSnapshotCached } from '../../shared/k8s/snapshot-reader.ts';
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

  it('with no record (a status never written by a decision), the NeoSet is the floor: lists from the cache kept when not older, else listed again at it', async () => {
    const { w, sent, client } = await settled();
    w.mutateNeoSet((n) => void delete n.status!.observedResourceVersions);
    await readSnapshot(client, NAMESPACE, w.name);
    expect(lists(sent).map((s) => s.query)).toEqual([q(w, '0'), q(w, '0')]);
    sent.length = 0;
    const snapshot = (await readSnapshot(laggingCache(client), NAMESPACE, w.name))!;
    const version = snapshot.neoset.metadata.resourceVersion!;
    expect(lists(sent).map((s) => s.query)).toEqual([q(w, '0'), q(w, '0'), q(w, version), q(w, version)]);
  });

  // Issue 34, point 1: anyone with `patch neosets/status` writes the record; it must not freeze the NeoSet.
  it.each([
    ['not a version', 'x'],
    ['past uint64 (the API server answers 400)', '99999999999999999999'],
    ['newer than the NeoSet that holds it (the API server would wait ~3 s, then 504)', '9223372036854775807'],
  ])('a record %s is no floor: the NeoSet is', async (_, forged) => {
    const { w, sent, client } = await settled();
    w.mutateNeoSet((n) => void (n.status!.observedResourceVersions = { pods: forged, controllerrevisions: forged }));
    const snapshot = (await readSnapshot(laggingCache(client), NAMESPACE, w.name))!;
    const version = snapshot.neoset.metadata.resourceVersion!;
    expect(snapshot.pods).toHaveLength(3);
    expect(lists(sent).map((s) => s.query)).toEqual([q(w, '0'), q(w, '0'), q(w, version), q(w, version)]);
    // Recorded anew by the next status write: what the API server answered.
    expect(snapshot.listed).toEqual({ pods: w.api.store.resourceVersion, controllerrevisions: w.api.store.resourceVersion });
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

  // 504: not reached after the API server's wait (an etcd restored from a backup); 400: a version it cannot
  // read; 410: compacted away; 500: failing on it. A floor is a hint: a consistent read serves instead.
  it.each([504, 400, 410, 500])('falls back to a consistent list when the API server refuses the floor (%i)', async (status) => {
    const { w, sent, client } = await settled();
    const refusing: KubeClient = {
      request: (verb, path, opts) => {
        const version = opts?.query?.resourceVersion;
        if (path.endsWith('/pods') && version !== undefined && version !== '0') return Promise.reject(new ApiError(verb, path, status, 'Refused', 'refused'));
        return client.request(verb, path, opts);
      },
    };
    const snapshot = (await readSnapshot(laggingCache(refusing), NAMESPACE, w.name))!;
    expect(snapshot.pods).toHaveLength(3);
    // The refused list never reached the API server (`sent` is what did).
    expect(sent.filter((s) => s.path.endsWith('/pods')).map((s) => s.query)).toEqual([q(w, '0'), { labelSelector: selector(w) }]);
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

/** `client`, its watch cache (every GET with a resourceVersion) answering as `cache` does: the cluster as it was when the copy was taken. */
const cachedAs = (client: KubeClient, cache: World, sent: Sent[]): KubeClient => ({
  request: (verb, path, opts) => {
    if (verb !== 'GET' || opts?.query?.resourceVersion === undefined) return client.request(verb, path, opts);
    sent.push({ verb, path, query: opts.query });
    return cache.api.client.request(verb, path, opts);
  },
});

const neosetReads = (sent: Sent[], w: World) => sent.filter((s) => s.path.endsWith(`/neosets/${w.name}`)).map((s) => s.query ?? 'etcd');

describe('readSnapshotCached (the reconcile function\'s: the NeoSet from the watch cache too)', () => {
  it('reads the NeoSet from the watch cache alongside the lists: three reads, none from etcd', async () => {
    const { w, sent, client } = await settled();
    const { snapshot, neosetFromCache } = await readSnapshotCached(client, NAMESPACE, w.name);
    expect(neosetFromCache).toBe(true);
    expect(sent.map((s) => `${s.verb} ${s.path.split('/').at(-1)}`)).toEqual(['GET pods', 'GET controllerrevisions', `GET ${w.name}`]);
    expect(neosetReads(sent, w)).toEqual([{ resourceVersion: '0' }]);
    expect(snapshot!.neoset.metadata.resourceVersion).toBe(w.neoset.metadata.resourceVersion);
  });

  it('a NeoSet the cache does not hold yet (created a moment ago) is read from etcd; one gone from both is null', async () => {
    const { w, sent, client } = await settled();
    const cache = w.fork();
    cache.api.store.remove('neosets', NAMESPACE, w.name);
    const { snapshot, neosetFromCache } = await readSnapshotCached(cachedAs(client, cache, sent), NAMESPACE, w.name);
    expect(neosetFromCache).toBe(false);
    expect(snapshot!.neoset.metadata.uid).toBe(w.neoset.metadata.uid);
    expect(neosetReads(sent, w)).toEqual([{ resourceVersion: '0' }, 'etcd']);
    w.api.store.remove('neosets', NAMESPACE, w.name);
    expect((await readSnapshotCached(cachedAs(client, cache, sent), NAMESPACE, w.name)).snapshot).toBeNull();
  });

  it('a cached NeoSet older than a NeoSet event showed is read from etcd; a forged version costs that read, never a wait for it', async () => {
    const { w, sent, client } = await settled();
    const cache = w.fork();
    const cachedVersion = w.neoset.metadata.resourceVersion!;
    w.mutateNeoSet((n) => void (n.spec.replicas = 4));
    const shown = w.neoset.metadata.resourceVersion!;
    // Not older than what the event showed: the cache's will do.
    expect((await readSnapshotCached(cachedAs(client, cache, sent), NAMESPACE, w.name, undefined, cachedVersion)).neosetFromCache).toBe(true);
    sent.length = 0;
    const newer = await readSnapshotCached(cachedAs(client, cache, sent), NAMESPACE, w.name, undefined, shown);
    expect(newer.neosetFromCache).toBe(false);
    expect(newer.snapshot!.neoset.spec.replicas).toBe(4);
    sent.length = 0;
    const forged = await readSnapshotCached(cachedAs(client, cache, sent), NAMESPACE, w.name, undefined, '99999999');
    expect(forged.snapshot!.neoset.metadata.resourceVersion).toBe(shown);
    // Asked of the cache at "any" and of etcd without a version: '99999999' is never sent.
    expect(neosetReads(sent, w)).toEqual([{ resourceVersion: '0' }, 'etcd']);
  });
});

describe('reconcileOne on a NeoSet from the watch cache', () => {
  it('decides again at once from etcd when the cached NeoSet was older (its claim lost, 409)', async () => {
    const w = new World({ replicas: 3, image: 'nginx:v1' });
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    w.setImage('nginx:v2');
    const cache = w.fork();
    // A write the cache has not shown yet (a user's label), after the template change it has.
    w.mutateNeoSet((n) => void (n.metadata.labels = { ...n.metadata.labels, team: 'db' }));
    const sent: Sent[] = [];
    const client: KubeClient = {
      request: (verb, path, opts) => {
        sent.push({ verb, path, query: opts?.query });
        return w.api.client.request(verb, path, opts);
      },
    };
    const outcome = await reconcileOne(cachedAs(client, cache, sent), { namespace: NAMESPACE, name: w.name }, (s, at) => decide(s, at), { now: () => new Date(w.now) });
    expect(outcome).toMatchObject({ result: 'ok', reread: true });
    expect(outcome.actions[0]).toBe('claim');
    expect(neosetReads(sent, w)).toEqual([{ resourceVersion: '0' }, 'etcd']);
    // One claim written (the second decision's), and the update started from it.
    expect(sent.filter((s) => s.verb === 'PATCH' && /\/neosets\/[^/]+\/status$/.test(s.path)).length).toBe(2);
    expect(w.neoset.metadata.labels?.team).toBe('db');
    expect(w.neoset.status?.currentUpdatePods?.length ?? 0).toBeGreaterThan(0);
  });
});

describe('applyPlan on a NeoSet from the watch cache', () => {
  /** A world whose next decision writes a status and records an Event of its own, with no claim: the rollout completes. */
  async function completing(): Promise<{ w: World; client: KubeClient }> {
    const w = new World({ replicas: 2, image: 'nginx:v1' });
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    w.setImage('nginx:v2');
    for (let i = 0; i < 200 && !w.eventReasons().includes('RolloutCompleted'); i++) {
      const snapshot = (await readSnapshot(w.api.client, NAMESPACE, w.name))!;
      const plan = decide(snapshot, new Date(w.now));
      if (plan.actions.some((a) => a.kind === 'recordEvent' && a.event.reason === 'RolloutCompleted')) return { w, client: w.api.client };
      await applyPlan(w.api.client, snapshot, plan, { now: () => new Date(w.now) });
      w.kubeletSettle();
      w.advance(1);
    }
    throw new Error('the rollout did not come to its completion');
  }

  it("holds the decision's own Events until its NeoSet write lands, and drops them when that write loses", async () => {
    const { w, client } = await completing();
    const snapshot = (await readSnapshot(client, NAMESPACE, w.name))!;
    const plan = decide(snapshot, new Date(w.now));
    expect(plan.claim).toBe(false);
    // Another writer's status write lands first: this decision's NeoSet was not the newest.
    w.mutateNeoSet((n) => void (n.metadata.labels = { ...n.metadata.labels, team: 'db' }));
    const lost = await applyPlan(client, snapshot, plan, { now: () => new Date(w.now), neosetFromCache: true });
    expect(lost).toMatchObject({ outcome: 'conflict', neosetWriteLost: true });
    expect(w.eventReasons()).not.toContain('RolloutCompleted');
    // Decided again on the newest: the status lands, and the Event goes out with it.
    const again = (await readSnapshot(client, NAMESPACE, w.name))!;
    const held = await applyPlan(client, again, decide(again, new Date(w.now)), { now: () => new Date(w.now), neosetFromCache: true });
    expect(held).toMatchObject({ outcome: 'applied', statusWritten: true });
    expect(w.eventReasons()).toContain('RolloutCompleted');
  });
});
