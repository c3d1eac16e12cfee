// SPEC §2.3 "no fault may crash a process", as the suites that run the functions as real processes
// (dev/functions.ts) check it while they wait: a function that exits before the test stops it.
import type { RunningFunction } from '../../dev/functions.ts';
import { handledFromBirth } from '../../shared/handled.ts';

/**
 * Rejects, naming the process and the tail of its log, as soon as one of `functions` exits while
 * `stopping()` is false; never settles otherwise. Handled from birth: race every wait against it.
 */
export function failOnExit(functions: RunningFunction[], stopping: () => boolean): Promise<never> {
  return handledFromBirth(
    Promise.race(
      functions.map(async (fn) => {
        const code = await fn.process.exited;
        if (!stopping()) throw new Error(`${fn.name} (pid ${fn.process.pid}) exited by itself, rc=${code}; log ${fn.process.logPath}:\n${fn.process.tail(15)}`);
        return new Promise<never>(() => {});
      }),
    ),
  );
}
