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
  /** Whether `now` is the server's (a Date seen, or recalled): false while the wall clock stands in. */
  onServerClock: () => boolean;
  /** The instance's wall clock minus the server's (seconds, ≥ the true offset by up to ~1 s); null until a `Date` is seen. */
  offsetSeconds: () => number | null;
}

/** How long a Date read by an earlier run may stand in for one of the run's own (ClockMemory). */
export const RECENT_CLOCK_MS = 10_000;

/**
 * The server's clock as this instance last read it, for a run that writes without reading first (the
 * readiness function's writes on an event's facts, pod-facts.ts): the bound of the latest response, as
 * "server ms minus monotonic ms", while it is at most RECENT_CLOCK_MS old. Each bound is a lower bound
 * on its own (above), so one a few seconds old is as good as a fresh one unless the server's clock is
 * stepped back meanwhile — the same exposure a run has between its read and its write, over seconds
 * instead of milliseconds. Bookkeeping whose loss costs a read (SPEC §2.0): without a recent bound the
 * caller reads first. One per app instance.
 */
export interface ClockMemory {
  remember(base: number, at: number): void;
  /** The latest bound, or null when there is none younger than RECENT_CLOCK_MS. */
  recall(): number | null;
}

export function clockMemory(monotonic: () => number = systemClock.monotonic, ttlMs = RECENT_CLOCK_MS): ClockMemory {
  let latest: { base: number; at: number } | null = null;
  return {
    remember: (base, at) => void (latest = { base, at }),
    recall: () => (latest !== null && monotonic() - latest.at <= ttlMs ? latest.base : null),
  };
}

/**
 * A clock for one run (a reconcile, a readiness decision): nothing is kept beyond it but what it tells
 * `memory` (when given), which also gives it its first bound.
 */
export function serverClock(client: KubeClient, local: LocalClock = systemClock, memory?: ClockMemory): ServerClock {
  // The best lower bound so far, as "server ms minus monotonic ms" (constant while both run at one rate).
  let base: number | null = memory?.recall() ?? null;
  let offset: number | null = null;
  const observe = (date: string) => {
    const serverMs = Date.parse(date);
    if (!Number.isFinite(serverMs)) return; // a Date we cannot read tells nothing
    const at = local.monotonic();
    const candidate = serverMs - at;
    memory?.remember(candidate, at);
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
    onServerClock: () => base !== null,
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
