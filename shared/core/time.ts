// Time as Kubernetes writes it: RFC 3339 strings with whole seconds (metav1.Time). The core never
// reads a clock: `now` is decide()'s argument, in milliseconds since the epoch inside the core.

/** RFC 3339, truncated to the second like metav1.Time, e.g. 2024-05-01T10:00:00Z. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** RFC 3339 rounded UP to the second: a moment no earlier than `ms`, for a time a wait is counted from. */
export function rfc3339Ceil(ms: number): string {
  return rfc3339(Math.ceil(ms / 1000) * 1000);
}

/**
 * Milliseconds of an RFC 3339 string. A missing or unreadable timestamp reads as the epoch: a
 * corrupted memory then means "long ago" (waits are over, deadlines passed), never "wait forever".
 */
export function toMs(time: string | undefined | null): number {
  const ms = time ? Date.parse(time) : NaN;
  return Number.isNaN(ms) ? 0 : ms;
}

/** Whole seconds from `fromMs` to `toMs`, rounded up, so that a requeue never fires early. */
export function secondsUntil(fromMs: number, untilMs: number): number {
  return Math.max(0, Math.ceil((untilMs - fromMs) / 1000));
}

/**
 * The earliest future moment at which something time-based changes (minReadySeconds expiry, a grace
 * period's end, an in-place deadline): decide()'s requeueAfter (§4.5).
 */
export class Wakeups {
  readonly #now: number;
  #earliest = Infinity;
  constructor(nowMs: number) {
    this.#now = nowMs;
  }
  at(ms: number): void {
    if (ms > this.#now && ms < this.#earliest) this.#earliest = ms;
  }
  /** Seconds until the earliest future moment, at least 1; null when nothing is pending. */
  requeueAfter(): number | null {
    return this.#earliest === Infinity ? null : Math.max(1, secondsUntil(this.#now, this.#earliest));
  }
}
