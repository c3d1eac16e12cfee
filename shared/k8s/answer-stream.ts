// An API answer parsed as its bytes arrive (SPEC §2.5: "lists paged or streamed"), so that a list is
// never held whole: a PodList of 1,000 pods with 200 KiB of template annotations each is 200 MB of
// JSON, and buffering it, then making it one string, then objects, held it three times over. A list
// answer past WHOLE_PARSE_MAX_BYTES (json-body.ts) is cut into its items as they come — each parsed
// from its own bytes, trimmed by the caller (`trim`, e.g. pod-trim.ts) and its bytes let go — so what
// an answer holds at any moment is the items as kept plus the one item still arriving. Anything else
// (an object, a small list) is buffered and parsed whole as before, up to MAX_OBJECT_BYTES.
//
// Where items end: as json-body.ts explains, at the bytes `},{"<first key>":` — when the piece before
// them parses. A piece that does not was cut at a deeper boundary (a nested array of objects with the
// same first key: a NeoSet's ownerReferences start with apiVersion, as NeoSet items do); its item's
// end is then found by counting brackets, strings skipped, from the item's start: one pass over its
// bytes, resumed as they arrive, never one parse per false boundary.
//
// Every byte is charged to `budget` as it arrives and what a trim cut is refunded, so a charge is
// refused (read-budget.ts) before an answer larger than allowed is buffered.
import { releaseBuffer } from '../buffer-release.ts';
import type { ByteBudget } from './read-budget.ts';
import { textWithoutLongStrings, type LongStrings } from './long-strings.ts';
import { BACKSLASH, CLOSE, CLOSE_BRACE, HEAD_MAX_BYTES, ITEMS, QUOTE, WHOLE_PARSE_MAX_BYTES, isSpace, parseItem, parseJsonBody } from './json-body.ts';

/**
 * One object (or a list's item) at most: etcd stores objects of up to 1.5 MiB (its --max-request-bytes),
 * and their JSON is about as long; an answer or item past this is no object the API server keeps.
 */
export const MAX_OBJECT_BYTES = 4 * 1024 * 1024;

export interface AnswerOptions {
  /** The items of a Pod list are parsed without their metadata.managedFields (json-body.ts). */
  withoutManagedFields?: boolean;
  /** Trims a list's item in place as it is parsed; returns how many of its bytes it cut (refunded). */
  trim?: (item: unknown) => number;
  /**
   * A list's long string values cut from each item's bytes before it is parsed (long-strings.ts); and
   * from a single object's (not a list's: a small list is parsed whole, then trimmed).
   */
  longStrings?: LongStrings;
  /** Charged with the answer's bytes as they arrive, refunded what was cut. */
  budget?: ByteBudget;
  maxObjectBytes?: number;
}

/** An answer or an item larger than any object the API server stores. */
export class AnswerTooLarge extends Error {
  constructor(bytes: number, limit: number) {
    super(`an object of the answer passed ${bytes} bytes (at most ${limit})`);
    this.name = 'AnswerTooLarge';
  }
}

const OPEN_BRACE = 0x7b;
const COMMA = 0x2c;

export interface AnswerParser {
  push(chunk: Buffer): void;
  /** The parsed answer; throws when the bytes were not one JSON value (or not a list, once streamed as one). */
  end(): unknown;
}

export function answerParser({ withoutManagedFields = false, trim, longStrings, budget, maxObjectBytes = MAX_OBJECT_BYTES }: AnswerOptions = {}): AnswerParser {
  let chunks: Buffer[] = [];
  let size = 0;
  let list: ReturnType<typeof listStream> | null = null;
  let whole = false;
  const keep = (item: unknown, bytes: number, cut: number) => {
    const trimmed = trim ? trim(item) : 0;
    if (cut + trimmed > 0) budget?.charge(-Math.min(bytes, cut + trimmed));
    return item;
  };
  return {
    push(chunk) {
      budget?.charge(chunk.length);
      if (list) return list.push(chunk);
      chunks.push(chunk);
      size += chunk.length;
      if (!whole && size > WHOLE_PARSE_MAX_BYTES) {
        const body = Buffer.concat(chunks);
        list = listStream(body, { withoutManagedFields, longStrings }, keep, maxObjectBytes);
        if (list) {
          chunks = [];
          // The list keeps a copy of what it has not parsed yet.
          releaseBuffer(body);
        } else {
          chunks = [body];
          whole = true;
        }
      }
      if (whole && size > maxObjectBytes) throw new AnswerTooLarge(size, maxObjectBytes);
    },
    end() {
      if (list) return list.end();
      // Ours to free once parsed: a concatenation (of the chunks, or of those before `whole` and the rest).
      const own = chunks.length > 1 ? Buffer.concat(chunks) : whole ? chunks[0] : undefined;
      if (chunks.length > 1 && whole) releaseBuffer(chunks[0]);
      const body = own ?? chunks[0] ?? Buffer.alloc(0);
      chunks = [];
      try {
        return parseWhole(body);
      } finally {
        releaseBuffer(own);
      }
    },
  };
  /** The answer from all of its bytes at once (an object, or a list too small to stream). */
  function parseWhole(body: Buffer): unknown {
    if (body.length === 0) return undefined;
    // One object whose long strings the caller does not read (a write's answer: its resourceVersion).
    if (longStrings && body.length > longStrings.over && !withoutManagedFields) {
      const parsed = JSON.parse(textWithoutLongStrings(body, longStrings)) as { items?: unknown } | null;
      if (!Array.isArray(parsed?.items)) return parsed;
    }
    const parsed = parseJsonBody(body, { withoutManagedFields });
    // A small list: its items trimmed as a streamed one's are (managedFields already left out: not refunded).
    const items = (parsed as { items?: unknown } | null)?.items;
    if (trim && Array.isArray(items)) for (const item of items) keep(item, Infinity, 0);
    return parsed;
  }
}

/**
 * A list being streamed, from the bytes buffered so far (`body`, past WHOLE_PARSE_MAX_BYTES); null when
 * they are no list the API server writes (the caller buffers and parses them whole).
 */
function listStream(body: Buffer, { withoutManagedFields, longStrings }: { withoutManagedFields: boolean; longStrings?: LongStrings }, keep: (item: unknown, bytes: number, cut: number) => unknown, maxObjectBytes: number) {
  const open = body.subarray(0, HEAD_MAX_BYTES).indexOf(ITEMS);
  if (open < 0) return null;
  let head: { kind?: unknown; items: unknown[] };
  try {
    head = JSON.parse(`${body.toString('utf8', 0, open)}"items":[]}`);
  } catch {
    return null; // an "items" nested in an object: not a list's
  }
  if (head === null || typeof head !== 'object' || typeof head.kind !== 'string' || !head.kind.endsWith('List')) return null;
  const first = open + ITEMS.length - 2;
  const keyEnd = body.indexOf(QUOTE, first + 2);
  if (keyEnd < 0) return null;
  const separator = Buffer.concat([Buffer.from('},'), body.subarray(first, keyEnd + 1), Buffer.from(':')]);
  const items: unknown[] = [];
  // The unconsumed bytes, from the current item's `{` (a view of `store`, see push); where the next
  // separator is looked for; and the bracket count once a piece failed to parse (null: the fast path).
  let store = Buffer.from(body.subarray(first));
  let pending = store.subarray(0);
  let searchFrom = 0;
  let scan: { at: number; depth: number; inString: boolean; escaped: boolean } | null = null;
  const take = (end: number) => {
    const { item, cut } = parseItem(pending, 0, end, withoutManagedFields, longStrings);
    items.push(keep(item, end, cut));
    pending = pending.subarray(end);
  };
  const advance = () => {
    for (;;) {
      // The `,` after an item whose end was found by its brackets (an item starts with `{`).
      if (pending.length > 0 && pending[0] === COMMA) pending = pending.subarray(1);
      if (scan) {
        const close = scanToClose(pending, scan);
        if (close < 0) break;
        take(close + 1);
        scan = null;
        searchFrom = 0;
        continue;
      }
      const cut = pending.indexOf(separator, searchFrom);
      if (cut < 0) {
        searchFrom = Math.max(0, pending.length - separator.length + 1);
        break;
      }
      try {
        const { item, cut: left } = parseItem(pending, 0, cut + 1, withoutManagedFields, longStrings);
        items.push(keep(item, cut + 1, left));
        pending = pending.subarray(cut + 2);
        searchFrom = 0;
      } catch {
        scan = { at: 0, depth: 0, inString: false, escaped: false };
      }
    }
    if (pending.length > maxObjectBytes) throw new AnswerTooLarge(pending.length, maxObjectBytes);
  };
  advance();
  return {
    push(chunk: Buffer) {
      // One buffer, kept and grown (doubling) rather than a new one per chunk: freed buffers of a few
      // hundred KiB each left the process's RSS at 250 MiB for a 200 MB list whose kept items were
      // 30 MiB of heap (glibc keeps what malloc returned; bench on 2026-12-07).
      const offset = pending.byteOffset - store.byteOffset;
      const kept = pending.length;
      const length = kept + chunk.length;
      if (length > store.length) {
        const grown = Buffer.allocUnsafeSlow(Math.max(length, store.length * 2));
        pending.copy(grown, 0);
        // Freed now (pending, its view, reads as empty from here): a 1 MiB item grows it 4 times.
        releaseBuffer(store);
        store = grown;
      } else if (offset > 0) store.copyWithin(0, offset, offset + kept);
      chunk.copy(store, kept);
      pending = store.subarray(0, length);
      advance();
    },
    end(): unknown {
      let end = pending.length;
      while (end > 0 && isSpace(pending[end - 1])) end--;
      if (end < 2 || pending[end - 1] !== CLOSE_BRACE || pending[end - 2] !== CLOSE) throw new SyntaxError('a list answer that does not end with its items');
      pending = pending.subarray(0, end - 2);
      // The last item — or, where items begin with keys of their own (no separator matched), the rest of them.
      while (pending.length > 0) {
        if (pending[0] === COMMA) pending = pending.subarray(1);
        try {
          take(pending.length);
        } catch {
          const close = scanToClose(pending, { at: 0, depth: 0, inString: false, escaped: false });
          if (close < 0) throw new SyntaxError('a list answer whose last item does not close');
          take(close + 1);
        }
      }
      head.items = items;
      releaseBuffer(store);
      return head;
    },
  };
}

/** Resumes counting braces over `bytes` from `s.at`; the index of the item's closing `}`, or -1 (needs more bytes). */
function scanToClose(bytes: Buffer, s: { at: number; depth: number; inString: boolean; escaped: boolean }): number {
  for (; s.at < bytes.length; s.at++) {
    const byte = bytes[s.at];
    if (s.inString) {
      if (s.escaped) s.escaped = false;
      else if (byte === BACKSLASH) s.escaped = true;
      else if (byte === QUOTE) s.inString = false;
    } else if (byte === QUOTE) s.inString = true;
    else if (byte === OPEN_BRACE) s.depth++;
    else if (byte === CLOSE_BRACE && --s.depth === 0) return s.at;
  }
  return -1;
}
