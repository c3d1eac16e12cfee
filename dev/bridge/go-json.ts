// The body of an ApiServerSource event as the real adapter writes it (knative.dev/eventing
// pkg/adapter/apiserver/events → Go's encoding/json of the unstructured object): object keys sorted
// (Go marshals a map in key order), and <, >, &, U+2028, U+2029 escaped as \u003c, \u003e, \u0026,
// \u2028, \u2029 (json.Marshal's HTML-safe default). Same value as JSON.stringify, same bytes as Knative.

const GO_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/** JSON text with every object's keys in sorted order (built by hand: a JS object would list integer-like keys first). */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : sortedJson(v))).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const entries = Object.keys(value)
    .sort()
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${sortedJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/** `value` encoded as Go's json.Marshal encodes the same map. */
export function goJson(value: unknown): string {
  // The escaped characters can only occur inside strings (JSON's syntax has none of them), so
  // replacing them in the whole text changes strings only.
  return sortedJson(value).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c]);
}
