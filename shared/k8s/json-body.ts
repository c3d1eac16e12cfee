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
/** Bodies up to this size are parsed whole: their string stays far from the 128 KiB of large objects. */
export const WHOLE_PARSE_MAX_BYTES = 96 * 1024;

const ITEMS = Buffer.from('"items":[{"');
const HEAD_MAX_BYTES = 16 * 1024;
const QUOTE = 0x22;

export function parseJsonBody(body: Buffer, wholeMaxBytes = WHOLE_PARSE_MAX_BYTES): unknown {
  if (body.length <= wholeMaxBytes) return JSON.parse(body.toString('utf8'));
  return parseListByItems(body) ?? JSON.parse(body.toString('utf8'));
}

/** The list `body` holds, parsed item by item; null when it is not shaped so (the caller parses it whole). */
export function parseListByItems(body: Buffer): { items: unknown[] } | null {
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
  if (end < first + 2 || body[end - 1] !== 0x7d || body[end - 2] !== 0x5d) return null;
  const itemsEnd = end - 2;
  try {
    const head = JSON.parse(`${body.toString('utf8', 0, open)}"items":[]}`) as { items: unknown[] };
    if (head === null || typeof head !== 'object' || Array.isArray(head)) return null;
    const items: unknown[] = [];
    for (let start = first; ; ) {
      const cut = body.indexOf(separator, start);
      if (cut < 0 || cut >= itemsEnd) {
        items.push(JSON.parse(body.toString('utf8', start, itemsEnd)));
        break;
      }
      items.push(JSON.parse(body.toString('utf8', start, cut + 1)));
      start = cut + 2;
    }
    head.items = items;
    return head;
  } catch {
    return null;
  }
}

const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
