// The in-flight table of SPEC §2.0, driven by a fake reconcile whose runs the test finishes by hand:
// every step is deterministic, and the clock is a counter, so "started after it arrived" is exact.
import { describe, expect, it } from 'vitest';
import { createCoalescer, mapBounded } from './coalesce.ts';
import type { NeoSetKey } from './reconcile.ts';

interface FakeRun {
  key: string;
  ask: string[];
  startedAt: number;
  finish(value?: string): void;
  fail(err: Error): void;
}

/** A coalescer over a fake reconcile: `runs` lists the runs started, each finished by the test. */
function fake() {
  let t = 0;
  const clock = () => ++t;
  const runs: FakeRun[] = [];
  const coalescer = createCoalescer<string[], string>({
    clock,
    merge: (a, b) => [...a, ...b],
    run: (key, ask) => {
      const { promise, resolve, reject } = Promise.withResolvers<string>();
      const id = `${key.namespace}/${key.name}`;
      runs.push({ key: id, ask, startedAt: t, finish: (v = `${id}#${runs.length}`) => resolve(v), fail: reject });
      return promise;
    },
  });
  /** Calls the coalescer as an event would, recording when it arrived and how it was answered. */
  const event = (key: NeoSetKey, name: string) => {
    const arrivedAt = clock();
    const answer: { arrivedAt: number; settled: boolean; value?: string; startedAt?: number; finishedAt?: number; error?: Error } = { arrivedAt, settled: false };
    coalescer.reconcile(key, [name]).then(
      (c) => Object.assign(answer, { settled: true, value: c.value, startedAt: c.startedAt, finishedAt: c.finishedAt }),
      (err: Error) => Object.assign(answer, { settled: true, error: err }),
    );
    return answer;
  };
  return { coalescer, runs, event };
}

const flush = () => new Promise((r) => setImmediate(r));
const db: NeoSetKey = { namespace: 'ns', name: 'db' };
const web: NeoSetKey = { namespace: 'ns', name: 'web' };

describe('coalescing reconciles per NeoSet (SPEC §2.0)', () => {
  it('starts a run at once when none is in flight, and answers with it', async () => {
    const { runs, event, coalescer } = fake();
    const a = event(db, 'a');
    expect(runs.map((r) => r.ask)).toEqual([['a']]);
    expect(coalescer.inFlight()).toBe(1);
    runs[0].finish('done');
    await flush();
    expect(a).toMatchObject({ settled: true, value: 'done' });
    expect(a.startedAt!).toBeGreaterThan(a.arrivedAt);
    expect(coalescer.inFlight()).toBe(0);
  });

  it('N calls during one run share exactly one follow-up, started when the run ends', async () => {
    const { runs, event, coalescer } = fake();
    const first = event(db, 'first');
    const waiting = Array.from({ length: 20 }, (_, i) => event(db, `e${i}`));
    await flush();
    expect(runs).toHaveLength(1); // no second run while the first is in flight
    runs[0].finish();
    await flush();
    expect(runs).toHaveLength(2);
    expect(runs[1].ask).toEqual(Array.from({ length: 20 }, (_, i) => `e${i}`)); // the follow-up covers them all
    expect(first.settled).toBe(true);
    expect(waiting.some((w) => w.settled)).toBe(false); // run 1 started before them: it answers none
    runs[1].finish('run 2');
    await flush();
    expect(runs).toHaveLength(2);
    expect(waiting.every((w) => w.settled && w.value === 'run 2')).toBe(true);
    expect(coalescer.inFlight()).toBe(0);
  });

  it('an event that arrived during run 1 is answered only after run 2, which started after it, finished', async () => {
    const { runs, event } = fake();
    event(db, 'a');
    const b = event(db, 'b');
    runs[0].finish();
    await flush();
    expect(b.settled).toBe(false);
    const c = event(db, 'c'); // arrives while run 2 (which covers b) runs: needs run 3
    runs[1].finish();
    await flush();
    expect(b.settled).toBe(true);
    expect(b.startedAt!).toBeGreaterThan(b.arrivedAt);
    expect(b.startedAt!).toBe(runs[1].startedAt);
    expect(c.settled).toBe(false);
    expect(runs[2].ask).toEqual(['c']);
    runs[2].finish();
    await flush();
    expect(c).toMatchObject({ settled: true, startedAt: runs[2].startedAt });
    expect(c.startedAt!).toBeGreaterThan(c.arrivedAt);
    expect(c.finishedAt!).toBeGreaterThan(c.startedAt!);
  });

  it('a failed run rejects exactly the calls it covered', async () => {
    const { runs, event } = fake();
    const a = event(db, 'a');
    const b1 = event(db, 'b1');
    const b2 = event(db, 'b2');
    runs[0].finish('ok');
    await flush();
    const c = event(db, 'c');
    runs[1].fail(new Error('503 from the API server'));
    await flush();
    expect(a).toMatchObject({ settled: true, value: 'ok' });
    expect(b1.error?.message).toBe('503 from the API server');
    expect(b2.error?.message).toBe('503 from the API server');
    expect(c.settled).toBe(false); // arrived during the failed run: its own follow-up decides
    runs[2].finish('ok again');
    await flush();
    expect(c).toMatchObject({ settled: true, value: 'ok again' });
  });

  it('a failure of the first run does not stop the follow-up, nor leave a NeoSet stuck', async () => {
    const { runs, event, coalescer } = fake();
    const a = event(db, 'a');
    const b = event(db, 'b');
    runs[0].fail(new Error('boom'));
    await flush();
    expect(a.error?.message).toBe('boom');
    runs[1].finish('fine');
    await flush();
    expect(b).toMatchObject({ settled: true, value: 'fine' });
    expect(coalescer.inFlight()).toBe(0);
    event(db, 'later');
    expect(runs).toHaveLength(3); // a fresh run at once
  });

  it('runs for different NeoSets go in parallel, each coalescing its own events', async () => {
    const { runs, event, coalescer } = fake();
    const d = event(db, 'd');
    const w = event(web, 'w');
    expect(runs.map((r) => r.key)).toEqual(['ns/db', 'ns/web']);
    expect(coalescer.inFlight()).toBe(2);
    const d2 = event(db, 'd2');
    runs[1].finish('web done'); // web finishes while db still runs
    await flush();
    expect(w).toMatchObject({ settled: true, value: 'web done' });
    expect(d.settled).toBe(false);
    expect(runs).toHaveLength(2);
    runs[0].finish();
    await flush();
    expect(runs.map((r) => [r.key, r.ask])).toEqual([['ns/db', ['d']], ['ns/web', ['w']], ['ns/db', ['d2']]]);
    runs[2].finish();
    await flush();
    expect(d2.settled).toBe(true);
  });

  it('the same name in two namespaces is two NeoSets', () => {
    const { runs, event } = fake();
    event({ namespace: 'a', name: 'db' }, 'x');
    event({ namespace: 'b', name: 'db' }, 'y');
    expect(runs).toHaveLength(2);
  });
});

describe('mapBounded', () => {
  it('keeps at most `limit` calls in flight and returns results in order', async () => {
    let inFlight = 0;
    let most = 0;
    const out = await mapBounded([...Array(30).keys()], 8, async (i) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, (i * 7) % 5));
      inFlight--;
      return i * 2;
    });
    expect(most).toBe(8);
    expect(out).toEqual([...Array(30).keys()].map((i) => i * 2));
  });

  it('handles no items', async () => {
    expect(await mapBounded([], 8, async () => 1)).toEqual([]);
  });
});
