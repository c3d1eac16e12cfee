// Plain-JSON helpers for values that came off the wire.

export type JsonObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Equality of JSON values, with a key whose value is undefined counting as absent (as it does once
 * serialized). Iterative, so a deeply nested template cannot overflow the stack.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
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

/** Nesting depth of a JSON value (a scalar is 0), computed without recursion. */
export function jsonDepth(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    max = Math.max(max, depth + 1);
    for (const child of Object.values(v)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return max;
}

/** A short rendering of a value for messages (at most `max` characters). */
export function brief(value: unknown, max = 80): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
