// Per-key serialized work, as client-go's workqueue gives a controller: one sync per key at a time;
// a request while it runs makes it run once more afterwards; a key can ask to be woken at a time.
// stop() cancels every timer and resolves when no sync is running any more.

export interface WorkQueue<T> {
  /** Sync `key` now (or right after its running sync), with an optional fresh object for it. */
  enqueue(key: string, object?: T): void;
  /** Sync `key` at `at` (ms since epoch) unless an earlier wake-up is already set. */
  wakeAt(key: string, at: number): void;
  /** Forget any wake-up of `key`. */
  cancel(key: string): void;
  stop(): Promise<void>;
}

export function createWorkQueue<T>(sync: (key: string, object: T | undefined) => Promise<void>, log: (msg: string) => void): WorkQueue<T> {
  let stopped = false;
  const running = new Map<string, Promise<void>>();
  const again = new Map<string, T | undefined>();
  const timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();

  const run = (key: string, object: T | undefined): void => {
    const done = sync(key, object)
      .catch((err: unknown) => log(`sync ${key}: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        running.delete(key);
        if (stopped || !again.has(key)) return;
        const next = again.get(key);
        again.delete(key);
        run(key, next);
      });
    running.set(key, done);
  };

  const queue: WorkQueue<T> = {
    enqueue(key, object) {
      if (stopped) return;
      if (running.has(key)) again.set(key, object ?? again.get(key));
      else run(key, object);
    },
    wakeAt(key, at) {
      if (stopped) return;
      const pending = timers.get(key);
      if (pending && pending.at <= at) return;
      if (pending) clearTimeout(pending.timer);
      const timer = setTimeout(() => {
        timers.delete(key);
        queue.enqueue(key);
      }, Math.max(0, at - Date.now()));
      timers.set(key, { at, timer });
    },
    cancel(key) {
      const pending = timers.get(key);
      if (pending) clearTimeout(pending.timer);
      timers.delete(key);
    },
    async stop() {
      stopped = true;
      for (const { timer } of timers.values()) clearTimeout(timer);
      timers.clear();
      again.clear();
      while (running.size > 0) await Promise.all(running.values());
    },
  };
  return queue;
}
