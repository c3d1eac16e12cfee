// The pod annotation neoset.neo.io/inplace-update-state: the only memory of an in-place update in
// flight (§4.4). Written by markDraining and patchImages, removed by finishInPlaceUpdate.
import { ANNOTATION_INPLACE_STATE } from '../../api/names.ts';
import type { Pod } from '../objects.ts';
import type { InPlaceState } from '../plan.ts';

export function encodeInPlaceState(state: InPlaceState): string {
  return JSON.stringify(state);
}

/**
 * The state a pod carries, or null when it carries none. An annotation that is not a readable state
 * (hand-edited, truncated) is treated as absent: nothing can be resumed from it, and the next update
 * of the pod overwrites it.
 */
export function parseInPlaceState(raw: string | undefined): InPlaceState | null {
  if (!raw) return null;
  // One decision asks for a pod's state several times (observe, its step, availability): parsed once
  // per annotation text. A pure function of the text, so the cache cannot go stale; the state is
  // frozen, as everyone shares it; the cache is emptied when full (a decision needs one NeoSet's).
  let state = parsed.get(raw);
  if (state === undefined) {
    if (parsed.size >= PARSED_MAX) parsed.clear();
    state = parse(raw);
    parsed.set(raw, state);
  }
  return state;
}

const PARSED_MAX = 4096;
const parsed = new Map<string, InPlaceState | null>();

function parse(raw: string): InPlaceState | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (value === null || typeof value !== 'object') return null;
  const s = value as Partial<InPlaceState>;
  if (typeof s.revision !== 'string' || (s.phase !== 'Draining' && s.phase !== 'Updating')) return null;
  if (typeof s.drainStartedAt !== 'string') return null;
  return deepFreeze(s as InPlaceState);
}

export function podInPlaceState(pod: Pod): InPlaceState | null {
  return parseInPlaceState(pod.metadata.annotations?.[ANNOTATION_INPLACE_STATE]);
}

function deepFreeze<T extends object>(value: T): T {
  for (const v of Object.values(value)) if (v !== null && typeof v === 'object') deepFreeze(v);
  return Object.freeze(value);
}
