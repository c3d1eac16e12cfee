// JSON values as they come off the wire. Canonical JSON — one spelling per value, whatever the key
// order or the client that wrote it — names revisions (§4.2); one deep equality serves template
// comparisons (§4.4 "in place when only images differ"), "status is written only when it changed"
// (§4.6) and admission's immutable-field checks (§5).

/** JSON with object keys sorted at every depth; `undefined` members are dropped, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortKeys(v)));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}

export type JsonObject = Record<string, unknown>;

/**
 * A deep copy of a JSON value whose strings are shared, not copied: structuredClone makes a new string
 * of each (V8's serializer), so a pod made from a template with a 1 MiB env value held one more 1 MiB
 * string per pod created (memory-bounded.test.ts, SPEC §2.5). Objects and arrays are new, so the copy
 * may be changed freely. Iterative, as sameJson: a deeply nested input cannot overflow the stack.
 */
export function copyJson<T>(value: T): T {
  const fresh = (v: unknown): unknown => (Array.isArray(v) ? new Array<unknown>(v.length) : isPlainObject(v) ? {} : v);
  const root = fresh(value);
  const stack: [unknown, unknown][] = [[value, root]];
  while (stack.length > 0) {
    const [from, to] = stack.pop()!;
    if (from === to) continue;
    for (const key of Object.keys(from as object)) {
      const v = (from as Record<string, unknown>)[key];
      const copied = fresh(v);
      // An own "__proto__" (JSON.parse makes one) stays a member, as structuredClone keeps it.
      Object.defineProperty(to, key, { value: copied, enumerable: true, writable: true, configurable: true });
      if (copied !== v) stack.push([v, copied]);
    }
  }
  return root as T;
}

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Deep equality of two JSON values, key order ignored, a key whose value is undefined counting as
 * absent (as it does once serialized). Iterative, so a deeply nested input cannot overflow the stack.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (Array.isArray(x) || Array.isArray(y)) {
      if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
      continue;
    }
    if (!isPlainObject(x) || !isPlainObject(y)) return false;
    const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
    for (const key of keys) stack.push([x[key], y[key]]);
  }
  return true;
}
