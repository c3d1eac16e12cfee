// The memory API's semantics, request by request. What it shares with kube-apiserver is checked
// against the real one by test/integration/memory-api-contract.test.ts; here, everything it does.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NeoSet } from '../../shared/api/neoset.ts';
import { decide } from '../../shared/core/decide.ts';
import { applyPlan } from '../../shared/k8s/apply.ts';
import { ApiError, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { readSnapshot } from '../../shared/k8s/snapshot-reader.ts';
import { CrashError, createMemoryApi, type KubeObject } from './index.ts';
import { parseLabelSelector } from './selector.ts';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const NS = 'default';

const podBody = (name: string, more: { labels?: Record<string, string>; nodeName?: string; ownerUid?: string } = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    labels: more.labels ?? { app: 'web' },
    ...(more.ownerUid ? { ownerReferences: [{ apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'web', uid: more.ownerUid, controller: true }] } : {}),
  },
  spec: {
    containers: [{ name: 'app', image: 'nginx:1.0', ports: [{ containerPort: 80 }] }, { name: 'side', image: 'busybox:1' }],
    readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
    ...(more.nodeName ? { nodeName: more.nodeName } : {}),
  },
});

const neosetBody = (name = 'web') =>
  NeoSet.parse({
    apiVersion: 'neo.io/v1alpha1',
    kind: 'NeoSet',
    metadata: { name, namespace: NS },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx:1.0' }] } },
    },
  });

function setup(now = T0) {
  let clock = now;
  const api = createMemoryApi({ now: () => clock });
  const req = <T = KubeObject>(verb: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, opts?: Parameters<KubeClient['request']>[2]) =>
    api.client.request<T>(verb, path, opts);
  return { api, req, advance: (s: number) => (clock += s * 1000) };
}

/** The ApiError a request rejects with. */
async function failure(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('the request succeeded');
}

const conflictOn = (resource: string, name: string) =>
  `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`;

describe('store', () => {
  it('bumps one global resourceVersion on every change, and not on a no-op', () => {
    const { api } = setup();
    const a = api.store.put('pods', podBody('a') as KubeObject);
    const b = api.store.put<KubeObject>('controllerrevisions', { metadata: { name: 'r', namespace: NS }, revision: 1 });
    expect([a.metadata.resourceVersion, b.metadata.resourceVersion]).toEqual(['1', '2']);
    expect(a.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.metadata.creationTimestamp).toBe('2025-01-01T00:00:00Z');
    expect(api.store.put('pods', a).metadata.resourceVersion).toBe('1');
    const changed = api.store.mutate('pods', NS, 'a', (p) => {
      p.metadata.labels = { app: 'other' };
    });
    expect(changed?.metadata.resourceVersion).toBe('3');
    expect(api.store.remove('pods', NS, 'a')).toBe(true);
    expect(api.store.resourceVersion).toBe('4');
    expect(api.store.remove('pods', NS, 'a')).toBe(false);
    expect(api.store.mutate('pods', NS, 'a', () => {})).toBeUndefined();
  });

  it('hands out copies: changing what get returned changes nothing stored', () => {
    const { api } = setup();
    api.store.put('pods', podBody('a') as KubeObject);
    api.store.get('pods', NS, 'a')!.metadata.labels = { changed: 'yes' };
    expect(api.store.get('pods', NS, 'a')!.metadata.labels).toEqual({ app: 'web' });
  });

  it('fork is an independent deep copy, counters included', async () => {
    const { api, req } = setup();
    await req('POST', paths.pods(NS), { body: podBody('a') });
    const earlier = api.fork();
    await req('PATCH', paths.pod(NS, 'a'), { patch: 'merge', body: { metadata: { labels: { v: '2' } } } });
    expect(earlier.store.get('pods', NS, 'a')!.metadata.labels).toEqual({ app: 'web' });
    expect(earlier.store.resourceVersion).toBe('1');
    const forked = await earlier.client.request<KubeObject>('POST', paths.pods(NS), { body: podBody('b') });
    expect(forked.metadata.resourceVersion).toBe('2');
    expect(api.store.get('pods', NS, 'b')).toBeUndefined();
  });
});

describe('create, read, conflict', () => {
  it('POST sets uid, resourceVersion, creationTimestamp, generation 1 and a Pending status', async () => {
    const { req } = setup();
    const pod = await req('POST', paths.pods(NS), { body: { ...podBody('a'), status: { phase: 'Running' } } });
    expect(pod.metadata).toMatchObject({ name: 'a', namespace: NS, resourceVersion: '1', generation: 1, creationTimestamp: '2025-01-01T00:00:00Z' });
    expect(pod.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
    const neoset = await req('POST', paths.neosets(NS), { body: { ...neosetBody(), status: { phase: 'Failed' } } });
    expect(neoset.metadata.generation).toBe(1);
    expect(neoset.status).toBeUndefined();
  });

  it('a second POST of the name is 409 AlreadyExists; a missing object is 404 NotFound', async () => {
    const { req } = setup();
    await req('POST', paths.pods(NS), { body: podBody('a') });
    const again = await failure(req('POST', paths.pods(NS), { body: podBody('a') }));
    expect([again.status, again.reason]).toEqual([409, 'AlreadyExists']);
    expect(again.message).toContain('pods "a" already exists');
    for (const verb of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const missing = await failure(req(verb, paths.pod(NS, 'x'), verb === 'GET' || verb === 'DELETE' ? undefined : { body: { metadata: { name: 'x' } } }));
      expect([missing.status, missing.reason, missing.verb]).toEqual([404, 'NotFound', verb]);
      expect(missing.message).toContain('pods "x" not found');
    }
    const set = await failure(req('GET', paths.neoset(NS, 'x')));
    expect(set.message).toContain('neosets.neo.io "x" not found');
  });

  it('a write with a stale resourceVersion is 409 Conflict, even when it would change nothing', async () => {
    const { req } = setup();
    const created = await req('POST', paths.pods(NS), { body: podBody('a') });
    const stale = created.metadata.resourceVersion;
    const fresh = await req('PATCH', paths.pod(NS, 'a'), { patch: 'merge', body: { metadata: { resourceVersion: stale, labels: { v: '1' } } } });
    expect(Number(fresh.metadata.resourceVersion)).toBeGreaterThan(Number(stale));
    for (const patch of ['merge', 'strategic'] as const) {
      const lost = await failure(req('PATCH', paths.pod(NS, 'a'), { patch, body: { metadata: { resourceVersion: stale, labels: { v: '1' } } } }));
      expect([lost.status, lost.reason]).toEqual([409, 'Conflict']);
      expect(lost.message).toContain(conflictOn('pods', 'a'));
    }
    const put = await failure(req('PUT', paths.pod(NS, 'a'), { body: created }));
    expect(put.isConflict).toBe(true);
    // The same change at the current version is a no-op: same resourceVersion, same object.
    const noop = await req('PATCH', paths.pod(NS, 'a'), { patch: 'merge', body: { metadata: { resourceVersion: fresh.metadata.resourceVersion, labels: { v: '1' } } } });
    expect(noop).toEqual(fresh);
  });

  it('lists by label selector, with the list resourceVersion; cluster-wide lists cross namespaces', async () => {
    const { api, req } = setup();
    for (const [name, labels] of [['a', { app: 'web', tier: 'x' }], ['b', { app: 'web' }], ['c', { app: 'db', tier: 'y' }]] as const) {
      await req('POST', paths.pods(NS), { body: podBody(name, { labels }) });
    }
    const names = async (labelSelector?: string) =>
      (await req<{ items: KubeObject[] }>('GET', paths.pods(NS), { query: { labelSelector } })).items.map((p) => p.metadata.name);
    expect(await names()).toEqual(['a', 'b', 'c']);
    expect(await names('app=web')).toEqual(['a', 'b']);
    expect(await names('app==db')).toEqual(['c']);
    expect(await names('tier!=x')).toEqual(['b', 'c']);
    expect(await names('tier')).toEqual(['a', 'c']);
    expect(await names('!tier')).toEqual(['b']);
    expect(await names('tier in (x, z)')).toEqual(['a']);
    expect(await names('tier notin (x),app')).toEqual(['b', 'c']);
    expect(await names('app in (web,db),tier notin (y)')).toEqual(['a', 'b']);
    expect((await failure(req('GET', paths.pods(NS), { query: { labelSelector: 'a b c' } }))).status).toBe(400);
    expect((await req<{ metadata: { resourceVersion: string } }>('GET', paths.pods(NS))).metadata.resourceVersion).toBe(api.store.resourceVersion);
    await req('POST', paths.neosets('one'), { body: { ...neosetBody('x'), metadata: { name: 'x' } } });
    await req('POST', paths.neosets('two'), { body: { ...neosetBody('y'), metadata: { name: 'y' } } });
    const all = await req<{ items: KubeObject[] }>('GET', paths.neosets());
    expect(all.items.map((s) => `${s.metadata.namespace}/${s.metadata.name}`)).toEqual(['one/x', 'two/y']);
    await req('POST', paths.pods('other'), { body: podBody('z') });
    const pods = await req<{ items: KubeObject[] }>('GET', '/api/v1/pods', { query: { labelSelector: 'app=web' } });
    expect(pods.items.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)).toEqual(['default/a', 'default/b', 'other/z']);
  });

  it('parses every selector form into requirements', () => {
    expect(parseLabelSelector('a=1,b==2,c!=3,d,!e,f in (1, 2),g notin (3)').matchExpressions).toEqual([
      { key: 'a', operator: 'In', values: ['1'] },
      { key: 'b', operator: 'In', values: ['2'] },
      { key: 'c', operator: 'NotIn', values: ['3'] },
      { key: 'd', operator: 'Exists' },
      { key: 'e', operator: 'DoesNotExist' },
      { key: 'f', operator: 'In', values: ['1', '2'] },
      { key: 'g', operator: 'NotIn', values: ['3'] },
    ]);
  });

  it('stores Events for tests to read', async () => {
    const { api, req } = setup();
    await req('POST', paths.events(NS), { body: { metadata: { name: 'web.1' }, type: 'Warning', reason: 'Stuck', message: 'no progress' } });
    expect(api.store.list('events', NS).map((e) => [e.type, e.reason, e.message])).toEqual([['Warning', 'Stuck', 'no progress']]);
  });
});

describe('patches', () => {
  it('merge patch: objects merge, null removes, lists replace', async () => {
    const { req } = setup();
    await req('POST', paths.pods(NS), { body: podBody('a', { labels: { app: 'web', tier: 'x' } }) });
    const p = await req('PATCH', paths.pod(NS, 'a'), { patch: 'merge', body: { metadata: { labels: { tier: null, v: '2' }, annotations: { n: '1' } } } });
    expect(p.metadata.labels).toEqual({ app: 'web', v: '2' });
    expect(p.metadata.annotations).toEqual({ n: '1' });
  });

  it('strategic: containers merge by name, ownerReferences by uid, $patch: delete removes one', async () => {
    const { req } = setup();
    await req('POST', paths.pods(NS), { body: podBody('a', { ownerUid: 'u1' }) });
    const p = await req('PATCH', paths.pod(NS, 'a'), {
      patch: 'strategic',
      body: {
        metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u2' }] },
        spec: { containers: [{ name: 'side', image: 'busybox:2' }] },
      },
    });
    expect((p.spec as { containers: unknown[] }).containers).toEqual([
      { name: 'app', image: 'nginx:1.0', ports: [{ containerPort: 80 }] },
      { name: 'side', image: 'busybox:2' },
    ]);
    expect(p.metadata.ownerReferences!.map((r) => r.uid)).toEqual(['u2', 'u1']);
    expect(p.metadata.generation).toBe(2);
    const q = await req('PATCH', paths.pod(NS, 'a'), { patch: 'strategic', body: { metadata: { ownerReferences: [{ uid: 'u2', $patch: 'delete' }] } } });
    expect(q.metadata.ownerReferences!.map((r) => r.uid)).toEqual(['u1']);
  });

  it('strategic on pods/status: conditions merge by type (a new type goes first), containerStatuses replace', async () => {
    const { req } = setup();
    await req('POST', paths.pods(NS), { body: podBody('a') });
    const patch = (status: unknown) => req('PATCH', paths.podStatus(NS, 'a'), { patch: 'strategic', body: { status } });
    await patch({ conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: [{ name: 'app', ready: false, started: false }] });
    await patch({ conditions: [{ type: 'InPlaceUpdateReady', status: 'True' }] });
    const p = await patch({ conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'app', ready: true }] });
    const status = p.status as { conditions: { type: string; status: string }[]; containerStatuses: Record<string, unknown>[] };
    expect(status.conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['InPlaceUpdateReady=True', 'Ready=True']);
    // As the Go types serialize them (the contract test saw it): unset times are null, a container status complete.
    expect(status.conditions[0]).toMatchObject({ lastProbeTime: null, lastTransitionTime: null });
    expect(status.containerStatuses).toEqual([{ name: 'app', ready: true, image: '', imageID: '', restartCount: 0, state: {}, lastState: {} }]);
  });

  it('strategic merge patch of a NeoSet is 415, as for every custom resource', async () => {
    const { req } = setup();
    await req('POST', paths.neosets(NS), { body: neosetBody() });
    const e = await failure(req('PATCH', paths.neoset(NS, 'web'), { patch: 'strategic', body: { spec: { replicas: 3 } } }));
    expect([e.status, e.reason]).toEqual([415, 'UnsupportedMediaType']);
  });

  it('json patch: add, remove, replace, move, copy, test; a failed test is 422 Invalid and changes nothing', async () => {
    const { api, req } = setup();
    const created = await req('POST', paths.pods(NS), { body: podBody('a') });
    const p = await req('PATCH', paths.pod(NS, 'a'), {
      patch: 'json',
      body: [
        { op: 'test', path: '/metadata/resourceVersion', value: created.metadata.resourceVersion },
        { op: 'add', path: '/metadata/annotations', value: { 'a~b/c': '1' } },
        { op: 'copy', from: '/metadata/annotations/a~0b~1c', path: '/metadata/labels/copied' },
        { op: 'move', from: '/metadata/labels/copied', path: '/metadata/labels/moved' },
        { op: 'remove', path: '/metadata/labels/app' },
        { op: 'replace', path: '/spec/containers/1/image', value: 'busybox:2' },
      ],
    });
    expect(p.metadata.labels).toEqual({ moved: '1' });
    expect(p.metadata.annotations).toEqual({ 'a~b/c': '1' });
    expect((p.spec as { containers: { image: string }[] }).containers[1].image).toBe('busybox:2');
    const before = api.store.resourceVersion;
    for (const body of [
      [{ op: 'test', path: '/metadata/labels/moved', value: '2' }, { op: 'remove', path: '/metadata/labels' }],
      [{ op: 'remove', path: '/metadata/labels/nothing' }],
      [{ op: 'replace', path: '/spec/missing', value: 1 }],
    ]) {
      const e = await failure(req('PATCH', paths.pod(NS, 'a'), { patch: 'json', body }));
      expect([e.status, e.reason, e.message]).toEqual([422, 'Invalid', expect.stringContaining('the server rejected our request due to an error in our request')]);
    }
    expect(api.store.resourceVersion).toBe(before);
  });
});

describe('subresources, generation, validation', () => {
  it('pods: the main resource ignores .status, pods/status ignores .spec and ownerReferences', async () => {
    const { req } = setup();
    const created = await req('POST', paths.pods(NS), { body: podBody('a', { ownerUid: 'u1' }) });
    const main = await req('PATCH', paths.pod(NS, 'a'), { patch: 'merge', body: { status: { phase: 'Failed' } } });
    expect(main).toEqual(created);
    const status = await req('PUT', paths.podStatus(NS, 'a'), {
      body: { ...created, metadata: { ...created.metadata, ownerReferences: [] }, spec: { containers: [] }, status: { phase: 'Running' } },
    });
    expect(status.spec).toEqual(created.spec);
    expect(status.metadata.ownerReferences).toEqual(created.metadata.ownerReferences);
    expect((status.status as { phase: string }).phase).toBe('Running');
    expect(status.metadata.generation).toBe(1);
  });

  it('neosets/status PUT writes only .status; a stale one is 409, an identical one no write', async () => {
    const { req } = setup();
    const created = await req('POST', paths.neosets(NS), { body: neosetBody() });
    const put = (body: KubeObject) => req('PUT', paths.neosetStatus(NS, 'web'), { body });
    const written = await put({ ...created, metadata: { ...created.metadata, labels: { x: 'y' } }, spec: { replicas: 9 }, status: { phase: 'RollingOut' } });
    expect(written.status).toEqual({ phase: 'RollingOut' });
    expect(written.spec).toEqual(created.spec);
    expect(written.metadata.labels).toBeUndefined();
    expect(written.metadata.generation).toBe(1);
    expect(await put({ ...written })).toEqual(written);
    const stale = await failure(put({ ...created, status: { phase: 'Paused' } }));
    expect([stale.status, stale.reason, stale.message]).toEqual([409, 'Conflict', expect.stringContaining(conflictOn('neosets.neo.io', 'web'))]);
    // The main resource: .status ignored, a spec change bumps generation, a label change does not.
    const spec = await req('PATCH', paths.neoset(NS, 'web'), { patch: 'merge', body: { spec: { replicas: 3 }, status: { phase: 'Failed' } } });
    expect([spec.metadata.generation, spec.status]).toEqual([2, { phase: 'RollingOut' }]);
    const label = await req('PATCH', paths.neoset(NS, 'web'), { patch: 'merge', body: { metadata: { labels: { a: 'b' } } } });
    expect(label.metadata.generation).toBe(2);
    const unconditional = await failure(req('PUT', paths.neoset(NS, 'web'), { body: { ...label, metadata: { ...label.metadata, resourceVersion: undefined } } }));
    expect([unconditional.status, unconditional.message]).toEqual([422, expect.stringContaining('metadata.resourceVersion: Invalid value: 0: must be specified for an update')]);
  });

  it('a pod update may change images and metadata only; anything else in spec is 422 naming the field', async () => {
    const { req } = setup();
    await req('POST', paths.pods(NS), { body: podBody('a') });
    const image = await req('PATCH', paths.pod(NS, 'a'), { patch: 'strategic', body: { spec: { containers: [{ name: 'app', image: 'nginx:1.1' }] } } });
    expect(image.metadata.generation).toBe(2);
    for (const spec of [{ readinessGates: [] }, { containers: [{ name: 'app', image: 'nginx:1.1', ports: [{ containerPort: 81 }] }, { name: 'side', image: 'busybox:1' }] }]) {
      const e = await failure(req('PATCH', paths.pod(NS, 'a'), { patch: 'merge', body: { spec } }));
      expect([e.status, e.reason]).toEqual([422, 'Invalid']);
      expect(e.message).toContain('Pod "a" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`');
      expect(e.message).toContain(Object.hasOwn(spec, 'readinessGates') ? 'spec.readinessGates' : 'spec.containers[0].ports');
    }
    const empty = await failure(req('PATCH', paths.pod(NS, 'a'), { patch: 'strategic', body: { spec: { containers: [{ name: 'app', image: '' }] } } }));
    expect(empty.message).toContain('spec.containers[0].image: Required value');
  });
});

describe('delete and garbage collection', () => {
  it('DELETE preconditions: a wrong uid or resourceVersion is 409 Conflict', async () => {
    const { req } = setup();
    const created = await req('POST', paths.pods(NS), { body: podBody('a') });
    const del = (preconditions: unknown) => req('DELETE', paths.pod(NS, 'a'), { body: { preconditions } });
    const uid = await failure(del({ uid: 'other', resourceVersion: created.metadata.resourceVersion }));
    expect([uid.status, uid.reason, uid.message]).toEqual([409, 'Conflict', expect.stringContaining(`Operation cannot be fulfilled on Pod "a": the UID in the precondition (other)`)]);
    const rv = await failure(del({ uid: created.metadata.uid, resourceVersion: '999' }));
    expect(rv.message).toContain('the ResourceVersion in the precondition (999) does not match the ResourceVersion in record (1)');
  });

  it('an unscheduled pod and other kinds go at once; a scheduled pod terminates until the kubelet removes it', async () => {
    const { api, req, advance } = setup();
    await req('POST', paths.pods(NS), { body: podBody('pending') });
    await req('DELETE', paths.pod(NS, 'pending'));
    expect(api.store.get('pods', NS, 'pending')).toBeUndefined();

    await req('POST', paths.pods(NS), { body: podBody('scheduled', { nodeName: 'node-1' }) });
    const terminating = await req('DELETE', paths.pod(NS, 'scheduled'));
    expect(terminating.metadata).toMatchObject({ deletionTimestamp: '2025-01-01T00:00:30Z', deletionGracePeriodSeconds: 30, generation: 2 });
    advance(5);
    expect(await req('DELETE', paths.pod(NS, 'scheduled'))).toEqual(terminating);
    const shorter = await req('DELETE', paths.pod(NS, 'scheduled'), { body: { gracePeriodSeconds: 10 } });
    expect(shorter.metadata).toMatchObject({ deletionTimestamp: '2025-01-01T00:00:15Z', deletionGracePeriodSeconds: 10 });
    expect(api.store.remove('pods', NS, 'scheduled')).toBe(true);

    await req('POST', paths.revisions(NS), { body: { metadata: { name: 'r' }, revision: 1 } });
    const status = await req<{ status: string }>('DELETE', paths.revision(NS, 'r'));
    expect(status.status).toBe('Success');
    expect(api.store.list('controllerrevisions')).toEqual([]);
  });

  it('a finalizer holds a deleted object, terminating, until an update removes the last one', async () => {
    const { api, req } = setup();
    await req('POST', paths.pvcs(NS), { body: { metadata: { name: 'data', finalizers: ['kubernetes.io/pvc-protection'] }, spec: {} } });
    const held = await req('DELETE', paths.pvc(NS, 'data'));
    expect(held.metadata).toMatchObject({ deletionTimestamp: '2025-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 });
    expect(await req('DELETE', paths.pvc(NS, 'data'))).toEqual(held);
    await req('PATCH', paths.pvc(NS, 'data'), { patch: 'merge', body: { metadata: { finalizers: null } } });
    expect(api.store.get('persistentvolumeclaims', NS, 'data')).toBeUndefined();
  });

  it('collectGarbage deletes what every owner of is gone, in cascade, pods gracefully', async () => {
    const { api, req } = setup();
    const set = await req('POST', paths.neosets(NS), { body: neosetBody() });
    await req('POST', paths.pods(NS), { body: podBody('web-0', { ownerUid: set.metadata.uid!, nodeName: 'node-1' }) });
    const pod1 = await req('POST', paths.pods(NS), { body: podBody('web-1', { ownerUid: set.metadata.uid! }) });
    const owned = (name: string, uids: string[]) => ({
      metadata: { name, ownerReferences: uids.map((uid) => ({ apiVersion: 'v1', kind: 'Pod', name: 'x', uid })) },
      spec: {},
    });
    await req('POST', paths.pvcs(NS), { body: owned('data-web-1', [pod1.metadata.uid!]) });
    await req('POST', paths.pvcs(NS), { body: owned('shared', [pod1.metadata.uid!, set.metadata.uid!]) });
    await req('POST', paths.pvcs(NS), { body: owned('orphaned-already', ['gone']) });
    expect(api.collectGarbage()).toEqual([{ resource: 'persistentvolumeclaims', namespace: NS, name: 'orphaned-already' }]);

    await req('DELETE', paths.neoset(NS, 'web'));
    const collected = api.collectGarbage().map((c) => c.name);
    expect(collected.sort()).toEqual(['data-web-1', 'shared', 'web-0', 'web-1']);
    // web-0 was scheduled: it terminates, and its kubelet removes it.
    expect(api.store.get('pods', NS, 'web-0')!.metadata.deletionTimestamp).toBeDefined();
    expect(api.store.list('persistentvolumeclaims')).toEqual([]);
    expect(api.collectGarbage()).toEqual([]);
  });
});

describe('fault injection', () => {
  it('failNext answers matching requests with the given failure, `times` times', async () => {
    const { api, req } = setup();
    api.failNext({ verb: 'POST', path: /\/pods$/ }, { status: 503, reason: 'ServiceUnavailable', message: 'etcd is down' }, 2);
    await req('POST', paths.neosets(NS), { body: neosetBody() });
    for (let i = 0; i < 2; i++) {
      const e = await failure(req('POST', paths.pods(NS), { body: podBody('a') }));
      expect([e.status, e.isTransient, e.message]).toEqual([503, true, 'POST /api/v1/namespaces/default/pods: 503 ServiceUnavailable: etcd is down']);
    }
    await req('POST', paths.pods(NS), { body: podBody('a') });
    expect(api.requests).toEqual({ GET: 0, POST: 4, PUT: 0, PATCH: 0, DELETE: 0 });
    api.resetRequests();
    expect(api.requests.POST).toBe(0);
  });

  it('setPodQuota refuses a pod beyond n live ones with the quota message; finished or expired ones do not count', async () => {
    const { api, req, advance } = setup();
    api.setPodQuota(2, 'q');
    await req('POST', paths.pods(NS), { body: podBody('a', { nodeName: 'n' }) });
    await req('POST', paths.pods(NS), { body: podBody('b') });
    const e = await failure(req('POST', paths.pods(NS), { body: podBody('c') }));
    expect([e.status, e.reason]).toEqual([403, 'Forbidden']);
    expect(e.message).toContain('pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2');
    api.store.mutate('pods', NS, 'b', (p) => {
      p.status = { phase: 'Failed' };
    });
    await req('POST', paths.pods(NS), { body: podBody('c') });
    await req('DELETE', paths.pod(NS, 'a'));
    expect((await failure(req('POST', paths.pods(NS), { body: podBody('d') }))).status).toBe(403);
    advance(61); // past deletionTimestamp + grace: the quota stops counting a pod stuck terminating
    await req('POST', paths.pods(NS), { body: podBody('d') });
    api.setPodQuota(null);
    await req('POST', paths.pods(NS), { body: podBody('e') });
  });

  it('crashAfterWrites: n writes go through, then every request rejects with CrashError until reset', async () => {
    const { api, req } = setup();
    api.crashAfterWrites(2);
    await req('POST', paths.pods(NS), { body: podBody('a') });
    await req('GET', paths.pod(NS, 'a'));
    await failure(req('POST', paths.pods(NS), { body: podBody('a') })); // a 409 is no successful write
    await req('POST', paths.pods(NS), { body: podBody('b') });
    await expect(req('GET', paths.pod(NS, 'a'))).rejects.toBeInstanceOf(CrashError);
    await expect(req('POST', paths.pods(NS), { body: podBody('c') })).rejects.toThrow(/crashed before POST/);
    expect(api.requests).toEqual({ GET: 1, POST: 3, PUT: 0, PATCH: 0, DELETE: 0 });
    api.crashAfterWrites(null);
    await req('POST', paths.pods(NS), { body: podBody('c') });
  });
});

describe('driving the real applier', () => {
  it('readSnapshot, decide and applyPlan create the pods and write the status', async () => {
    const { api } = setup();
    await api.client.request('POST', paths.neosets(NS), { body: neosetBody() });
    const now = () => new Date(T0);
    for (let round = 0; round < 4; round++) {
      const snapshot = (await readSnapshot(api.client, NS, 'web'))!;
      const result = await applyPlan(api.client, snapshot, decide(snapshot, now()), { now });
      expect(result.outcome).toBe('applied');
    }
    expect(api.store.list('pods', NS).map((p) => p.metadata.name)).toContain('web-0');
    expect(api.store.list('controllerrevisions', NS)).toHaveLength(1);
    expect(api.store.get('neosets', NS, 'web')!.status).toMatchObject({ replicas: expect.any(Number) });
  });

  it('a plan from a snapshot taken before another write loses at its first write (409), and writes nothing', async () => {
    const { api } = setup();
    await api.client.request('POST', paths.neosets(NS), { body: neosetBody() });
    const earlier = api.fork();
    const snapshot = (await readSnapshot(earlier.client, NS, 'web'))!;
    await api.client.request('PATCH', paths.neoset(NS, 'web'), { patch: 'merge', body: { spec: { replicas: 3 } } });
    const before = api.store.resourceVersion;
    const plan = decide(snapshot, new Date(T0));
    plan.actions = [];
    const result = await applyPlan(api.client, snapshot, plan);
    expect(plan.status).not.toBeNull();
    // The write that lost is the NeoSet's own: its read was not the newest (reconcile.ts decides again from etcd).
    expect(result).toEqual({ outcome: 'conflict', written: [], statusWritten: false, neosetWriteLost: true });
    expect(api.store.resourceVersion).toBe(before);
  });
});

describe('concurrency', () => {
  it('of two writes conditional on one resourceVersion, exactly one wins, in any interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (s) => {
        const api = createMemoryApi({ now: () => T0, beforeRequest: s.scheduleFunction(async () => {}) });
        const created = await api.store.put('pods', { ...podBody('a'), metadata: { ...podBody('a').metadata, namespace: NS } } as KubeObject);
        const write = (v: string) =>
          api.client
            .request('PATCH', paths.pod(NS, 'a'), { patch: 'merge', body: { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { v } } } })
            .then(() => v, (e: ApiError) => e.reason);
        const all = Promise.all([write('1'), write('2')]);
        await s.waitAll();
        const outcomes = await all;
        expect(outcomes.filter((o) => o === 'Conflict')).toHaveLength(1);
        const winner = outcomes.find((o) => o !== 'Conflict');
        expect(api.store.get('pods', NS, 'a')!.metadata.labels!.v).toBe(winner);
      }),
      { numRuns: 50 },
    );
  });
});
