// Work of a function instance that no request waits for — a reconcile run started by its own re-check
// timer, the Events of such a run — is tracked here, so that a stopping instance (SIGTERM) finishes it
// before it exits, as it finishes the requests in flight: a run killed between its status write and
// its notification loses that notification (shared/events/notify.ts). Bookkeeping only: losing it (a
// crash) loses nothing the cluster does not hold.
const unfinished = new Set<Promise<unknown>>();

/** `work` itself, tracked until it settles (handled from birth: its rejection is its awaiter's). */
export function trackUnfinished<T>(work: Promise<T>): Promise<T> {
  unfinished.add(work);
  const done = () => unfinished.delete(work);
  work.then(done, done);
  return work;
}

/** Resolves once nothing tracked is left (what the work in flight starts meanwhile included). */
export async function allFinished(): Promise<void> {
  while (unfinished.size > 0) await Promise.allSettled([...unfinished]);
}
