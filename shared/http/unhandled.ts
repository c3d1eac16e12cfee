// SPEC §2.3: no fault may crash a process. Node ends a process on a promise rejected with no handler
// (its default --unhandled-rejections=throw) — every request in flight on that instance lost, and
// under Knative a CrashLoopBackOff exactly when the API server is struggling. Every promise is to be
// handled from birth; one that is not is a bug, reported here, loudly, instead of an exit.
import type { Logger } from 'pino';
import { unhandledRejections } from '../metrics/registry.ts';

/**
 * Logs each unhandled rejection at fatal level, with its stack, and counts it
 * (neoset_unhandled_rejections_total); with a listener in place Node no longer exits for it.
 * Returns the function that removes the listener.
 */
export function reportUnhandledRejections(logger: Logger): () => void {
  const listener = (reason: unknown) => {
    unhandledRejections.inc();
    const detail = reason instanceof Error ? { err: reason } : { reason: String(reason) };
    logger.fatal(detail, 'unhandled rejection: a promise without a handler (a bug); the process keeps serving');
  };
  process.on('unhandledRejection', listener);
  return () => void process.off('unhandledRejection', listener);
}
