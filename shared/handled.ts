// SPEC §2.3: every promise is handled from birth. A promise started now and awaited later (after an
// await in between) has no handler meanwhile; if it rejects then, Node reports an unhandled
// rejection — which, without shared/http/unhandled.ts, ends the process (issue 19: a pod LIST's 500
// while the NeoSet GET was in flight took down reconcile instances).

/**
 * `promise` itself, with a handler attached at once: whoever awaits it later still gets its
 * rejection; if nobody ever does (a read made useless by a 404), the rejection goes nowhere.
 */
export function handledFromBirth<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}
