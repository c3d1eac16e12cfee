// Field paths as Kubernetes prints them (`spec.template.spec.containers[0].name`,
// `metadata.labels[app.kubernetes.io/name]`), and JSON Pointers (RFC 6901) for JSONPatch paths.

export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `['spec', 'containers', 0, 'name']` → `spec.containers[0].name`; odd keys go in brackets. */
export function fieldPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${String(segment)}]`;
  }
  return out === '' ? '(root)' : out;
}

/** Joins a prefix and a relative field path: `spec.template` + `spec.containers[0]`. */
export function joinPath(prefix: string, rest: string): string {
  if (rest === '' || rest === '(root)') return prefix;
  return rest.startsWith('[') ? `${prefix}${rest}` : `${prefix}.${rest}`;
}

/** `['spec', 'a/b~c']` → `/spec/a~1b~0c` (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function jsonPointer(segments: readonly PathSegment[]): string {
  return segments.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}
