// SPEC §2.3 "One clock": the `now` a decision is made at, and every time NeoSet writes, is the API
// server's, read from the `Date` of the run's own responses — not the instance's wall clock, which a
// node may have wrong by any amount. Instances on skewed nodes then decide alike.
//
// Which bound. `Date` is the server's time truncated to the second, taken while it answered, so at
// the instant a response reaches us the server's clock reads at least `Date` (it has not gone back,
// and the answer took time to travel). From then on the instance's monotonic clock (performance.now:
// real elapsed time, whatever is done to the wall clock) says how much more has passed. So
// `Date + (monotonic now − monotonic at receipt)` is a lower bound on the server's time, up to about
// 1 s + the one-way latency low; the largest of these bounds over the run's responses is the tightest.
// Low is the safe side for every use: an "has X elapsed since T" check (minReadySeconds, a timed pause,
// a grace period) never counts time that has not passed, and a deadline that fails a rollout
// (timeoutSeconds) fires late rather than early. A stamp written low (stepStartedAt, drainStartedAt, a
// gate's lastTransitionTime) is read by a later check that is itself low by at most as much, so the
// two errors are of one sign and bounded by Date's resolution (the send instant, which would give the
// high bound, is not needed for either).
//
// A response without `Date` (a test's fake client; Go's net/http always sends one) leaves the
// instance's clock as the fallback.
import type { KubeClient } from './client.ts';
import { clockOffset } from '../metrics/registry.ts';

/** The instance's two clocks: wall (epoch ms, possibly skewed) and monotonic (ms, real elapsed time). */
export interface LocalClock {
  wall: () => number;
  monotonic: () => number;
}

export const systemClock: LocalClock = { wall: () => Date.now(), monotonic: () => performance.now() };

export interface ServerClock {
  /** `client`, each response of which is read for its `Date`: use it for the run's requests. */
  client: KubeClient;
  /** The server's time now (the lower bound above); the instance's wall clock until a `Date` is seen. */
  now: () => Date;
  /** The instance's wall clock minus the server's (seconds, ≥ the true offset by up to ~1 s); null until a `Date` is seen. */
  offsetSeconds: () => number | null;
}

/** A clock for one run (a reconcile, a readiness decision): nothing is kept beyond it. */
export function serverClock(client: KubeClient, local: LocalClock = systemClock): ServerClock {
  // The best lower bound so far, as "server ms minus monotonic ms" (constant while both run at one rate).
  let base: number | null = null;
  let offset: number | null = null;
  const observe = (date: string) => {
    const serverMs = Date.parse(date);
    if (!Number.isFinite(serverMs)) return; // a Date we cannot read tells nothing
    const at = local.monotonic();
    const candidate = serverMs - at;
    if (base === null || candidate > base) base = candidate;
    offset = (local.wall() - (base + at)) / 1000;
    clockOffset.set(offset);
  };
  return {
    client: {
      request: (verb, path, opts = {}) =>
        client.request(verb, path, {
          ...opts,
          date: (d) => {
            observe(d);
            opts.date?.(d);
          },
        }),
    },
    now: () => new Date(base === null ? local.wall() : base + local.monotonic()),
    offsetSeconds: () => offset,
  };
}

/**
 * Logs an offset larger than `thresholdSeconds` at most once per `everyMs` (one reporter per app
 * instance: no flood from a node whose clock is simply wrong). The gauge is set on every response.
 */
export function offsetReporter(warn: (offsetSeconds: number) => void, thresholdSeconds = 2, everyMs = 10 * 60_000, monotonic = systemClock.monotonic): (offsetSeconds: number | null) => void {
  let last: number | null = null;
  return (offsetSeconds) => {
    if (offsetSeconds === null || Math.abs(offsetSeconds) <= thresholdSeconds) return;
    const at = monotonic();
    if (last !== null && at - last < everyMs) return;
    last = at;
    warn(offsetSeconds);
  };
}
