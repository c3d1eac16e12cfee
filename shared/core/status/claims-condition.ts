// The ClaimsResized condition (§4.12 "Claims that grow"): whether every claim of pods 0..replicas-1
// reports the storage its template requests, and if not, what the resize machinery says of the
// first ones that do not (the PVC conditions FileSystemResizePending, Resizing, ControllerResizeError,
// NodeResizeError), so that `kubectl describe neo` and `kubectl wait --for=condition=ClaimsResized`
// tell it without a look at each PVC. Present only on a NeoSet whose claim templates request storage,
// from the first claim short of its request on.
import type { ClaimFacts, ClaimGrowth } from '../update/claim-growth.ts';

export const CONDITION_CLAIMS_RESIZED = 'ClaimsResized';

/** Claims named in the message; the rest are counted. */
const NAMED = 3;

export interface ClaimsDraft {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/**
 * `stored`: whether the stored status has the condition. With every claim done it is kept (True) once
 * shown, and not added: a NeoSet whose claims never grew gets no status write for it — an upgrade from
 * a release without it writes nothing (SPEC §4.2), and a previous release deciding beside this one
 * (which drops conditions it does not know) is not rewritten back and forth.
 */
export function claimsCondition(growth: ClaimGrowth | undefined, stored = false): ClaimsDraft | null {
  if (!growth || growth.claims.length === 0) return null;
  const short = growth.claims.filter((c) => c.standing !== 'done');
  const done = `${growth.claims.length - short.length}/${growth.claims.length} claims report their requested storage`;
  if (short.length === 0) return stored ? { status: 'True', reason: 'ClaimsResized', message: done } : null;
  // The most telling first: a failure, then what the resize waits for.
  const rank = (c: ClaimFacts) => (c.failed ? 0 : c.condition ? 1 : c.standing === 'resizing' ? 2 : 3);
  const shown = [...short].sort((a, b) => rank(a) - rank(b) || b.ordinal - a.ordinal);
  const first = shown[0];
  const reason = first.failed ? 'VolumeResizeFailed' : (first.condition?.type ?? (first.standing === 'resizing' ? 'Resizing' : first.standing === 'unbound' ? 'ClaimNotBound' : 'ResizePending'));
  const more = shown.length > NAMED ? `; and ${shown.length - NAMED} more` : '';
  return { status: 'False', reason, message: `${done}; ${shown.slice(0, NAMED).map(describe).join('; ')}${more}` };
}

function describe(c: ClaimFacts): string {
  const size = `${c.capacity ?? 'no capacity'} of ${c.standing === 'behind' || c.standing === 'unbound' ? c.wanted : c.requested}`;
  const what = c.failed ?? (c.condition ? `${c.condition.type}${c.condition.message ? `: ${c.condition.message}` : ''}` : c.standing === 'unbound' ? 'not bound yet' : c.standing === 'behind' ? 'waiting for its turn' : 'resizing');
  return `${c.name}: ${size} (${what})`;
}
