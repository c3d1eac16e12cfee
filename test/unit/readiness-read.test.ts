// How the readiness function reads the pod it may write (shared/k8s/pod-readiness.ts readPod): from
// the API server's watch cache when that copy is not older than the event's pod, else from etcd — and
// what it writes is conditional on the copy it decided from.
import { describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_STATE, API_VERSION, CONDITION_INPLACE_READY, KIND, LABEL_NEOSET_NAME } from '../../shared/api/names.ts';
import type { InPlaceState } from '../../shared/api/inplace-state.ts';
import type { Pod } from '../../shared/core/objects.ts';
import type { KubeClient, RequestOptions } from '../../shared/k8s/client.ts';
import { readinessOne } from '../../shared/k8s/pod-readiness.ts';

const NOW = new Date('2025-01-01T00:01:00Z');
const state: InPlaceState = { revision: 'web-v2', phase: 'Updating', drainStartedAt: '2025-01-01T00:00:30Z', startedAt: '2025-01-01T00:00:31Z', readiness: 'Probe', targetImages: { main: 'nginx:1.1' }, previousImageIDs: { main: 'sha256:old' } } as InPlaceState;

/** A pod restarted on its new image, ready: its update is done (the readiness function finishes it). */
function donePod(rv: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-2',
      namespace: 'default',
      uid: 'uid-web-2',
      resourceVersion: rv,
      labels: { [LABEL_NEOSET_NAME]: 'web', 'controller-revision-hash': 'web-v2' },
      annotations: { [ANNOTATION_INPLACE_STATE]: JSON.stringify(state) },
      ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: 'web', uid: 'uid-web', controller: true }],
    },
    spec: { containers: [{ name: 'main', image: 'nginx:1.1' }], readinessGates: [{ conditionType: CONDITION_INPLACE_READY }] },
    status: {
      phase: 'Running',
      conditions: [
        { type: CONDITION_INPLACE_READY, status: 'True', reason: 'InPlaceUpdateRestarted', lastTransitionTime: '2025-01-01T00:00:40Z' },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: '2025-01-01T00:00:50Z' },
        { type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:50Z' },
      ],
      containerStatuses: [{ name: 'main', image: 'nginx:1.1', imageID: 'sha256:new', ready: true, started: true, restartCount: 0, state: { running: {} } }],
    },
  } as Pod;
}

/** The watch cache answers `cached` (resourceVersion 0), etcd `stored`; each request is kept. */
function twoCopies(cached: Pod, stored: Pod) {
  const sent: { verb: string; query?: RequestOptions['query']; body?: unknown }[] = [];
  const client: KubeClient = {
    async request<T>(verb: string, _path: string, opts?: RequestOptions): Promise<T> {
      sent.push({ verb, query: opts?.query, body: opts?.body });
      if (verb === 'GET') return structuredClone(opts?.query?.resourceVersion === '0' ? cached : stored) as T;
      return { metadata: { uid: 'uid-web-2', resourceVersion: '900' } } as T;
    },
  };
  return { client, sent };
}

const target = { kind: 'pod' as const, namespace: 'default', name: 'web-2', neoset: 'web' };
const finish = async (eventPod: unknown, cached: Pod, stored: Pod) => {
  const { client, sent } = twoCopies(cached, stored);
  await readinessOne(client, target, eventPod, () => NOW);
  return { reads: sent.filter((s) => s.verb === 'GET').map((s) => s.query ?? 'quorum'), writes: sent.filter((s) => s.verb !== 'GET').map((s) => (s.body as Pod).metadata.resourceVersion) };
};

describe('readiness reads the pod it may write', () => {
  it('from the watch cache when that copy is not older than the event, and writes conditional on it', async () => {
    expect(await finish(donePod('500'), donePod('500'), donePod('500'))).toEqual({ reads: [{ resourceVersion: '0' }], writes: ['500'] });
    expect(await finish(donePod('500'), donePod('510'), donePod('510'))).toEqual({ reads: [{ resourceVersion: '0' }], writes: ['510'] });
  });

  it('from etcd when the cache has not caught up with the event', async () => {
    expect(await finish(donePod('500'), donePod('490'), donePod('500'))).toEqual({ reads: [{ resourceVersion: '0' }, 'quorum'], writes: ['500'] });
  });

  it('from etcd alone when the event has no comparable resourceVersion (Reference mode, a forged or hand-written body)', async () => {
    for (const event of [null, { ...donePod('500'), metadata: { ...donePod('500').metadata, resourceVersion: undefined } }, donePod('0500'), donePod('abc')]) {
      expect(await finish(event, donePod('400'), donePod('500'))).toEqual({ reads: ['quorum'], writes: ['500'] });
    }
  });

  it('a forged resourceVersion the server never reached costs one more read, never a wait or a write from the event', async () => {
    expect(await finish(donePod('999999999999'), donePod('500'), donePod('500'))).toEqual({ reads: [{ resourceVersion: '0' }, 'quorum'], writes: ['500'] });
  });
});
