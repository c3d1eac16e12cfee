// Resync ticks sharing one sweep (SPEC §2.5), driven by a fake list and fake runs that the test ends by
// hand: which runs a tick is answered with, and that each started after the tick arrived (§2.0).
import { describe, expect, it } from 'vitest';
import type { NeoSetKey } from './reconcile.ts';
import { createSweeper, type SweepSummary, type Swept } from './sweep.ts';

interface FakeRun {
  name: string;
  /** The step (ticks and run starts counted together) it started at. */
  startedAt: number;
  finish(): void;
  fail(err: Error): void;
}

const keys = (...names: string[]): NeoSetKey[] => names.map((name) => ({ namespace: 'ns', name }));
const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

/** A sweeper whose list pages and runs the test releases by hand. */
function fake(parallelism = 2) {
  let step = 0;
  const runs: FakeRun[] = [];
  const summaries: SweepSummary[] = [];
  /** One entry per list read: its pages, released by `page()` in order. */
  const lists: { pages: PromiseWithResolvers<NeoSetKey[] | null>[] }[] = [];
  let running = 0;
  let mostRunning = 0;
  const sweeper = createSweeper<string>({
    parallelism,
    onSweep: (s) => summaries.push(s),
    pages: async function* () {
      const list = { pages: [Promise.withResolvers<NeoSetKey[] | null>()] };
      lists.push(list);
      for (let i = 0; ; i++) {
        const page = await list.pages[i].promise;
        if (page === null) return;
        list.pages.push(Promise.withResolvers());
        yield page;
      }
    },
    run: (key) => {
      const { promise, resolve, reject } = Promise.withResolvers<string>();
      running++;
      mostRunning = Math.max(mostRunning, running);
      const run: FakeRun = {
        name: key.name,
        startedAt: ++step,
        finish: () => resolve(`${key.name}@${run.startedAt}`),
        fail: reject,
      };
      runs.push(run);
      return promise.finally(() => running--);
    },
  });
  /** Sends a tick, recording the step it arrived at and its answer. */
  const tick = (id: string) => {
    const answer: { arrivedAt: number; settled: boolean; swept?: Swept<string>[]; error?: Error } = { arrivedAt: ++step, settled: false };
    sweeper.tick(id).then(
      (swept) => Object.assign(answer, { settled: true, swept }),
      (error: Error) => Object.assign(answer, { settled: true, error }),
    );
    return answer;
  };
  /** Releases the next page of the latest list (null: the list is over). */
  const page = async (items: NeoSetKey[] | null) => {
    const list = lists.at(-1)!;
    list.pages.at(-1)!.resolve(items);
    await flush();
  };
  /** Finishes every run in flight, repeatedly, until none is left. */
  const drain = async () => {
    for (let pending = runs.filter((r) => !(r as { done?: true }).done); pending.length > 0; pending = runs.filter((r) => !(r as { done?: true }).done)) {
      for (const r of pending) {
        (r as { done?: true }).done = true;
        r.finish();
      }
      await flush();
    }
  };
  return { sweeper, runs, summaries, lists, tick, page, drain, mostRunning: () => mostRunning };
}

describe('resync ticks share one sweep (SPEC §2.5)', () => {
  it('ticks arriving while the NeoSets are listed share that list and one run of each NeoSet', async () => {
    const f = fake(2);
    const ticks = ['t1', 't2', 't3', 't4', 't5'].map(f.tick);
    await f.page(keys('a', 'b', 'c'));
    await f.page(null);
    await f.drain();
    expect(f.lists).toHaveLength(1);
    expect(f.runs.map((r) => r.name).sort()).toEqual(['a', 'b', 'c']);
    for (const t of ticks) {
      expect(t.settled).toBe(true);
      expect(t.swept!.map((s) => s.key.name)).toEqual(['a', 'b', 'c']);
      // §2.0: every NeoSet's answer is a run that started after the tick arrived.
      for (const s of t.swept!) expect(Number(s.value.split('@')[1])).toBeGreaterThan(t.arrivedAt);
    }
    expect(f.mostRunning()).toBeLessThanOrEqual(2);
    expect(f.summaries).toEqual([expect.objectContaining({ neosets: 3, runs: 3, ticks: 5, joined: 4, redelivered: 0, lists: 1 })]);
  });

  it("a page's NeoSets are reconciled while the next page is listed", async () => {
    const f = fake(4);
    f.tick('t1');
    await f.page(keys('a', 'b'));
    expect(f.runs.map((r) => r.name)).toEqual(['a', 'b']);
    await f.page(keys('c'));
    expect(f.runs.map((r) => r.name)).toEqual(['a', 'b', 'c']);
  });

  it('a tick arriving mid-sweep shares the runs not yet started and has the started ones run again, once', async () => {
    const f = fake(1);
    const first = f.tick('t1');
    await f.page(keys('a', 'b', 'c'));
    await f.page(null);
    expect(f.runs.map((r) => r.name)).toEqual(['a']); // b and c queued
    const second = f.tick('t2'); // a started before it: runs again; b and c not yet: shared
    await f.page(keys('a', 'b', 'c'));
    await f.page(null);
    const third = f.tick('t3'); // same moment for a (its second run is queued): shared
    await f.page(keys('a', 'b', 'c'));
    await f.page(null);
    await f.drain();
    expect(f.runs.map((r) => r.name)).toEqual(['a', 'b', 'c', 'a']);
    for (const t of [first, second, third]) {
      expect(t.swept!.map((s) => s.key.name)).toEqual(['a', 'b', 'c']);
      for (const s of t.swept!) expect(Number(s.value.split('@')[1]), `${s.value} answers a tick that arrived at ${t.arrivedAt}`).toBeGreaterThan(t.arrivedAt);
    }
    expect(f.lists).toHaveLength(3);
    expect(f.summaries).toEqual([expect.objectContaining({ neosets: 3, runs: 4, ticks: 3, joined: 2, lists: 3 })]);
  });

  it('a redelivered tick (same id) in flight is answered with it: no list, no run', async () => {
    const f = fake(2);
    const original = f.tick('t1');
    await f.page(keys('a', 'b'));
    await f.page(null);
    const again = f.tick('t1');
    await f.drain();
    expect(f.lists).toHaveLength(1);
    expect(f.runs).toHaveLength(2);
    expect(again.swept).toEqual(original.swept);
    expect(f.summaries).toEqual([expect.objectContaining({ runs: 2, ticks: 2, redelivered: 1 })]);
  });

  it('runs at most `parallelism` NeoSets at once', async () => {
    const f = fake(3);
    f.tick('t1');
    await f.page(keys(...Array.from({ length: 20 }, (_, i) => `n${i}`)));
    await f.page(null);
    expect(f.runs).toHaveLength(3);
    await f.drain();
    expect(f.runs).toHaveLength(20);
    expect(f.mostRunning()).toBe(3);
  });

  it('a list that fails rejects the ticks waiting for it; the next tick lists again', async () => {
    const f = fake(2);
    const [a, b] = [f.tick('t1'), f.tick('t2')];
    f.lists[0].pages[0].reject(new Error('503 etcd leader changed'));
    await flush();
    expect([a.error?.message, b.error?.message]).toEqual(['503 etcd leader changed', '503 etcd leader changed']);
    expect(f.summaries).toEqual([expect.objectContaining({ runs: 0, ticks: 2, lists: 1 })]);
    const c = f.tick('t3');
    await f.page(keys('a'));
    await f.page(null);
    await f.drain();
    expect(c.swept!.map((s) => s.value)).toEqual([expect.stringMatching(/^a@/)]);
  });

  it('a run that fails fails the ticks it answers, not the sweep', async () => {
    const f = fake(2);
    const t = f.tick('t1');
    await f.page(keys('a', 'b'));
    await f.page(null);
    f.runs[0].fail(new Error('bug'));
    await f.drain();
    expect(t.error?.message).toBe('bug');
    expect(f.summaries).toHaveLength(1);
    const next = f.tick('t2');
    await f.page(keys('a'));
    await f.page(null);
    await f.drain();
    expect(next.swept!.map((s) => s.key.name)).toEqual(['a']);
  });
});
