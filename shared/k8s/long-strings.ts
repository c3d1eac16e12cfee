// Long string values cut from an item's bytes before it becomes a string (answer-stream.ts): a pod
// with 200 KiB of template annotations parsed and then trimmed (pod-trim.ts) still made a 200 KiB
// string of its bytes and another of the value, each in V8's large-object space until the next full
// collection — 1,000 such pods left 200 MiB of heap to collect, 228 MiB of RSS at the peak for 30 MiB
// kept (bench on 2026-12-07). Cut from the bytes, a long value is never made: the item's text is its
// short strings and the stand-ins.
//
// Strings are found by their quotes (Buffer.indexOf, native), a quote preceded by an odd number of
// backslashes being part of the string. A string followed by `:` is a key, never cut; a value right
// after a key that starts with `keepKeyPrefix` (NeoSet's own annotations) is kept whatever its length.

export interface LongStrings {
  /** Values longer than this many bytes are cut. */
  over: number;
  /** A value of a key starting with this is kept (none: no value is kept for its key). */
  keepKeyPrefix?: string;
  /** The JSON string (quoted) that stands in for a value of `length` bytes. */
  standIn: (length: number) => string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** The [from, to) byte ranges of body[start, end) holding a string value to cut (its quotes included). */
export function longStringRanges(body: Buffer, start: number, end: number, { over, keepKeyPrefix }: LongStrings): [number, number][] {
  const ranges: [number, number][] = [];
  const prefix = keepKeyPrefix === undefined ? null : Buffer.from(keepKeyPrefix);
  let keep = false;
  for (let i = start; ; ) {
    const open = body.indexOf(QUOTE, i);
    if (open < 0 || open >= end) return ranges;
    let close = open + 1;
    for (;;) {
      close = body.indexOf(QUOTE, close);
      if (close < 0 || close >= end) return ranges; // unterminated: JSON.parse will say so
      let escapes = 0;
      while (body[close - 1 - escapes] === BACKSLASH) escapes++;
      if (escapes % 2 === 0) break;
      close++;
    }
    let next = close + 1;
    while (next < end && (body[next] === 0x20 || body[next] === 0x0a || body[next] === 0x0d || body[next] === 0x09)) next++;
    if (body[next] === COLON) keep = prefix !== null && close - open - 1 >= prefix.length && body.compare(prefix, 0, prefix.length, open + 1, open + 1 + prefix.length) === 0;
    else {
      if (close - open - 1 > over && !keep) ranges.push([open, close + 1]);
      keep = false;
    }
    i = close + 1;
  }
}

/** body[start, end) as text, each [from, to, standIn) of `drops` (in order, not overlapping) replaced by its stand-in. */
export function textWithout(body: Buffer, start: number, end: number, drops: readonly (readonly [number, number, string])[]): string {
  let text = '';
  let from = start;
  for (const [dropFrom, dropTo, standIn] of drops) {
    text += body.toString('utf8', from, dropFrom) + standIn;
    from = dropTo;
  }
  return text + body.toString('utf8', from, end);
}

/** The whole of `body` as text, its long string values (`longStrings`) replaced by their stand-ins. */
export function textWithoutLongStrings(body: Buffer, longStrings: LongStrings): string {
  const drops = longStringRanges(body, 0, body.length, longStrings).map(([from, to]) => [from, to, longStrings.standIn(to - from - 2)] as const);
  return textWithout(body, 0, body.length, drops);
}
