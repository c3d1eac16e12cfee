// A Go duration (time.ParseDuration), as kubectl's --timeout and canary pauses (SPEC §4.11) take it: "30s", "1m30s", "1.5h", "500ms",
// or "0" for no limit. Hand-written because it is a dozen lines and the npm duration parsers
// (ms, parse-duration) accept other spellings ("1 min", bare numbers) that kubectl would refuse.

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = String.raw`(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)`;

/** Milliseconds, or undefined when `text` is not a non-negative Go duration. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  if (text === '') return undefined;
  if (!new RegExp(`^(?:${PART})+$`).test(text)) return undefined;
  let ms = 0;
  for (const m of text.matchAll(new RegExp(PART, 'g'))) ms += Number(m[1]) * UNIT_MS[m[2]];
  return ms;
}

/** Go's String() for whole seconds and above, as kubectl echoes durations: 90000 → "1m30s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}
