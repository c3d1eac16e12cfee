// Claim templates on UPDATE (SPEC §4.12 "Claims that grow"): the one change allowed is a raise of an
// existing template's spec.resources.requests.storage — the existing PVCs are then expanded in place
// (shared/core/update/claim-growth.ts). A shrink is refused (no volume plugin shrinks a volume, and the
// API server refuses a PVC request below its capacity); any other change — a template added or
// removed, accessModes, storageClassName, labels — stays refused as immutable, as the StatefulSet's
// volumeClaimTemplates are: existing claims would silently keep the old value.
import type { NeoSet } from '../api/neoset.ts';
import { copyJson, isPlainObject, sameJson } from '../core/json.ts';
import { fieldPath, type PathSegment } from '../core/field-path.ts';
import { issue, type Issue } from './issue.ts';
import { brief } from './json.ts';
import { compareQuantities, parseQuantity } from './quantity.ts';

type ClaimTemplate = NeoSet['spec']['volumeClaimTemplates'][number];

const ONLY = 'only spec.resources.requests.storage of an existing claim template may change (raised)';
const STORAGE: PathSegment[] = ['spec', 'resources', 'requests', 'storage'];
/** Differences named per template: enough to say what to undo, bounded for a hostile object. */
const MAX_NAMED = 3;

export function claimTemplateIssues(old: NeoSet, neoset: NeoSet): Issue[] {
  const before = old.spec.volumeClaimTemplates;
  const after = neoset.spec.volumeClaimTemplates;
  if (before.length !== after.length) {
    return [
      issue(
        'spec.volumeClaimTemplates',
        `field is immutable but for storage: a claim template cannot be added or removed (was ${before.length}, now ${after.length}); ${ONLY}`,
      ),
    ];
  }
  return before.flatMap((b, i) => templateIssues(b, after[i], `spec.volumeClaimTemplates[${i}]`));
}

function templateIssues(before: ClaimTemplate, after: ClaimTemplate, at: string): Issue[] {
  const others = differences(withoutStorage(before), withoutStorage(after), []).slice(0, MAX_NAMED);
  const issues = others.map((path) =>
    issue(`${at}.${fieldPath(path)}`, `field is immutable (was ${brief(valueOf(before, path) ?? null, 60)}, now ${brief(valueOf(after, path) ?? null, 60)}); ${ONLY}`),
  );
  return [...issues, ...storageIssues(valueOf(before, STORAGE), valueOf(after, STORAGE), `${at}.${fieldPath(STORAGE)}`)];
}

function storageIssues(before: unknown, after: unknown, path: string): Issue[] {
  if (sameJson(before ?? null, after ?? null)) return [];
  if (before === undefined || after === undefined) {
    return [issue(path, `cannot be ${after === undefined ? 'removed' : 'added'} (was ${brief(before ?? null, 30)}, now ${brief(after ?? null, 30)}): it may only be raised`)];
  }
  const b = typeof before === 'string' || typeof before === 'number' ? parseQuantity(before) : null;
  const a = typeof after === 'string' || typeof after === 'number' ? parseQuantity(after) : null;
  if (a === null) return [issue(path, `${brief(after, 40)} is not a quantity (such as "2Gi")`)];
  // A stored value admission could not read (written while it was down) cannot be compared: refuse.
  if (b === null) return [issue(path, `the stored value ${brief(before, 40)} is not a quantity, so a raise cannot be told from a shrink`)];
  if (compareQuantities(a, b) < 0) {
    return [issue(path, `${a.text} is less than ${b.text}: a claim cannot shrink (a volume can only grow; the existing PVCs keep ${b.text})`)];
  }
  return [];
}

function withoutStorage(t: ClaimTemplate): unknown {
  const copy = copyJson(t) as { spec?: { resources?: { requests?: Record<string, unknown> } } };
  delete copy.spec?.resources?.requests?.storage;
  return copy;
}

function valueOf(object: unknown, path: readonly PathSegment[]): unknown {
  let at = object;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<PathSegment, unknown>)[key];
  }
  return at;
}

/** The paths where two JSON values differ: the deepest object keys that do (arrays compared whole). */
function differences(a: unknown, b: unknown, path: PathSegment[]): PathSegment[][] {
  if (sameJson(a ?? null, b ?? null)) return [];
  if (!isPlainObject(a) || !isPlainObject(b)) return [path];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.flatMap((k) => differences(a[k], b[k], [...path, k]));
}
