// Concurrent resync ticks to one reconcile instance share one sweep (SPEC §2.5), through app.request —
// no port, no cluster: a fake client that counts the reads and answers each after a few ms.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { DEFAULT_RESYNC_SOURCE } from '../../shared/events/target.ts';
import { createApp, type EventCoverage } from './app.ts';

const NEOSETS = ['a', 'b', 'c', 'd', 'e'];
const tick = (id: string) => ({ method: 'POST', headers: { 'ce-specversion': '1.0', 'ce-id': id, 'ce-source': DEFAULT_RESYNC_SOURCE, 'ce-type': 'dev.knative.sources.ping', 'content-type': 'application/json' }, body: '{}' });

describe('resync ticks to one instance', () => {
  it('five concurrent ticks: one list of the NeoSets, one run of each, every tick answered by runs started after it arrived', async () => {
    const reads: string[] = [];
    const client: KubeClient = {
      request: async <T,>(verb: string, path: string): Promise<T> => {
        reads.push(`${verb} ${path}`);
        await new Promise((r) => setTimeout(r, 5));
        if (path === '/apis/neo.io/v1alpha1/neosets') return { items: NEOSETS.map((name) => ({ metadata: { namespace: 'default', name } })) } as T;
        if (path.endsWith('/pods') || path.endsWith('/controllerrevisions')) return { items: [] } as T;
        const { ApiError } = await import('../../shared/k8s/client.ts');
        throw new ApiError(verb, path, 404, 'NotFound', 'gone');
      },
    };
    const covered: EventCoverage[] = [];
    const app = createApp({ client, logger: pino({ level: 'silent' }), recheck: () => {}, onCovered: (c) => covered.push(c) });
    const answers = await Promise.all(['t1', 't2', 't3', 't4', 't5'].map(async (id) => (await app.request('/', tick(id))).status));
    expect(answers).toEqual([200, 200, 200, 200, 200]);
    expect(reads.filter((r) => r === 'GET /apis/neo.io/v1alpha1/neosets')).toHaveLength(1);
    // A NeoSet the watch cache does not hold is read from etcd too: two GETs of each, once.
    for (const name of NEOSETS) expect(reads.filter((r) => r === `GET /apis/neo.io/v1alpha1/namespaces/default/neosets/${name}`)).toHaveLength(2);
    expect(covered).toHaveLength(5 * NEOSETS.length);
    for (const c of covered) expect(c.startedAt).toBeGreaterThanOrEqual(c.arrivedAt);
  });
});
