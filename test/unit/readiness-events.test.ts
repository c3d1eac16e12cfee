// The readiness function takes its Pod event as a hint (SPEC §2, §2.0): the event's pod may make it
// skip, never write. Here through the hono app with a client that answers from a pod "in the cluster"
// and keeps the requests it was sent; the forged events on the real API server are in
// test/integration/forged-events.test.ts.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../functions/readiness/app.ts';
import { ANNOTATION_INPLACE_STATE, API_VERSION, CONDITION_INPLACE_READY, KIND, LABEL_NEOSET_NAME } from '../../shared/api/names.ts';
import type { Pod } from '../../shared/core/objects.ts';
import type { InPlaceState } from '../../shared/api/inplace-state.ts';
import { ApiError, type KubeClient } from '../../shared/k8s/client.ts';

const NOW = new Date('2025-01-01T00:01:00Z');
type Sent = { verb: string; path: string; body?: unknown };

/** A client whose GET of the pod answers `cluster` (404 when null); writes answer a new resourceVersion. */
function clusterClient(cluster: Pod | null): { client: KubeClient; sent: Sent[] } {
  const sent: Sent[] = [];
  const client: KubeClient = {
    async request<T>(verb: string, path: string, opts?: { body?: unknown }): Promise<T> {
      sent.push({ verb, path, body: opts?.body });
      if (verb === 'GET') {
        if (!cluster) throw new ApiError(verb, path, 404, 'NotFound', 'not found');
        return structuredClone(cluster) as T;
      }
      return { metadata: { uid: cluster?.metadata.uid, resourceVersion: '900' } } as T;
    },
  };
  return { client, sent };
}

function pod(o: { state?: InPlaceState; gate?: { status: 'True' | 'False'; reason: string }; image?: string; imageID?: string; ready?: boolean; rv?: string }): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-2',
      namespace: 'default',
      uid: 'uid-web-2',
      ...(o.rv === undefined ? {} : { resourceVersion: o.rv }),
      labels: { [LABEL_NEOSET_NAME]: 'web', 'controller-revision-hash': 'web-v1' },
      annotations: o.state ? { [ANNOTATION_INPLACE_STATE]: JSON.stringify(o.state) } : {},
      ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: 'web', uid: 'uid-web', controller: true }],
    },
    spec: { containers: [{ name: 'main', image: o.image ?? 'nginx:1.0' }], readinessGates: [{ conditionType: CONDITION_INPLACE_READY }] },
    status: {
      phase: 'Running',
      conditions: o.gate ? [{ type: CONDITION_INPLACE_READY, status: o.gate.status, reason: o.gate.reason, lastTransitionTime: '2025-01-01T00:00:00Z' }] : [],
      containerStatuses: [{ name: 'main', image: o.image ?? 'nginx:1.0', imageID: o.imageID ?? 'sha256:old', ready: o.ready ?? true, started: true, restartCount: 0, state: { running: {} } }],
    },
  } as Pod;
}

const draining: InPlaceState = { revision: 'web-v2', phase: 'Draining', drainStartedAt: '2025-01-01T00:00:30Z', readiness: 'Probe' };
const drainingPod = pod({ state: draining, gate: { status: 'False', reason: 'InPlaceUpdateDraining' }, rv: '500' });

function event(data: unknown): Request {
  return new Request('http://readiness/', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': 'forged-1',
      'ce-source': 'https://10.96.0.1:443',
      'ce-type': 'dev.knative.apiserver.resource.update',
    },
    body: JSON.stringify(data),
  });
}

async function post(cluster: Pod | null, data: unknown) {
  const { client, sent } = clusterClient(cluster);
  const res = await createApp({ client, now: () => NOW, logger: pino({ level: 'silent' }) }).request(event(data));
  return { status: res.status, body: await res.text(), sent };
}

const writes = (sent: Sent[]) => sent.filter((s) => s.verb !== 'GET');

describe('readiness: the Pod in the event is a hint', () => {
  it('a draining pod forged without its state annotation and resourceVersion: one GET, no write, an empty 200', async () => {
    const forged = structuredClone(drainingPod);
    delete forged.metadata.annotations![ANNOTATION_INPLACE_STATE];
    delete forged.metadata.resourceVersion;
    const r = await post(drainingPod, forged);
    expect(r).toMatchObject({ status: 200, body: '' });
    expect(r.sent.map((s) => s.verb)).toEqual(['GET']);
  });

  it('a forged "finished" update (new image and imageID, ready) does not finish the update', async () => {
    const forged = pod({
      state: { ...draining, phase: 'Updating', startedAt: '2025-01-01T00:00:40Z', targetImages: { main: 'nginx:2.0' }, previousImageIDs: { main: 'sha256:old' } },
      gate: { status: 'False', reason: 'InPlaceUpdateDraining' },
      image: 'nginx:2.0',
      imageID: 'sha256:forged',
      rv: '500',
    });
    const r = await post(drainingPod, forged);
    expect(r).toMatchObject({ status: 200, body: '' });
    expect(writes(r.sent)).toEqual([]);
  });

  const updating: InPlaceState = { ...draining, phase: 'Updating', startedAt: '2025-01-01T00:00:40Z', targetImages: { main: 'nginx:2.0' }, previousImageIDs: { main: 'sha256:old' } };
  const restarted = (o: { rv: string; gate?: 'True' | 'False' }) =>
    pod({
      state: updating,
      gate: o.gate === 'True' ? { status: 'True', reason: 'InPlaceUpdateRestarted' } : { status: 'False', reason: 'InPlaceUpdateDraining' },
      image: 'nginx:2.0',
      imageID: 'sha256:new',
      ready: false,
      rv: o.rv,
    });

  it('a forged "restarted" event (new image and imageID, not ready) on a pod still on the old image opens no gate', async () => {
    const stillOld = pod({ state: updating, gate: { status: 'False', reason: 'InPlaceUpdateDraining' }, image: 'nginx:2.0', imageID: 'sha256:old', ready: true, rv: '600' });
    const r = await post(stillOld, restarted({ rv: '600' }));
    expect(r).toMatchObject({ status: 200, body: '' });
    expect(r.sent.map((s) => s.verb)).toEqual(['GET']);
  });

  it('a pod read restarted on its new image, not ready yet: the gate opens (pods/status, conditional on the read), the state stays', async () => {
    const r = await post(restarted({ rv: '700' }), restarted({ rv: '650' }));
    expect(r.status).toBe(200);
    expect(r.sent.map((s) => s.verb)).toEqual(['GET', 'PATCH']);
    expect(r.sent[1].path).toBe('/api/v1/namespaces/default/pods/web-2/status');
    const body = r.sent[1].body as Pod;
    expect(body.metadata.resourceVersion).toBe('700');
    expect(body.metadata.annotations).toBeUndefined(); // the state annotation is not touched
    expect(body.status!.conditions).toEqual([expect.objectContaining({ type: CONDITION_INPLACE_READY, status: 'True', reason: 'InPlaceUpdateRestarted' })]);
  });

  it('the open gate\'s own event (restarted, gate True, not ready) costs no request; once ready, the update finishes', async () => {
    const open = restarted({ rv: '710', gate: 'True' });
    expect((await post(open, open)).sent).toEqual([]);
    const ready = structuredClone(open);
    ready.status!.containerStatuses![0].ready = true;
    const r = await post(ready, ready);
    expect(r.sent.map((s) => s.verb)).toEqual(['GET', 'PATCH']);
    const body = r.sent[1].body as Pod;
    expect(body.metadata.annotations).toEqual({ [ANNOTATION_INPLACE_STATE]: null });
    expect(body.status!.conditions).toEqual([expect.objectContaining({ status: 'True', reason: 'InPlaceUpdateDone', lastTransitionTime: '2025-01-01T00:00:00Z' })]);
  });

  it('a pod that really needs its gate opened is written conditional on the resourceVersion read, not the event\'s', async () => {
    const started = pod({ rv: '700' });
    const stale = { ...structuredClone(started), metadata: { ...started.metadata, resourceVersion: '650' } };
    const r = await post(started, stale);
    expect(r.status).toBe(200);
    expect(r.sent.map((s) => s.verb)).toEqual(['GET', 'PATCH']);
    expect((r.sent[1].body as Pod).metadata.resourceVersion).toBe('700');
  });

  it('an event whose pod needs nothing costs no request at all', async () => {
    const open = pod({ gate: { status: 'True', reason: 'PodStarted' }, rv: '700' });
    const r = await post(open, open);
    expect(r).toMatchObject({ status: 200, body: '' });
    expect(r.sent).toEqual([]);
  });

  it('a body not shaped like a pod decides nothing: the pod is read', async () => {
    const r = await post(drainingPod, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-2', namespace: 'default', labels: { [LABEL_NEOSET_NAME]: 'web' }, ownerReferences: 'all of them' } });
    expect(r).toMatchObject({ status: 200, body: '' });
    expect(r.sent.map((s) => s.verb)).toEqual(['GET']);
  });

  it('a pod that is gone by the time it is read: nothing written', async () => {
    const r = await post(null, pod({ rv: '700' }));
    expect(r).toMatchObject({ status: 200, body: '' });
    expect(writes(r.sent)).toEqual([]);
  });
});
