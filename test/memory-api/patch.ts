// The three patch types kube-apiserver accepts from NeoSet: JSON merge patch (RFC 7386), strategic
// merge patch (k8s.io/apimachinery/pkg/util/strategicpatch, the subset whose lists NeoSet's objects
// have) and JSON patch (RFC 6902). No npm package does strategic merge, and the two RFCs are a few
// lines each on plain JSON, so all three are here rather than in a dependency.
import { copy } from './store.ts';
import { isPlainObject, sameJson, type JsonObject } from '../../shared/core/json.ts';

/** A patch that cannot be applied to the object (the server answers 422). */
export class PatchFailed extends Error {}

const clone = <T>(v: T): T => copy(v);

/** RFC 7386: objects merge, null removes a member, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return clone(patch);
  const out: JsonObject = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

// ---- strategic merge patch -------------------------------------------------------------------

/**
 * Merge patch, except that a list whose field path is in `keys` merges item by item on its merge key
 * ('' for a set of scalars, e.g. finalizers), with the `$patch: delete|replace` and
 * `$deleteFromPrimitiveList/<field>` directives. `$setElementOrder` and `$retainKeys` are ignored.
 */
export function strategicMerge(original: unknown, patch: unknown, keys: Record<string, string>, path = ''): unknown {
  if (!isPlainObject(patch)) return clone(patch);
  if (patch.$patch === 'replace') return withoutDirectives(patch);
  const out: JsonObject = isPlainObject(original) ? { ...original } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      const drop = (value as unknown[]) ?? [];
      if (Array.isArray(out[field])) out[field] = (out[field] as unknown[]).filter((x) => !drop.some((d) => sameJson(d, x)));
      continue;
    }
    if (key.startsWith('$')) continue;
    const at = path ? `${path}.${key}` : key;
    if (value === null) delete out[key];
    else if (Array.isArray(value) && at in keys) out[key] = mergeList(asList(out[key]), value, keys[at], keys, `${at}[]`);
    else if (isPlainObject(value) && value.$patch === 'delete') delete out[key];
    else if (isPlainObject(value)) out[key] = strategicMerge(out[key], value, keys, at);
    else out[key] = clone(value);
  }
  return out;
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function withoutDirectives(item: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(item).filter(([k]) => !k.startsWith('$')).map(([k, v]) => [k, clone(v)]));
}

function mergeList(original: unknown[], patch: unknown[], mergeKey: string, keys: Record<string, string>, itemPath: string): unknown[] {
  const id = (item: unknown) => (mergeKey === '' ? item : (item as JsonObject)?.[mergeKey]);
  const sameId = (a: unknown, b: unknown) => sameJson(id(a), id(b));
  if (patch.some((p) => isPlainObject(p) && p.$patch === 'replace')) {
    return patch.filter((p) => !(isPlainObject(p) && p.$patch === 'replace')).map((p) => (isPlainObject(p) ? withoutDirectives(p) : p));
  }
  const deletions = patch.filter((p) => isPlainObject(p) && p.$patch === 'delete');
  const items = patch.filter((p) => !deletions.includes(p));
  const merged = original.filter((o) => !deletions.some((d) => sameId(d, o)));
  for (const item of items) {
    const i = merged.findIndex((o) => sameId(o, item));
    if (i < 0) merged.push(mergeKey === '' ? item : strategicMerge(undefined, item, keys, itemPath));
    else if (mergeKey !== '') merged[i] = strategicMerge(merged[i], item, keys, itemPath);
  }
  // The order strategicpatch.normalizeElementOrder gives: the patch's items in patch order and the
  // server-only items in their order, interleaved by their places in the original list — so an item
  // new to the list comes before the server-only items that follow it, e.g. first when it is alone.
  const inPatch = (m: unknown) => items.some((p) => sameId(p, m));
  const fromPatch = items.map((p) => merged.find((m) => sameId(m, p))).filter((m, i, all) => all.indexOf(m) === i);
  const serverOnly = merged.filter((m) => !inPatch(m));
  const place = (m: unknown) => original.findIndex((o) => sameId(o, m));
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < fromPatch.length) {
    if (j >= fromPatch.length) out.push(serverOnly[i++]);
    else if (i >= serverOnly.length) out.push(fromPatch[j++]);
    else {
      const [l, r] = [place(serverOnly[i]), place(fromPatch[j])];
      out.push(l >= 0 && r >= 0 && l < r ? serverOnly[i++] : fromPatch[j++]);
    }
  }
  return out;
}

// ---- JSON patch ------------------------------------------------------------------------------

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchFailed(`invalid JSON pointer ${JSON.stringify(path)}`);
  return path
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The container holding the pointer's last token, and that token. */
function locate(doc: unknown, tokens: string[], path: string): { parent: JsonObject | unknown[]; last: string } {
  let at: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    at = Array.isArray(at) ? at[Number(t)] : isPlainObject(at) ? at[t] : undefined;
    if (at === undefined || at === null || typeof at !== 'object') throw new PatchFailed(`doc is missing path: ${path}`);
  }
  return { parent: at as JsonObject | unknown[], last: tokens[tokens.length - 1] };
}

function index(list: unknown[], token: string, path: string, forInsert: boolean): number {
  if (forInsert && token === '-') return list.length;
  const i = /^(0|[1-9]\d*)$/.test(token) ? Number(token) : NaN;
  if (!(i >= 0 && i < list.length + (forInsert ? 1 : 0))) throw new PatchFailed(`index out of range at ${path}`);
  return i;
}

function get(doc: unknown, path: string): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) return doc;
  const { parent, last } = locate(doc, tokens, path);
  const v = Array.isArray(parent) ? parent[index(parent, last, path, false)] : parent[last];
  if (v === undefined) throw new PatchFailed(`doc is missing path: ${path}`);
  return v;
}

/** The pointer names a member its object does not have (the object itself must be there). */
function absentMember(doc: unknown, path: string): boolean {
  const tokens = pointer(path);
  if (tokens.length === 0) return false;
  const { parent, last } = locate(doc, tokens, path);
  return !Array.isArray(parent) && !Object.hasOwn(parent, last);
}

function remove(doc: unknown, path: string): unknown {
  const tokens = pointer(path);
  const { parent, last } = locate(doc, tokens, path);
  if (Array.isArray(parent)) return parent.splice(index(parent, last, path, false), 1)[0];
  if (!Object.hasOwn(parent, last)) throw new PatchFailed(`remove operation does not apply: doc is missing path: ${path}`);
  const v = parent[last];
  delete parent[last];
  return v;
}

function add(doc: unknown, path: string, value: unknown): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) return value;
  const { parent, last } = locate(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(index(parent, last, path, true), 0, value);
  else parent[last] = value;
  return doc;
}

/** RFC 6902 on a copy of `doc`; a failed `test` or a missing path throws PatchFailed. */
export function jsonPatch(doc: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw new PatchFailed('a JSON patch is a list of operations');
  let out = clone(doc);
  for (const { op, path, from, value } of operations as Operation[]) {
    switch (op) {
      case 'add':
        out = add(out, path, clone(value));
        break;
      case 'remove':
        remove(out, path);
        break;
      case 'replace':
        get(out, path);
        if (path === '') out = clone(value);
        else {
          remove(out, path);
          out = add(out, path, clone(value));
        }
        break;
      case 'move':
        out = add(out, path, remove(out, from ?? ''));
        break;
      case 'copy':
        out = add(out, path, clone(get(out, from ?? '')));
        break;
      case 'test':
        // As kube-apiserver's (gopkg.in/evanphx/json-patch.v4): null tests a member of an object absent.
        if (value === null && absentMember(out, path)) break;
        if (!sameJson(get(out, path), value)) throw new PatchFailed(`testing value ${path} failed: test failed`);
        break;
      default:
        throw new PatchFailed(`unexpected kind: ${op}`);
    }
  }
  return out;
}
