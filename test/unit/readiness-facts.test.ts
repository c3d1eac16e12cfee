// The readiness function writes on an event's facts (SPEC §2.0 as revised by issue 24,
// shared/k8s/pod-facts.ts): one JSON Patch whose tests the API server checks against the stored pod.
// Against the memory API, which evaluates those tests as kube-apiserver does (the contract test holds
// it to the real server): what is stored decides, whatever the event claims.
import { describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_STATE, API_VERSION, CONDITION_INPLACE_READY, KIND, LABEL_NEOSET_NAME } from '../../shared/api/names.ts';
import type { InPlaceState } from '../../shared/api/inplace-state.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { podReadiness } from '../../shared/core/readiness/readiness.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { podFacts } from '../../shared/k8s/pod-facts.ts';
import { readinessOne } from '../../shared/k8s/pod-readiness.ts';
import { clockMemory, RECENT_CLOCK_MS } from '../../shared/k8s/server-clock.ts';
import { createMemoryApi, type MemoryApi } from '../memory-api/index.ts';

const SERVER = Date.parse('2025-01-01T00:01:00Z');
const NS = 'default';
const NAME = 'web-2';
const target = { kind: 'pod' as const, namespace: NS, name: NAME, neoset: null };

const draining: InPlaceState = { revision: 'web-v2', phase: 'Draining', drainStartedAt: '2025-01-01T00:00:30Z', readiness: 'Probe' };
const updating: InPlaceState = { ...draining, phase: 'Updating', startedAt: '2025-01-01T00:00:40Z', targetImages: { main: 'nginx:2.0' }, previousImageIDs: { main: 'sha256:old' } };

interface Shape {
  state?: InPlaceState;
  gate?: { status: 'True' | 'False'; reason: string };
  image?: string;
  imageID?: string;
  ready?: boolean;
}

/** The pod's metadata and spec, and its status, as a kubelet would report them. */
function podOf(o: Shape): { pod: Pod; status: Pod['status'] } {
  const image = o.image ?? 'nginx:1.0';
  return {
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: NAME,
        namespace: NS,
        labels: { [LABEL_NEOSET_NAME]: 'web', 'controller-revision-hash': o.state ? 'web-v2' : 'web-v1' },
        annotations: o.state ? { [ANNOTATION_INPLACE_STATE]: JSON.stringify(o.state) } : {},
        ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: 'web', uid: 'uid-web', controller: true }],
      },
      spec: { nodeName: 'node-1', containers: [{ name: 'main', image }], readinessGates: [{ conditionType: CONDITION_INPLACE_READY }] },
    },
    status: {
      phase: 'Running',
      conditions: o.gate ? [{ type: CONDITION_INPLACE_READY, status: o.gate.status, reason: o.gate.reason, lastTransitionTime: '2025-01-01T00:00:00Z' }] : [],
      containerStatuses: [{ name: 'main', image, imageID: o.imageID ?? 'sha256:old', ready: o.ready ?? true, started: true, restartCount: 0, state: { running: {} } }],
    },
  };
}

/** A memory API holding the pod shaped so; returns the pod as stored (what a true event carries). */
async function cluster(o: Shape): Promise<{ api: MemoryApi; stored: Pod }> {
  const api = createMemoryApi({ now: () => SERVER });
  const { pod, status } = podOf(o);
  await api.client.request('POST', paths.pods(NS), { body: pod });
  const stored = await api.client.request<Pod>('PATCH', paths.podStatus(NS, NAME), { patch: 'merge', body: { status } });
  api.resetRequests();
  return { api, stored };
}

/** The stored pod changed as a kubelet or a user would (a real write: a new resourceVersion). */
async function change(api: MemoryApi, body: Record<string, unknown>, sub: 'status' | null = 'status'): Promise<Pod> {
  const pod = await api.client.request<Pod>('PATCH', sub ? paths.podStatus(NS, NAME) : paths.pod(NS, NAME), { patch: 'merge', body });
  api.resetRequests();
  return pod;
}

/** readinessOne with a Date read `ageMs` ago (null: none). */
async function handle(api: MemoryApi, event: unknown, ageMs: number | null = 0) {
  let mono = 50_000;
  const memory = clockMemory(() => mono);
  if (ageMs !== null) {
    memory.remember(SERVER - (mono - ageMs), mono - ageMs);
  }
  const outcomes = await readinessOne(api.client, target, event, () => new Date(SERVER + 3_600_000), () => mono, memory);
  mono += 1;
  const now = await api.client.request<Pod>('GET', paths.pod(NS, NAME));
  const requests = { ...api.requests, GET: api.requests.GET - 1 };
  return { outcomes, now, requests };
}

const gateOf = (p: Pod) => p.status?.conditions?.find((c) => c.type === CONDITION_INPLACE_READY);
const restartedShape: Shape = { state: updating, gate: { status: 'False', reason: 'InPlaceUpdateDraining' }, image: 'nginx:2.0', imageID: 'sha256:new', ready: false };

describe('readiness writes on the facts of its event (pod-facts.ts)', () => {
  it('a pod restarted on its new image: the gate opens in one request, no read; the state stays; stamped on the server clock', async () => {
    const { api, stored } = await cluster(restartedShape);
    const r = await handle(api, stored);
    expect(r.requests).toMatchObject({ GET: 0, PATCH: 1 });
    expect(r.outcomes).toMatchObject([{ result: 'ok', actions: ['setInPlaceReady'] }]);
    expect(gateOf(r.now)).toMatchObject({ status: 'True', reason: 'InPlaceUpdateRestarted', lastTransitionTime: '2025-01-01T00:01:00Z' });
    expect(r.now.metadata.annotations?.[ANNOTATION_INPLACE_STATE]).toBe(stored.metadata.annotations?.[ANNOTATION_INPLACE_STATE]);
  });

  it('a kubelet write since that changes none of the facts does not void the write', async () => {
    const { api, stored } = await cluster(restartedShape);
    const later = await change(api, { status: { podIP: '10.0.0.9', startTime: '2025-01-01T00:00:05Z' } });
    expect(later.metadata.resourceVersion).not.toBe(stored.metadata.resourceVersion);
    const r = await handle(api, stored);
    expect(r.requests).toMatchObject({ GET: 0, PATCH: 1 });
    expect(gateOf(r.now)).toMatchObject({ status: 'True', reason: 'InPlaceUpdateRestarted' });
    expect(r.now.status?.podIP).toBe('10.0.0.9');
  });

  it('a fact changed since (the container restarted again, not started): the write is refused, the pod read, nothing written', async () => {
    const { api, stored } = await cluster(restartedShape);
    const moved = await change(api, { status: { containerStatuses: [{ ...stored.status!.containerStatuses![0], started: false, state: { waiting: { reason: 'ContainerCreating' } } }] } });
    const r = await handle(api, stored);
    expect(r.requests).toMatchObject({ GET: 1, PATCH: 1 });
    expect(r.outcomes).toMatchObject([{ result: 'ok', actions: [] }]);
    expect(r.now.metadata.resourceVersion).toBe(moved.metadata.resourceVersion);
  });

  it('a forged "finished" update (new image and imageID, ready) on a draining pod: refused, read, nothing written', async () => {
    const { api, stored } = await cluster({ state: draining, gate: { status: 'False', reason: 'InPlaceUpdateDraining' } });
    const forged = structuredClone(stored);
    forged.metadata.annotations![ANNOTATION_INPLACE_STATE] = JSON.stringify({ ...updating, readiness: 'Probe' });
    forged.spec.containers[0].image = 'nginx:2.0';
    Object.assign(forged.status!.containerStatuses![0], { image: 'nginx:2.0', imageID: 'sha256:forged', ready: true });
    expect(podReadiness(forged, SERVER).map((a) => a.kind)).toEqual(['finishInPlaceUpdate']);
    const r = await handle(api, forged);
    expect(r.requests).toMatchObject({ GET: 1, PATCH: 1 });
    expect(r.now.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
  });

  it("a draining pod forged without its state annotation, with the current resourceVersion: the gate is not reopened", async () => {
    const { api, stored } = await cluster({ state: draining, gate: { status: 'False', reason: 'InPlaceUpdateDraining' } });
    const forged = structuredClone(stored);
    delete forged.metadata.annotations![ANNOTATION_INPLACE_STATE];
    expect(podReadiness(forged, SERVER).map((a) => a.kind)).toEqual(['setInPlaceReady']);
    const r = await handle(api, forged);
    expect(r.requests).toMatchObject({ GET: 1, PATCH: 1 });
    expect(gateOf(r.now)).toMatchObject({ status: 'False', reason: 'InPlaceUpdateDraining' });
    expect(r.now.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
  });

  it('a pod being deleted that the event shows alive: refused (deletionTimestamp is tested absent)', async () => {
    const { api, stored } = await cluster({ state: undefined });
    await api.client.request('DELETE', paths.pod(NS, NAME), { body: { gracePeriodSeconds: 30 } });
    api.resetRequests();
    const r = await handle(api, stored);
    expect(r.requests).toMatchObject({ GET: 1, PATCH: 1 });
    expect(r.now.metadata.deletionTimestamp).toBeTruthy();
    expect(gateOf(r.now)).toBeUndefined();
  });

  it('the update done: the state goes and the gate is told done in one request, its lastTransitionTime kept', async () => {
    const { api } = await cluster({ ...restartedShape, gate: { status: 'True', reason: 'InPlaceUpdateRestarted' }, ready: true });
    const ready = await change(api, { status: { conditions: [...(await api.client.request<Pod>('GET', paths.pod(NS, NAME))).status!.conditions!, { type: 'Ready', status: 'True' }] } });
    const r = await handle(api, ready);
    expect(r.requests).toMatchObject({ GET: 0, PATCH: 1 });
    expect(r.outcomes).toMatchObject([{ result: 'ok', actions: ['finishInPlaceUpdate'] }]);
    expect(r.now.metadata.annotations?.[ANNOTATION_INPLACE_STATE]).toBeUndefined();
    expect(gateOf(r.now)).toMatchObject({ status: 'True', reason: 'InPlaceUpdateDone', lastTransitionTime: '2025-01-01T00:00:00Z', lastProbeTime: '2025-01-01T00:01:00Z' });
    expect(r.now.status?.conditions?.filter((c) => c.type === CONDITION_INPLACE_READY)).toHaveLength(1);
  });

  it(`no Date read in the last ${RECENT_CLOCK_MS / 1000} s: the pod is read first, the write conditional on its resourceVersion`, async () => {
    for (const age of [null, RECENT_CLOCK_MS + 1]) {
      const { api, stored } = await cluster(restartedShape);
      const r = await handle(api, stored, age);
      expect(r.requests).toMatchObject({ GET: 1, PATCH: 1 });
      expect(gateOf(r.now)).toMatchObject({ status: 'True', reason: 'InPlaceUpdateRestarted', lastTransitionTime: '2025-01-01T00:01:00Z' });
    }
  });

  it('an event not shaped like this pod (another name, no uid, no status): read, never written on', async () => {
    const { api, stored } = await cluster(restartedShape);
    const renamed = { ...structuredClone(stored), metadata: { ...stored.metadata, name: 'web-3' } };
    const { uid: _, ...noUid } = stored.metadata;
    for (const event of [renamed, { ...stored, metadata: noUid }, { ...stored, status: undefined }]) {
      expect(podFacts(event, NS, NAME)).toBeNull();
    }
    const r = await handle(api, renamed);
    expect(r.requests).toMatchObject({ GET: 1, PATCH: 1 });
  });

  it('the decision on the facts is the decision on the whole pod', async () => {
    const shapes: Shape[] = [
      {},
      { gate: { status: 'True', reason: 'PodStarted' } },
      { state: draining, gate: { status: 'False', reason: 'InPlaceUpdateDraining' } },
      restartedShape,
      { ...restartedShape, gate: { status: 'True', reason: 'InPlaceUpdateRestarted' } },
      { ...restartedShape, gate: { status: 'True', reason: 'InPlaceUpdateRestarted' }, ready: true },
      { state: updating, gate: { status: 'False', reason: 'InPlaceUpdateDraining' }, image: 'nginx:2.0', imageID: 'sha256:old' },
    ];
    for (const shape of shapes) {
      const { stored } = await cluster(shape);
      // The view carries no resourceVersion: its writes are conditional on the facts instead.
      const onRead = podReadiness(stored, SERVER).map((a) => ('pod' in a ? { ...a, pod: { ...a.pod, resourceVersion: '' } } : a));
      expect(podReadiness(podFacts(stored, NS, NAME)!.view, SERVER)).toEqual(onRead);
    }
  });
});
