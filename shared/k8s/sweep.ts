// Resync ticks share one sweep (SPEC §2.5). A tick asks for a run of every NeoSet; on its own, each
// tick listed every NeoSet and ran them all with its own workers, so ticks that overlapped — the next
// minute's during a long sweep, a redelivery after the 60 s request timeout, a forged one — each cost
// a whole sweep more (issue 34). Here an instance keeps ONE queue of NeoSet runs, as client-go's
// workqueue does under an informer's resync:
//   * a tick is answered once, for every NeoSet listed for it, a run that started after it arrived has
//     finished (SPEC §2.0 "acknowledged means acted on"): a NeoSet whose run is still queued, or
//     started after the tick arrived, is shared; one whose run started before is queued once more;
//   * one list of the NeoSets at a time: ticks that arrive while it is read take it too. Its pages are
//     queued as they arrive, so the first NeoSets are reconciled while the rest are listed. (A NeoSet
//     created between the list's read and a later tick's arrival is left to its own event, or the
//     next tick: a window of one list's round trip.)
//   * the same tick again while it is in flight (the Broker's redelivery after a timeout: same id) is
//     answered with it — anyone may copy an id, and gains only that answer;
//   * at most `parallelism` runs at a time, whatever the ticks: the API server's load and the
//     instance's sockets stay bounded, and the queue holds each NeoSet at most once.
// A sweep is the time the queue is busy; its size and duration go to the metrics and the log. Like the
// per-NeoSet coalescer, this is bookkeeping whose loss loses nothing: an unanswered tick is
// redelivered, and the next one sweeps anyway.
import { handledFromBirth } from '../handled.ts';
import { sweepDuration, sweepNeoSets, sweepRuns, sweepTicks } from '../metrics/sweep.ts';
import type { NeoSetKey } from './reconcile.ts';

export interface SweepOptions<T> {
  /** The NeoSets to sweep, a page at a time (neoset-keys.ts). */
  pages: () => AsyncIterable<NeoSetKey[]>;
  /** One NeoSet's run (through the per-NeoSet coalescer: started after this call). */
  run: (key: NeoSetKey) => Promise<T>;
  /** Runs at most at once. */
  parallelism: number;
  /** Told each sweep's figures once its queue is empty. */
  onSweep?: (summary: SweepSummary) => void;
  /** The sweep's duration is measured on it (default performance.now()). */
  clock?: () => number;
}

export interface SweepSummary {
  ms: number;
  /** NeoSets the sweep's last list named. */
  neosets: number;
  /** NeoSet runs it made (a NeoSet twice when a later tick found its run already started). */
  runs: number;
  /** Ticks it answered: the one that started it, those that joined, the redeliveries. */
  ticks: number;
  joined: number;
  redelivered: number;
  /** Lists of the NeoSets it read (one, unless ticks arrived after a list was read). */
  lists: number;
}

export interface Swept<T> {
  key: NeoSetKey;
  value: T;
}

export interface Sweeper<T> {
  /**
   * Settles once every NeoSet listed for this tick has had a run that started after the tick arrived
   * finish, with their values in the list's order; rejects when the list cannot be read (or a run
   * rejects). `id`: the tick's event id (a redelivery carries its original's).
   */
  tick(id: string): Promise<Swept<T>[]>;
}

interface Entry<T> {
  key: NeoSetKey;
  /** The ordinal (of arrivals and dispatches) its run was dispatched at; undefined while queued. */
  dispatched?: number;
  done: PromiseWithResolvers<T>;
}

interface Waiter<T> {
  arrived: number;
  covered: PromiseWithResolvers<Entry<T>[]>;
}

interface Listing<T> {
  /** The first tick's arrival: the pages' NeoSets are queued for it as they come. */
  arrived: number;
  waiters: Waiter<T>[];
}

/** The sweep in progress: its figures so far. */
type Sweep = Omit<SweepSummary, 'ms'> & { startedAt: number };

const idOf = (key: NeoSetKey) => `${key.namespace}/${key.name}`;

export function createSweeper<T>(opts: SweepOptions<T>): Sweeper<T> {
  const clock = opts.clock ?? (() => performance.now());
  // Arrivals and dispatches in one order: a run dispatched after a tick arrived has the higher ordinal.
  let order = 0;
  const queue: Entry<T>[] = [];
  /** Each NeoSet's latest run of this sweep, queued or dispatched (cleared with the sweep). */
  const latest = new Map<string, Entry<T>>();
  let active = 0;
  let listing: Listing<T> | null = null;
  let sweep: Sweep | null = null;
  /** The answers of the ticks in flight, by event id. */
  const inFlight = new Map<string, Promise<Swept<T>[]>>();

  /** The run that answers, for `key`, a tick that arrived at `arrived`: queued, or started since; else a new one. */
  const cover = (key: NeoSetKey, arrived: number): Entry<T> => {
    const id = idOf(key);
    const last = latest.get(id);
    if (last && (last.dispatched === undefined || last.dispatched > arrived)) return last;
    const entry: Entry<T> = { key, done: Promise.withResolvers() };
    // Awaited by the ticks it covers; if their list failed first, by nobody.
    handledFromBirth(entry.done.promise);
    latest.set(id, entry);
    queue.push(entry);
    return entry;
  };

  const pump = () => {
    while (active < opts.parallelism && queue.length > 0) {
      const entry = queue.shift()!;
      entry.dispatched = ++order;
      active++;
      sweep!.runs++;
      // A run that throws, even at once, fails only the ticks it answers.
      (async () => opts.run(entry.key))()
        .then(entry.done.resolve, entry.done.reject)
        .finally(() => {
          active--;
          pump();
          settle();
        });
    }
  };

  /** The sweep is over once nothing is listed, queued or running. */
  const settle = () => {
    if (sweep === null || listing !== null || active > 0 || queue.length > 0) return;
    const { startedAt, ...figures } = sweep;
    const ms = clock() - startedAt;
    sweep = null;
    latest.clear();
    sweepDuration.observe(ms / 1000);
    sweepNeoSets.set(figures.neosets);
    sweepRuns.set(figures.runs);
    opts.onSweep?.({ ms: Math.round(ms), ...figures });
  };

  const list = (arrived: number): Listing<T> => {
    const started: Listing<T> = { arrived, waiters: [] };
    sweep!.lists++;
    (async () => {
      const keys: NeoSetKey[] = [];
      for await (const page of opts.pages()) {
        for (const key of page) {
          keys.push(key);
          cover(key, started.arrived);
        }
        pump();
      }
      return keys;
    })().then(
      (keys) => {
        // Synchronously, before the sweep can be seen as over: each tick takes its runs now.
        listing = null;
        sweep!.neosets = keys.length;
        for (const w of started.waiters) w.covered.resolve(keys.map((key) => cover(key, w.arrived)));
        pump();
        settle();
      },
      (err: unknown) => {
        listing = null;
        for (const w of started.waiters) w.covered.reject(err);
        settle();
      },
    );
    return started;
  };

  return {
    tick(id) {
      const same = inFlight.get(id);
      if (same) {
        sweepTicks.inc({ how: 'redelivered' });
        if (sweep) {
          sweep.redelivered++;
          sweep.ticks++;
        }
        return same;
      }
      const arrived = ++order;
      sweepTicks.inc({ how: sweep === null ? 'started' : 'joined' });
      if (sweep === null) sweep = { startedAt: clock(), neosets: 0, runs: 0, ticks: 0, joined: 0, redelivered: 0, lists: 0 };
      else sweep.joined++;
      sweep.ticks++;
      const waiter: Waiter<T> = { arrived, covered: Promise.withResolvers() };
      (listing ??= list(arrived)).waiters.push(waiter);
      const answer = waiter.covered.promise.then((entries) => Promise.all(entries.map(async (e) => ({ key: e.key, value: await e.done.promise }))));
      inFlight.set(id, answer);
      const forget = () => inFlight.delete(id);
      answer.then(forget, forget);
      return answer;
    },
  };
}
