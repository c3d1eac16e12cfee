// /mutate (SPEC §5): every default of SPEC §3 that is missing, as a JSONPatch. The defaults are not
// restated here: the input spec is parsed with the NeoSet zod schema (which fills them) and the
// result is diffed against the input, so the schema stays the single source of truth. Only `add`
// operations for absent keys are produced: a value the user wrote is never touched, and a spec
// that already has every default gets no patch (idempotent; a second mutation is a no-op).
import { NeoSetSpec } from '../api/neoset.ts';
import { jsonPointer, type PathSegment } from '../core/field-path.ts';
import { isPlainObject } from '../core/json.ts';

export interface JsonPatchAdd {
  op: 'add';
  path: string;
  value: unknown;
}

/**
 * The patch that fills the missing defaults of `object.spec` (a NeoSet as received). A spec that does
 * not parse gets no patch: it is refused by the CRD schema or /validate, whose messages name the field.
 */
export function defaultsPatch(object: unknown): JsonPatchAdd[] {
  if (!isPlainObject(object) || !isPlainObject(object.spec)) return [];
  const parsed = NeoSetSpec.safeParse(object.spec);
  if (!parsed.success) return [];
  return missingKeys(object.spec, parsed.data as Record<string, unknown>, ['spec']);
}

function missingKeys(given: Record<string, unknown>, defaulted: Record<string, unknown>, at: PathSegment[]): JsonPatchAdd[] {
  const ops: JsonPatchAdd[] = [];
  for (const [key, value] of Object.entries(defaulted)) {
    if (value === undefined) continue;
    const path = [...at, key];
    if (!Object.hasOwn(given, key) || given[key] === undefined) {
      ops.push({ op: 'add', path: jsonPointer(path), value });
      continue;
    }
    ops.push(...missingIn(given[key], value, path));
  }
  return ops;
}

function missingIn(given: unknown, defaulted: unknown, at: PathSegment[]): JsonPatchAdd[] {
  if (isPlainObject(given) && isPlainObject(defaulted)) return missingKeys(given, defaulted, at);
  if (Array.isArray(given) && Array.isArray(defaulted) && given.length === defaulted.length) {
    return given.flatMap((item, i) => missingIn(item, defaulted[i], [...at, i]));
  }
  return [];
}
