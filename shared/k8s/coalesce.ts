// Coalesce, never forget (SPEC §2.0): an instance runs at most one reconcile per NeoSet at a time.
// Events for a NeoSet that arrive while one runs share ONE follow-up, which starts when that run ends;
// each event is answered only when a run that started after it arrived has finished, so an
// acknowledged event was acted on. The table below is the only thing an instance keeps, and losing it
// (a restart) loses nothing: an unanswered event is redelivered by the Broker.
import type { NeoSetKey } from './reconcile.ts';

/** One run's result, with when it started and finished on the coalescer's clock. */
export interface Covered<T> {
  value: T;
  startedAt: number;
  finishedAt: number;
}

export interface CoalescerOptions<A, T> {
  /** Reconciles one NeoSet; `ask` is what the events it covers want of it (merged, see `merge`). */
  run: (key: NeoSetKey, ask: A) => Promise<T>;
  /** Combines what two events ask of the one run that covers both. */
  merge: (a: A, b: A) => A;
  /** Timestamps for `Covered` (default performance.now(): monotonic, in-process). */
  clock?: () => number;
}

export interface Coalescer<A, T> {
  /**
   * Settles with a run of `key` that started after this call, once that run has finished: at once if
   * none is running, else as part of the single follow-up that every caller meanwhile shares.
   * A run that throws rejects exactly the calls it covered.
   */
  reconcile(key: NeoSetKey, ask: A): Promise<Covered<T>>;
  /** NeoSets with a run in flight. */
  inFlight(): number;
}

interface Batch<A, T> {
  ask: A;
  settle: PromiseWithResolvers<Covered<T>>;
}

interface Slot<A, T> {
  /** The follow-up: every call that arrived while the current run was going. */
  next: Batch<A, T> | null;
}

export function createCoalescer<A, T>(opts: CoalescerOptions<A, T>): Coalescer<A, T> {
  const clock = opts.clock ?? (() => performance.now());
  // The in-flight table (STYLE §6): keyed namespace/name, one per app instance.
  const slots = new Map<string, Slot<A, T>>();

  const start = async (id: string, key: NeoSetKey, batch: Batch<A, T>): Promise<void> => {
    const startedAt = clock();
    try {
      const value = await opts.run(key, batch.ask);
      batch.settle.resolve({ value, startedAt, finishedAt: clock() });
    } catch (err) {
      batch.settle.reject(err);
    }
    // Synchronous from here on: a call arriving after this run ended either joins the follow-up
    // started below (which starts now, after it) or finds no slot and starts its own run.
    const slot = slots.get(id)!;
    const next = slot.next;
    if (next === null) {
      slots.delete(id);
      return;
    }
    slot.next = null;
    void start(id, key, next);
  };

  return {
    reconcile(key, ask) {
      const id = `${key.namespace}/${key.name}`;
      const slot = slots.get(id);
      if (slot === undefined) {
        const batch: Batch<A, T> = { ask, settle: Promise.withResolvers() };
        slots.set(id, { next: null });
        void start(id, key, batch);
        return batch.settle.promise;
      }
      if (slot.next === null) {
        slot.next = { ask, settle: Promise.withResolvers() };
      } else {
        slot.next.ask = opts.merge(slot.next.ask, ask);
      }
      return slot.next.settle.promise;
    },
    inFlight: () => slots.size,
  };
}

/** Maps `items` through `fn` with at most `limit` calls in flight; results in the order of `items`. */
export async function mapBounded<I, O>(items: readonly I[], limit: number, fn: (item: I) => Promise<O>): Promise<O[]> {
  const results = new Array<O>(items.length);
  let i = 0;
  const worker = async () => {
    while (i < items.length) {
      const at = i++;
      results[at] = await fn(items[at]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
