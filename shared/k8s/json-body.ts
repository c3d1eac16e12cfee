// JSON.parse of an API server's answer without a string of more than ~96 KiB. V8 keeps a string of
// over 128 KiB in its large-object space, which maps fresh memory for each one (mmap, then munmap
// once collected): making the string of a 180 KB list of 30 pods took 0.6 ms here, 100 times what a
// 120 KB one takes, and more than its JSON.parse (bench/events.ts; `strace -c`: two munmap, an mmap
// and a madvise per string). A list is what the reconcile function reads on every run, so a large one
// is parsed item by item instead: each item's bytes are a string of their own.
//
// Where the items split: a Kubernetes list is `{…"items":[ITEM,ITEM,…]}`, and the API server writes
// every item with the same first key — the first item's tells it (`metadata` in a typed list, whose
// items leave kind and apiVersion out; `apiVersion` in a custom resource's). The bytes `},{"<key>":`
// cannot lie inside a JSON string (a quote there is escaped), so they are either a boundary between
// items or between two objects nested deeper — and a piece cut at a deeper boundary leaves brackets
// open, which JSON.parse refuses. So when every piece parses, the pieces are the items; when anything
// does not fit (no items array first in the body, nothing after it but `]}`, a piece that does not
// parse), the whole body is parsed as before.
//
// A list of Pods is also read without the items' metadata.managedFields when the caller asks
// (`withoutManagedFields`): a third of a Pod's bytes on the dev stack, and many small objects, which
// nothing that reads a Pod list (the snapshot, the core) looks at. What is cut is exactly that field:
// the bytes `,"managedFields":[` cannot lie inside a string either, and in a Pod — a built-in type,
// which the API server writes with its own fields only, labels' and annotations' values being
// strings — no other key is followed by an array of that name; ObjectMeta writes managedFields last,
// so the array's `]` is followed by metadata's `}`, and that is required. The array's end is found by
// its brackets, strings skipped (a field manager's name is any text). An item cut so that does not
// parse is parsed uncut; removing a balanced range leaves a piece cut at a wrong boundary as
// unbalanced as it was, so the fallback to the whole body still holds.
import { longStringRanges, textWithout, type LongStrings } from './long-strings.ts';

/** Bodies up to this size are parsed whole: their string stays far from the 128 KiB of large objects. */
export const WHOLE_PARSE_MAX_BYTES = 96 * 1024;

export const ITEMS = Buffer.from('"items":[{"');
export const HEAD_MAX_BYTES = 16 * 1024;
export const QUOTE = 0x22;
const OPEN = 0x5b;
export const CLOSE = 0x5d;
export const CLOSE_BRACE = 0x7d;
export const BACKSLASH = 0x5c;

export interface ParseOptions {
  /** Bodies up to this size are parsed whole (unless withoutManagedFields). */
  wholeMaxBytes?: number;
  /** The body is a list of Pods whose metadata.managedFields nobody reads: left out (see above). */
  withoutManagedFields?: boolean;
}

export function parseJsonBody(body: Buffer, { wholeMaxBytes = WHOLE_PARSE_MAX_BYTES, withoutManagedFields = false }: ParseOptions = {}): unknown {
  if (body.length <= wholeMaxBytes && !withoutManagedFields) return JSON.parse(body.toString('utf8'));
  return parseListByItems(body, withoutManagedFields) ?? JSON.parse(body.toString('utf8'));
}

/** The list `body` holds, parsed item by item; null when it is not shaped so (the caller parses it whole). */
export function parseListByItems(body: Buffer, withoutManagedFields = false): { items: unknown[] } | null {
  // A list's head (kind, apiVersion, metadata: a resourceVersion, a continue token) is short; an
  // "items" further in belongs to an object that is no list, and is not looked for.
  const open = body.subarray(0, HEAD_MAX_BYTES).indexOf(ITEMS);
  if (open < 0) return null;
  const first = open + ITEMS.length - 2; // the first item's `{`
  const keyEnd = body.indexOf(QUOTE, first + 2);
  if (keyEnd < 0) return null;
  const separator = Buffer.concat([Buffer.from('},'), body.subarray(first, keyEnd + 1), Buffer.from(':')]);
  let end = body.length;
  while (end > 0 && isSpace(body[end - 1])) end--;
  // `]}` closes the items and the list; what comes before the items is the list's head.
  if (end < first + 2 || body[end - 1] !== CLOSE_BRACE || body[end - 2] !== CLOSE) return null;
  const itemsEnd = end - 2;
  try {
    const head = JSON.parse(`${body.toString('utf8', 0, open)}"items":[]}`) as { items: unknown[] };
    if (head === null || typeof head !== 'object' || Array.isArray(head)) return null;
    const items: unknown[] = [];
    const item = (start: number, end: number) => parseItem(body, start, end, withoutManagedFields).item;
    for (let start = first; ; ) {
      const cut = body.indexOf(separator, start);
      if (cut < 0 || cut >= itemsEnd) {
        items.push(item(start, itemsEnd));
        break;
      }
      items.push(item(start, cut + 1));
      start = cut + 2;
    }
    head.items = items;
    return head;
  } catch {
    return null;
  }
}

const MANAGED_FIELDS = Buffer.from(',"managedFields":[');

/**
 * The item in body[start, end), parsed — without its managedFields when asked and they are metadata's
 * last key, and with the string values `longStrings` names replaced by stand-ins (long-strings.ts);
 * `cut`: how many of its bytes were left out. Throws where JSON.parse does.
 */
export function parseItem(body: Buffer, start: number, end: number, withoutManagedFields: boolean, longStrings?: LongStrings): { item: unknown; cut: number } {
  // What is left out: [from, to, stand-in] in order.
  const drops: [number, number, string][] = [];
  const at = withoutManagedFields ? body.indexOf(MANAGED_FIELDS, start) : -1;
  let managed: [number, number] | null = null;
  if (at >= 0 && at < end) {
    const close = closingBracket(body, at + MANAGED_FIELDS.length - 1, end);
    if (close > 0 && body[close + 1] === CLOSE_BRACE) managed = [at, close + 1];
  }
  if (managed) drops.push([...managed, '']);
  if (longStrings) {
    for (const [from, to] of longStringRanges(body, start, end, longStrings)) {
      if (!(managed && from >= managed[0] && from < managed[1])) drops.push([from, to, longStrings.standIn(to - from - 2)]);
    }
  }
  if (drops.length > 0) {
    drops.sort((a, b) => a[0] - b[0]);
    const cut = drops.reduce((sum, [dropFrom, dropTo, standIn]) => sum + dropTo - dropFrom - standIn.length, 0);
    try {
      return { item: JSON.parse(textWithout(body, start, end, drops)), cut };
    } catch {
      /* not shaped as a Pod is: parsed uncut below */
    }
  }
  return { item: JSON.parse(body.toString('utf8', start, end)), cut: 0 };
}

/** Where the array opened at body[open] closes (before `end`), strings skipped; -1 if it does not. */
function closingBracket(body: Buffer, open: number, end: number): number {
  let depth = 0;
  for (let i = open; i < end; i++) {
    const byte = body[i];
    if (byte === QUOTE) {
      // To the string's closing quote: the next one not escaped (a backslash escapes one byte).
      for (i++; i < end && body[i] !== QUOTE; i++) if (body[i] === BACKSLASH) i++;
    } else if (byte === OPEN) depth++;
    else if (byte === CLOSE && --depth === 0) return i;
  }
  return -1;
}

export const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
