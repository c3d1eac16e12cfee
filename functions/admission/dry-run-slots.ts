// A bound on the dry-runs one admission instance runs at once (SPEC §2.3). Each dry-run holds a
// socket to the API server and the Pod's JSON; without a bound, a burst of NeoSet writes (or of
// reviews, before client certificates were required) opened as many as arrived. A few more may wait
// for a slot — a GitOps sync that applies fifty NeoSets at once is smoothed, not refused — but the
// wait counts against the same deadline as the call, so an answer still comes before the webhook's
// timeoutSeconds. Past the queue, the review is refused at once with "busy, retry".
export interface DryRunSlots {
  /** Runs `work` in a slot; 'busy' when none is free and the queue is full, or none came before `signal`. */
  run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T | 'busy'>;
  readonly inFlight: number;
  readonly waiting: number;
}

/**
 * 8 at once: a dry-run takes the API server ~5-20 ms, so 8 slots pass hundreds of NeoSet writes a
 * second — more than a cluster's users make — while the memory they hold (8 Pods of at most the
 * template's size, 1.5 MiB) stays small beside the bodies (app.ts). 32 waiting: four rounds.
 */
export const DRY_RUN_SLOTS = 8;
export const DRY_RUN_QUEUE = 32;

export function createDryRunSlots(slots = DRY_RUN_SLOTS, queue = DRY_RUN_QUEUE): DryRunSlots {
  let inFlight = 0;
  const waiters: (() => void)[] = [];
  const release = () => {
    inFlight -= 1;
    const next = waiters.shift();
    if (next) next();
  };
  const acquire = (signal: AbortSignal): Promise<boolean> => {
    if (signal.aborted) return Promise.resolve(false);
    if (inFlight < slots) {
      inFlight += 1;
      return Promise.resolve(true);
    }
    if (waiters.length >= queue) return Promise.resolve(false);
    return new Promise((resolve) => {
      const granted = () => {
        signal.removeEventListener('abort', gaveUp);
        inFlight += 1;
        resolve(true);
      };
      const gaveUp = () => {
        const i = waiters.indexOf(granted);
        if (i >= 0) waiters.splice(i, 1);
        resolve(false);
      };
      waiters.push(granted);
      signal.addEventListener('abort', gaveUp, { once: true });
    });
  };
  return {
    async run(signal, work) {
      if (!(await acquire(signal))) return 'busy';
      try {
        return await work();
      } finally {
        release();
      }
    },
    get inFlight() {
      return inFlight;
    },
    get waiting() {
      return waiters.length;
    },
  };
}
