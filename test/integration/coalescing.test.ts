// SPEC §2.0 "Coalesce, never forget" on the real API server: 50 concurrent no-op Pod events for one
// settled NeoSet, delivered to ONE reconcile instance, cost at most two snapshot reads (the run the
// first event starts, and one follow-up shared by every event that arrived while it ran), and each
// event is answered — empty 200 — only after a reconcile that started after it was sent has finished.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createApp as createReconcile, type EventCoverage } from '../../functions/reconcile/app.ts';
import { createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { resourceEvent, toBinaryRequest } from '../../dev/bridge/pump.ts';
import { applyNeoSet, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';

const NAME = 'coalesced';
const EVENTS = 50;

describe('one reconcile instance coalesces a burst of events for one NeoSet', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ prefix: 'coalesce' });
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 5 }));
    await untilStatus(stack, NAME, '5 ready pods, Idle', (n, pods) => n.status?.readyReplicas === 5 && pods.length === 5 && n.status?.phase === 'Idle');
    await stack.pump.stop(); // from here on only the test feeds a function
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it(`${EVENTS} concurrent no-op Pod events: ≤ 2 snapshot reads, each answered by a reconcile started after it arrived`, async () => {
    const requests: string[] = [];
    const inner = createKubeClient(stack.kc);
    const counting: KubeClient = {
      request: (verb, path, opts) => {
        requests.push(`${verb} ${path}`);
        return inner.request(verb, path, opts);
      },
    };
    const covered = new Map<string, EventCoverage>();
    const app = createReconcile({ client: counting, logger: pino({ level: 'silent' }), recheck: () => {}, onCovered: (c) => covered.set(c.eventId, c) });

    const server = stack.kc.getCurrentCluster()!.server;
    const pods = stack.observer.pods(NAME);
    expect(pods).toHaveLength(5);
    const events = Array.from({ length: EVENTS }, (_, i) => resourceEvent(server, 'MODIFIED', { ...pods[i % pods.length], kind: 'Pod', apiVersion: 'v1' } as never));

    const answers = await Promise.all(
      events.map(async (e) => {
        const sentAt = performance.now();
        const res = await app.fetch(toBinaryRequest('http://in-process/', e));
        const answeredAt = performance.now();
        return { id: e.id, sentAt, answeredAt, status: res.status, body: await res.text() };
      }),
    );

    const snapshotReads = requests.filter((r) => r === `GET ${paths.neoset(stack.namespace, NAME)}`).length;
    const runs = new Set([...covered.values()].map((c) => c.startedAt)).size;
    console.log(`coalescing: ${EVENTS} events → ${snapshotReads} snapshot reads, ${runs} reconciles, ${requests.length} API requests`);

    expect(answers.map((a) => a.status)).toEqual(Array(EVENTS).fill(200));
    expect(answers.map((a) => a.body)).toEqual(Array(EVENTS).fill(''));
    expect(snapshotReads).toBeGreaterThanOrEqual(1);
    expect(snapshotReads).toBeLessThanOrEqual(2);
    expect(runs).toBe(snapshotReads);
    expect(requests.filter((r) => !r.startsWith('GET '))).toEqual([]); // a settled NeoSet: nothing to write
    for (const a of answers) {
      const c = covered.get(a.id);
      expect(c, `event ${a.id} was answered by a reconcile`).toBeDefined();
      expect(c!.neoset).toBe(`${stack.namespace}/${NAME}`);
      expect(c!.startedAt).toBeGreaterThan(a.sentAt);
      expect(c!.startedAt).toBeGreaterThanOrEqual(c!.arrivedAt);
      expect(c!.finishedAt).toBeLessThanOrEqual(a.answeredAt);
    }
  });
});
