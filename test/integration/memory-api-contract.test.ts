// The memory API (test/memory-api) stands in for kube-apiserver in unit tests of the applier. This
// contract runs one sequence of requests against both and asserts the same answers: status codes,
// reasons, messages and the resulting fields NeoSet relies on (resourceVersion and generation as
// "changed or not", since their values differ between the two).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API_VERSION, CONDITION_INPLACE_READY, KIND } from '../../shared/api/names.ts';
import { statusPatch } from '../../shared/k8s/apply.ts';
import { ApiError, createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { createTestNamespace, kubeConfig, type TestNamespace } from '../cluster/harness.ts';
import { createMemoryApi, type KubeObject } from '../memory-api/index.ts';

let ns: TestNamespace;
beforeAll(async () => {
  ns = await createTestNamespace('memory-api-contract');
});
afterAll(async () => {
  await ns?.cleanup();
});

interface Outcome {
  step: string;
  answer: string;
  fields?: unknown;
}

const POD = 'p';
const pod = (name: string, labels: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels, annotations: { note: 'one' } },
  spec: {
    automountServiceAccountToken: false,
    containers: [{ name: 'app', image: 'nginx:1.0' }],
    readinessGates: [{ conditionType: CONDITION_INPLACE_READY }],
  },
});
const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.0' }] } };
const status = { replicas: 2, readyReplicas: 1, updatedReplicas: 1, phase: 'RollingOut', currentImage: 'nginx:1.0', targetImage: 'nginx:1.1' };

/** The sequence, recording each answer; the fields kept are those both servers must agree on. */
async function scenario(client: KubeClient, namespace: string): Promise<Outcome[]> {
  const out: Outcome[] = [];
  let last: KubeObject | undefined;
  const step = async (name: string, call: () => Promise<unknown>, fields?: (o: KubeObject, before: KubeObject | undefined) => unknown) => {
    try {
      const result = (await call()) as KubeObject;
      out.push({ step: name, answer: 'ok', fields: fields?.(result, last) });
      if (result?.metadata?.resourceVersion) last = result;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      // The first line: a Pod's 422 goes on with a diff of the specs, which the memory API does not draw.
      // resourceVersions and uids quoted by a precondition failure are the servers' own.
      const message = err.message
        .split('\n')[0]
        .replace(/\((\d+)\)/g, '(<rv>)')
        .replace(/in record \([0-9a-f-]{36}\)/g, 'in record (<uid>)')
        .replace(/current: \d+/, 'current: <rv>');
      out.push({ step: name, answer: `${err.status} ${err.reason}`, fields: message });
    }
  };
  const req = <T>(verb: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, opts?: Parameters<KubeClient['request']>[2]) =>
    client.request<T>(verb, path, opts);
  const sameRv = (o: KubeObject, b: KubeObject | undefined) => o.metadata.resourceVersion === b?.metadata.resourceVersion;
  const podFields = (o: KubeObject, b: KubeObject | undefined) => ({
    sameResourceVersion: sameRv(o, b),
    generation: o.metadata.generation,
    labels: o.metadata.labels,
    annotations: o.metadata.annotations,
    images: (o.spec as { containers: { image: string }[] }).containers.map((c) => c.image),
    readinessGates: (o.spec as { readinessGates?: unknown }).readinessGates,
    status: { phase: (o.status as { phase?: string }).phase, conditions: (o.status as { conditions?: unknown[] }).conditions ?? [] },
  });

  const podPath = paths.pod(namespace, POD);
  await step('create pod', () => req('POST', paths.pods(namespace), { body: pod(POD, { app: 'web', tier: 'a' }) }), (o) => ({
    ...podFields(o, undefined),
    sameResourceVersion: undefined,
    hasUid: /^[0-9a-f-]{36}$/.test(o.metadata.uid ?? ''),
    hasCreationTimestamp: /Z$/.test(o.metadata.creationTimestamp ?? ''),
  }));
  const created = last!;
  const stale = created.metadata.resourceVersion;
  await step('create pod again', () => req('POST', paths.pods(namespace), { body: pod(POD, { app: 'web' }) }));
  await step('get missing pod', () => req('GET', paths.pod(namespace, 'missing')));
  await step('delete missing pod', () => req('DELETE', paths.pod(namespace, 'missing')));
  await step('patch missing pod', () => req('PATCH', paths.pod(namespace, 'missing'), { patch: 'merge', body: { metadata: { labels: { a: 'b' } } } }));

  const fresh = () => last!.metadata.resourceVersion;
  await step('merge patch, fresh rv', () => req('PATCH', podPath, { patch: 'merge', body: { metadata: { resourceVersion: fresh(), annotations: { note: 'two' } } } }), podFields);
  await step('merge patch, stale rv', () => req('PATCH', podPath, { patch: 'merge', body: { metadata: { resourceVersion: stale, annotations: { note: 'three' } } } }));
  await step('strategic patch, fresh rv', () =>
    req('PATCH', podPath, {
      patch: 'strategic',
      body: { metadata: { resourceVersion: fresh(), labels: { tier: null, rev: 'r2' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.1' }] } },
    }), podFields);
  await step('strategic patch, stale rv', () =>
    req('PATCH', podPath, { patch: 'strategic', body: { metadata: { resourceVersion: stale }, spec: { containers: [{ name: 'app', image: 'nginx:1.2' }] } } }));
  await step('no-op merge patch, fresh rv', () => req('PATCH', podPath, { patch: 'merge', body: { metadata: { resourceVersion: fresh(), annotations: { note: 'two' } } } }), podFields);
  await step('no-op merge patch, stale rv', () => req('PATCH', podPath, { patch: 'merge', body: { metadata: { resourceVersion: stale, annotations: { note: 'two' } } } }));
  await step('main resource ignores status', () => req('PATCH', podPath, { patch: 'merge', body: { status: { phase: 'Failed' } } }), podFields);

  const condition = (type: string, s: string, reason: string) => ({ type, status: s, reason, message: reason, lastTransitionTime: '2025-01-01T00:00:00Z' });
  await step('pods/status strategic patch, new condition', () =>
    req('PATCH', paths.podStatus(namespace, POD), { patch: 'strategic', body: { metadata: { resourceVersion: fresh() }, status: { conditions: [condition(CONDITION_INPLACE_READY, 'True', 'Created')] } } }), podFields);
  await step('pods/status strategic patch, a second condition', () =>
    req('PATCH', paths.podStatus(namespace, POD), { patch: 'strategic', body: { status: { conditions: [condition('Other', 'False', 'Other')] } } }), podFields);
  await step('pods/status strategic patch, condition merged by type', () =>
    req('PATCH', paths.podStatus(namespace, POD), { patch: 'strategic', body: { metadata: { resourceVersion: fresh() }, status: { conditions: [condition(CONDITION_INPLACE_READY, 'False', 'Draining')] } } }), podFields);
  await step('pods/status strategic patch, stale rv', () =>
    req('PATCH', paths.podStatus(namespace, POD), { patch: 'strategic', body: { metadata: { resourceVersion: stale }, status: { conditions: [condition(CONDITION_INPLACE_READY, 'True', 'Done')] } } }));
  // The drain and the finish of an in-place update are one pods/status write each: metadata travels there (SPEC §4.4).
  await step('pods/status strategic patch, annotation and condition together', () =>
    req('PATCH', paths.podStatus(namespace, POD), {
      patch: 'strategic',
      body: { metadata: { resourceVersion: fresh(), annotations: { state: 'Draining' } }, status: { conditions: [condition(CONDITION_INPLACE_READY, 'False', 'Drain')] } },
    }), podFields);
  await step('pods/status strategic patch, annotation removed and condition set', () =>
    req('PATCH', paths.podStatus(namespace, POD), {
      patch: 'strategic',
      body: { metadata: { resourceVersion: fresh(), annotations: { state: null } }, status: { conditions: [condition(CONDITION_INPLACE_READY, 'True', 'Done')] } },
    }), podFields);
  await step('pods/status ignores spec', () =>
    req('PATCH', paths.podStatus(namespace, POD), { patch: 'merge', body: { spec: { containers: [{ name: 'app', image: 'nginx:9' }] } } }), podFields);

  await step('readinessGates are immutable', () => req('PATCH', podPath, { patch: 'merge', body: { spec: { readinessGates: [] } } }));
  await step('json patch, test fails', () =>
    req('PATCH', podPath, { patch: 'json', body: [{ op: 'test', path: '/metadata/labels/app', value: 'nope' }, { op: 'replace', path: '/spec/containers/0/image', value: 'nginx:x' }] }));
  await step('json patch, test holds', () =>
    req('PATCH', podPath, { patch: 'json', body: [{ op: 'test', path: '/metadata/resourceVersion', value: fresh() }, { op: 'replace', path: '/spec/containers/0/image', value: 'nginx:1.3' }] }), podFields);
  // The readiness function's writes on an event's facts test absent parts as null (pod-facts.ts).
  await step('json patch, a test of null on an absent member holds', () =>
    req('PATCH', podPath, { patch: 'json', body: [{ op: 'test', path: '/metadata/deletionTimestamp', value: null }, { op: 'replace', path: '/spec/containers/0/image', value: 'nginx:1.4' }] }), podFields);
  await step('json patch, a test of null on a present member fails', () =>
    req('PATCH', podPath, { patch: 'json', body: [{ op: 'test', path: '/metadata/labels', value: null }, { op: 'replace', path: '/spec/containers/0/image', value: 'nginx:x' }] }));
  await step('json patch, a test under an absent object fails', () =>
    req('PATCH', podPath, { patch: 'json', body: [{ op: 'test', path: '/metadata/nothing/here', value: null }, { op: 'replace', path: '/spec/containers/0/image', value: 'nginx:x' }] }));
  await step('json patch, a test of a whole list holds', async () => {
    const now = (await req('GET', podPath)) as KubeObject;
    return req('PATCH', podPath, { patch: 'json', body: [{ op: 'test', path: '/spec/containers', value: (now.spec as { containers: unknown }).containers }, { op: 'replace', path: '/spec/containers/0/image', value: 'nginx:1.5' }] });
  }, podFields);
  await step('json patch on pods/status: tests, an annotation removed, a condition replaced', async () => {
    await req('PATCH', podPath, { patch: 'merge', body: { metadata: { annotations: { note: 'two', keep: 'yes' } } } });
    const now = (await req('GET', podPath)) as KubeObject;
    const conditions = ((now.status as { conditions?: { type: string }[] }).conditions ?? []);
    const at = conditions.findIndex((c) => c.type === CONDITION_INPLACE_READY);
    return req('PATCH', paths.podStatus(namespace, POD), {
      patch: 'json',
      body: [
        { op: 'test', path: '/metadata/annotations', value: now.metadata.annotations ?? null },
        { op: 'test', path: '/status/conditions', value: conditions },
        { op: 'remove', path: '/metadata/annotations/note' },
        { op: 'replace', path: `/status/conditions/${at}`, value: condition(CONDITION_INPLACE_READY, 'True', 'Facts') },
      ],
    });
  }, podFields);

  await step('delete, stale rv precondition', () => req('DELETE', podPath, { body: { preconditions: { uid: created.metadata.uid, resourceVersion: stale } } }));
  await step('delete, wrong uid precondition', () =>
    req('DELETE', podPath, { body: { preconditions: { uid: '00000000-0000-4000-8000-00000000dead', resourceVersion: fresh() } } }));
  await step('delete an unscheduled pod, fresh preconditions', () =>
    req('DELETE', podPath, { body: { preconditions: { uid: created.metadata.uid, resourceVersion: fresh() } } }), (o) => o.metadata.name);
  await step('an unscheduled pod goes at once', () => req('GET', podPath));

  // A scheduled pod is deleted gracefully: it stays, terminating, until its kubelet removes it.
  const gPath = paths.pod(namespace, 'g');
  const terminating = (o: KubeObject, b: KubeObject | undefined) => ({
    sameResourceVersion: sameRv(o, b),
    generation: o.metadata.generation,
    deletionGracePeriodSeconds: o.metadata.deletionGracePeriodSeconds,
    terminating: typeof o.metadata.deletionTimestamp === 'string',
    labels: o.metadata.labels,
  });
  await step('create a scheduled pod', () => req('POST', paths.pods(namespace), { body: { ...pod('g', { app: 'g' }), spec: { ...pod('g', {}).spec, nodeName: 'node-1' } } }), terminating);
  await step('containerStatuses are replaced by a strategic patch', () =>
    req('PATCH', paths.podStatus(namespace, 'g'), {
      patch: 'strategic',
      body: { status: { containerStatuses: [{ name: 'app', image: 'nginx:1.0', imageID: '', ready: false, restartCount: 0, started: false, state: { waiting: { reason: 'ContainerCreating' } } }] } },
    }));
  await step('containerStatuses, second patch', () =>
    req('PATCH', paths.podStatus(namespace, 'g'), {
      patch: 'strategic',
      body: { status: { containerStatuses: [{ name: 'app', image: 'nginx:1.0', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: '2025-01-01T00:00:00Z' } } }] } },
    }), (o) => (o.status as { containerStatuses: unknown[] }).containerStatuses);
  await step('delete a scheduled pod', () => req('DELETE', gPath), terminating);
  await step('delete it again', () => req('DELETE', gPath), terminating);
  await step('a terminating pod takes label patches', () => req('PATCH', gPath, { patch: 'merge', body: { metadata: { labels: { more: 'x' } } } }), terminating);
  await step('delete it with grace period 0', () => req('DELETE', gPath, { body: { gracePeriodSeconds: 0 } }), (o) => o.metadata.name);
  await step('a pod deleted with grace period 0 is gone', () => req('GET', gPath));

  // Finalizers hold a deleted object until an update removes the last one.
  const fPath = paths.pod(namespace, 'f');
  await step('create a pod with a finalizer', () =>
    req('POST', paths.pods(namespace), { body: { ...pod('f', { app: 'f' }), metadata: { ...pod('f', { app: 'f' }).metadata, finalizers: ['example.com/hold'] } } }), terminating);
  await step('delete it', () => req('DELETE', fPath), terminating);
  await step('delete it again', () => req('DELETE', fPath), terminating);
  await step('remove its finalizer', () => req('PATCH', fPath, { patch: 'merge', body: { metadata: { finalizers: null } } }), (o) => o.metadata.name);
  await step('a pod without finalizers left is gone', () => req('GET', fPath));

  // Events: stored by name, a second one with the same name refused.
  const event = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'web.0001' },
    involvedObject: { apiVersion: API_VERSION, kind: KIND, name: 'web', namespace },
    type: 'Warning',
    reason: 'Testing',
    message: 'a warning',
    firstTimestamp: '2025-01-01T00:00:00Z',
    lastTimestamp: '2025-01-01T00:00:00Z',
    count: 1,
  };
  await step('record an event', () => req('POST', paths.events(namespace), { body: event }), (o) => ({ type: o.type, reason: o.reason, message: o.message }));
  await step('record it again', () => req('POST', paths.events(namespace), { body: event }));

  // Label selectors over a few pods.
  for (const [name, labels] of [['s1', { app: 'web', tier: 'a' }], ['s2', { app: 'web', tier: 'b' }], ['s3', { app: 'db' }]] as const) {
    await step(`create ${name}`, () => req('POST', paths.pods(namespace), { body: pod(name, labels) }), (o) => o.metadata.name);
  }
  for (const selector of ['app=web', 'app==web', 'app!=web', 'tier', '!tier', 'tier in (a,c)', 'tier notin (a)', 'app=web,tier!=a', 'app in (web, db),!tier']) {
    await step(`list ${selector}`, () => req<{ items: KubeObject[] }>('GET', paths.pods(namespace), { query: { labelSelector: selector } }).then((l) => ({ ...l, metadata: undefined })), (o) =>
      (o as unknown as { items: KubeObject[] }).items.map((p) => p.metadata.name));
  }
  // The snapshot reader's lists: not older than a resourceVersion it has read (snapshot-reader.ts).
  const names = (o: KubeObject) => (o as unknown as { items: KubeObject[] }).items.map((p) => p.metadata.name);
  const listed = (query: Record<string, string>) => () => req<{ items: KubeObject[] }>('GET', paths.pods(namespace), { query: { labelSelector: 'app=web', ...query } }).then((l) => ({ ...l, metadata: undefined }));
  await step('list not older than the last write', listed({ resourceVersion: last!.metadata.resourceVersion!, resourceVersionMatch: 'NotOlderThan' }), names);
  await step('list resourceVersionMatch without resourceVersion', listed({ resourceVersionMatch: 'NotOlderThan' }));
  await step('list resourceVersionMatch unknown', listed({ resourceVersion: '1', resourceVersionMatch: 'Newest' }));
  await step('list not older than a malformed version', listed({ resourceVersion: 'abc', resourceVersionMatch: 'NotOlderThan' }));
  await step('list not older than a version not reached (3 s wait)', listed({ resourceVersion: '999999999', resourceVersionMatch: 'NotOlderThan' }));

  // NeoSet: the status subresource and generation.
  const setPath = paths.neoset(namespace, 'web');
  const neoset = { apiVersion: API_VERSION, kind: KIND, metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template }, status };
  const setFields = (o: KubeObject, b: KubeObject | undefined) => ({
    sameResourceVersion: sameRv(o, b),
    generation: o.metadata.generation,
    replicas: (o.spec as { replicas: number }).replicas,
    status: o.status,
  });
  await step('create neoset (status dropped)', () => req('POST', paths.neosets(namespace), { body: neoset }), setFields);
  const setStale = last!.metadata.resourceVersion;
  await step('neosets/status PUT, fresh rv', () => req('PUT', paths.neosetStatus(namespace, 'web'), { body: { ...last, spec: { ...neoset.spec, replicas: 5 }, status } }), setFields);
  await step('neosets/status PUT, identical status', () => req('PUT', paths.neosetStatus(namespace, 'web'), { body: { ...last, status } }), setFields);
  await step('neosets/status PUT, stale rv', () =>
    req('PUT', paths.neosetStatus(namespace, 'web'), { body: { ...last, metadata: { ...last!.metadata, resourceVersion: setStale }, status: { ...status, phase: 'Paused' } } }));
  // What applyPlan sends (apply.ts statusPatch): the status replaced whole, on the resourceVersion read.
  await step('neosets/status JSON patch, fresh rv', () => req('PATCH', paths.neosetStatus(namespace, 'web'), { patch: 'json', body: statusPatch(last!.metadata.resourceVersion!, { ...status, phase: 'Completed' } as never) }), setFields);
  await step('neosets/status JSON patch, stale rv', () => req('PATCH', paths.neosetStatus(namespace, 'web'), { patch: 'json', body: statusPatch(setStale!, { ...status, phase: 'Paused' } as never) }));
  await step('neoset spec change bumps generation', () => req('PATCH', setPath, { patch: 'merge', body: { spec: { replicas: 3 }, status: { phase: 'Failed' } } }), setFields);
  await step('neoset PUT without resourceVersion', () => req('PUT', setPath, { body: { ...last, metadata: { ...last!.metadata, resourceVersion: undefined } } }));
  await step('neoset strategic patch', () => req('PATCH', setPath, { patch: 'strategic', body: { spec: { replicas: 4 } } }));
  await step('cluster-wide neoset list', () => req<{ items: KubeObject[] }>('GET', paths.neosets()).then((l) => ({ ...l, metadata: undefined })), (o) =>
    (o as unknown as { items: KubeObject[] }).items.filter((s) => s.metadata.namespace === namespace).map((s) => s.metadata.name));

  // A ControllerRevision: other messages name the group.
  const revision = { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'web-1' }, revision: 1, data: { spec: { template } } };
  await step('create revision', () => req('POST', paths.revisions(namespace), { body: revision }), (o) => ({ revision: o.revision, generation: o.metadata.generation }));
  await step('create revision again', () => req('POST', paths.revisions(namespace), { body: revision }));
  await step('renumber revision, stale rv', () =>
    req('PATCH', paths.revision(namespace, 'web-1'), { patch: 'merge', body: { metadata: { resourceVersion: setStale }, revision: 2 } }));
  await step('delete revision, stale rv precondition', () =>
    req('DELETE', paths.revision(namespace, 'web-1'), { body: { preconditions: { resourceVersion: setStale } } }));
  return out;
}

it('answers the NeoSet requests as kube-apiserver does', async () => {
  const real = await scenario(createKubeClient(kubeConfig()), ns.name);
  const memory = await scenario(createMemoryApi().client, ns.name);
  expect(memory).toEqual(real);
});

it('refuses a pod beyond the pod quota as kube-apiserver does', async () => {
  const quotaNs = await createTestNamespace('memory-api-quota');
  try {
    const real = createKubeClient(kubeConfig());
    await real.request('POST', `/api/v1/namespaces/${quotaNs.name}/resourcequotas`, {
      body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: '1' } } },
    });
    // Quota admission refuses every pod until status.hard is written; the test control plane runs no
    // quota controller, so the test writes it (admission then keeps status.used itself).
    await real.request('PATCH', `/api/v1/namespaces/${quotaNs.name}/resourcequotas/q/status`, {
      patch: 'merge',
      body: { status: { hard: { pods: '1' }, used: { pods: '0' } } },
    });
    const memory = createMemoryApi();
    memory.setPodQuota(1, 'q');
    const attempt = async (client: KubeClient) => {
      const answers: string[] = [];
      for (const name of ['a', 'b']) {
        try {
          await client.request('POST', paths.pods(quotaNs.name), { body: pod(name, { app: 'q' }) });
          answers.push('ok');
        } catch (err) {
          answers.push(err instanceof ApiError ? `${err.status} ${err.reason}: ${err.message}` : String(err));
        }
      }
      return answers;
    };
    const expected = await attempt(real);
    expect(expected[1]).toContain('exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1');
    expect(await attempt(memory.client)).toEqual(expected);
  } finally {
    await quotaNs.cleanup();
  }
});

it('resizes a pod through pods/resize as kube-apiserver 1.37 does (SPEC §4.9)', async () => {
  const resizeNs = await createTestNamespace('memory-api-resize');
  const real = createKubeClient(kubeConfig());
  const node = `node-${resizeNs.name}`;
  // PodResizeValidator checks a bound pod's requests against its Node's allocatable.
  await real.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: node, labels: { 'kubernetes.io/os': 'linux' } } } });
  await real.request('PATCH', `/api/v1/nodes/${node}/status`, { patch: 'merge', body: { status: { allocatable: { cpu: '8', memory: '32Gi', pods: '110' }, capacity: { cpu: '8', memory: '32Gi', pods: '110' } } } });
  try {
    const memory = createMemoryApi();
    memory.setNodeAllocatable({ cpu: '8', memory: '32Gi' });
    const scenario = async (client: KubeClient) => {
      const out: unknown[] = [];
      const path = (name: string) => paths.podResize(resizeNs.name, name);
      let rv = '';
      const step = async (what: string, call: () => Promise<unknown>) => {
        try {
          const o = (await call()) as KubeObject;
          rv = o.metadata.resourceVersion ?? rv;
          const c = (o.spec as { containers: Record<string, unknown>[] }).containers[0];
          out.push({ what, answer: 'ok', generation: o.metadata.generation, annotations: o.metadata.annotations, image: c.image, resources: c.resources, resizePolicy: c.resizePolicy });
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          out.push({ what, answer: `${err.status} ${err.reason}`, message: err.message.split('\n')[0] });
        }
      };
      const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } };
      const body = (name: string) => ({
        ...pod(name, { app: 'r' }),
        spec: { ...pod(name, {}).spec, nodeName: node, containers: [{ name: 'app', image: 'nginx:1.0', resources, resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }] }] },
      });
      const running = (withResources: boolean) => ({
        status: {
          phase: 'Running',
          containerStatuses: [
            { name: 'app', image: 'nginx:1.0', imageID: 'x', ready: true, restartCount: 0, started: true, state: { running: { startedAt: '2025-01-01T00:00:00Z' } }, ...(withResources ? { resources } : {}) },
          ],
        },
      });
      const resize = (name: string, r: unknown, extra: Record<string, unknown> = {}) =>
        client.request('PATCH', path(name), { patch: 'strategic', body: { metadata: { resourceVersion: rv, ...extra }, spec: { containers: [{ name: 'app', resources: r }] } } });
      await step('create', () => client.request('POST', paths.pods(resizeNs.name), { body: body('r') }));
      await step('status with resources', () => client.request('PATCH', paths.podStatus(resizeNs.name, 'r'), { patch: 'merge', body: running(true) }));
      await step('resize cpu, fresh rv', () => resize('r', { requests: { cpu: '200m' } }));
      const stale = String(Number(rv) - 1);
      await step('resize, stale rv', () => client.request('PATCH', path('r'), { patch: 'strategic', body: { metadata: { resourceVersion: stale }, spec: { containers: [{ name: 'app', resources: { requests: { cpu: '300m' } } }] } } }));
      await step('resize carries no image, no annotation', () =>
        client.request('PATCH', path('r'), { patch: 'strategic', body: { metadata: { resourceVersion: rv, annotations: { x: 'y' } }, spec: { containers: [{ name: 'app', image: 'nginx:9', resources: { requests: { cpu: '250m' } } }] } } }));
      await step('resizePolicy changes', () => client.request('PATCH', path('r'), { patch: 'strategic', body: { spec: { containers: [{ name: 'app', resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }] }] } } }));
      await step('QoS class change', () => resize('r', { requests: { cpu: '1', memory: '128Mi' } }));
      await step('another resource', () => resize('r', { limits: { 'ephemeral-storage': '1Gi' } }));
      await step('beyond the node allocatable', () => resize('r', { requests: { cpu: '9' }, limits: { cpu: '9' } }));
      await step('create a second', () => client.request('POST', paths.pods(resizeNs.name), { body: body('s') }));
      await step('running without reported resources', () => client.request('PATCH', paths.podStatus(resizeNs.name, 's'), { patch: 'merge', body: running(false) }));
      await step('resize on a node without support', () => resize('s', { requests: { cpu: '200m' } }));
      return out;
    };
    const expected = await scenario(real);
    expect(await scenario(memory.client)).toEqual(expected);
  } finally {
    await resizeNs.cleanup();
    await real.request('DELETE', `/api/v1/nodes/${node}`).catch(() => undefined);
  }
});
