// Concurrent resync ticks to one reconcile instance share one sweep (SPEC §2.5), through app.request —
// no port, no cluster: a fake client that counts the reads and answers each after a few ms.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { DEFAULT_RESYNC_SOURCE } from '../../shared/events/target.ts';
import type { FastTick, FastTickReading } from '../../shared/k8s/fast-tick.ts';
import type { Outcome } from '../../shared/k8s/reconcile.ts';
import { createApp, keepsFastTick, type EventCoverage } from './app.ts';

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

  it('a run refused for the instance read budget (ReadsBusy) tries again within the sweep, not at the next tick', async () => {
    // Each NeoSet read (a run reads it twice: cache, then etcd) holds 2 MiB of the instance's 16 MiB until its run ends: five at once pass it.
    const refused: string[] = [];
    const client: KubeClient = {
      request: async <T,>(verb: string, path: string, opts?: { budget?: { charge(bytes: number): void } }): Promise<T> => {
        await new Promise((r) => setTimeout(r, 5));
        if (path === '/apis/neo.io/v1alpha1/neosets') return { items: NEOSETS.map((name) => ({ metadata: { namespace: 'default', name } })) } as T;
        if (path.endsWith('/pods') || path.endsWith('/controllerrevisions')) return { items: [] } as T;
        try {
          opts?.budget?.charge(2 * 1024 * 1024);
        } catch (err) {
          refused.push(path);
          throw err;
        }
        await new Promise((r) => setTimeout(r, 20));
        const { ApiError } = await import('../../shared/k8s/client.ts');
        throw new ApiError(verb, path, 404, 'NotFound', 'gone');
      },
    };
    // The tick's outcomes, from its log line (a tick's failures are logged and wait for the next tick).
    const lines: { msg?: string; neosets?: { neoset: string; result: string; error?: string }[] }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const app = createApp({ client, logger, recheck: () => {}, onCovered: () => {} });
    expect((await app.request('/', tick('busy-1'))).status).toBe(200);
    expect(refused.length).toBeGreaterThan(0);
    const swept = lines.find((l) => l.msg === 'event' && l.neosets)?.neosets ?? [];
    // Every NeoSet read again once others let go: gone (the fake's 404), none left failed with ReadsBusy.
    expect(swept.map((o) => `${o.neoset} ${o.result}`).sort()).toEqual(NEOSETS.map((n) => `default/${n} gone`));
  });

  it('a tick reads the fast tick before its sweep and, with every NeoSet at rest, hands that reading to retire (SPEC §2.4)', async () => {
    const steps: string[] = [];
    const client: KubeClient = {
      request: async <T,>(verb: string, path: string): Promise<T> => {
        if (path === '/apis/neo.io/v1alpha1/neosets') {
          steps.push('list');
          return { items: NEOSETS.map((name) => ({ metadata: { namespace: 'default', name } })) } as T;
        }
        const { ApiError } = await import('../../shared/k8s/client.ts');
        throw new ApiError(verb, path, 404, 'NotFound', 'gone'); // every NeoSet gone: at rest
      },
    };
    const reading: FastTickReading = { present: true, resourceVersion: '7', neededAtMs: 0, serverNowMs: 1 };
    const fastTick: FastTick = {
      need: async () => void steps.push('need'),
      read: async () => (steps.push('read'), reading),
      retire: async (before) => (steps.push(`retire ${before === reading}`), 'deleted'),
    };
    const app = createApp({ client, logger: pino({ level: 'silent' }), recheck: () => {}, fastTick });
    expect((await app.request('/', tick('rest'))).status).toBe(200);
    expect(steps).toEqual(['read', 'list', 'retire true']);
  });

  it('a run keeps the fast tick when its NeoSet is in flight or it did not finish deciding', () => {
    const outcome = (o: Partial<Outcome>): Outcome => ({ neoset: 'd/a', result: 'ok', actions: [], statusWritten: false, requeueAfter: null, ...o });
    expect([outcome({ inFlight: true }), outcome({ result: 'conflict' }), outcome({ result: 'error' })].map(keepsFastTick)).toEqual([true, true, true]);
    expect([outcome({ inFlight: false }), outcome({ result: 'gone' }), outcome({ result: 'invalid' }), outcome({ result: 'too-large' })].map(keepsFastTick)).toEqual([false, false, false, false]);
  });
});
