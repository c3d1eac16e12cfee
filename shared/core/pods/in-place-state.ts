// The pod annotation neoset.neo.io/inplace-update-state read from a pod: the only memory of an
// in-place update in flight (§4.4), parsed with its zod schema (shared/api/inplace-state.ts), once
// per text. Written by markDraining and patchImages, removed by finishInPlaceUpdate.
import { InPlaceStateSchema, type InPlaceState } from '../../api/inplace-state.ts';
import { ANNOTATION_INPLACE_STATE } from '../../api/names.ts';
import type { Pod } from '../objects.ts';

export function encodeInPlaceState(state: InPlaceState): string {
  return JSON.stringify(state);
}

/**
 * The state a pod carries, or null when it carries none. An annotation that is not a readable state
 * (hand-edited, truncated, or longer than any pod in the cluster can carry) is treated as absent:
 * nothing can be resumed from it, and the next update of the pod overwrites it.
 */
export function parseInPlaceState(raw: string | undefined): InPlaceState | null {
  if (!raw) return null;
  // The API server refuses a pod whose annotations pass 256 KiB in all: a longer text comes from
  // nowhere but a forged event, and is not even parsed.
  if (raw.length > MAX_STATE_TEXT) return null;
  // One decision asks for a pod's state several times (observe, its step, availability, every step
  // carried): parsed once per annotation text. Module-level, and STYLE §6 allows it: bookkeeping whose
  // loss loses nothing — a cache of a pure function of the text, so it cannot go stale, decides
  // nothing, and a restart costs one parse per pod; the state is frozen, as everyone shares it. Bounded in entries
  // and in bytes of text, and emptied when full (a decision needs one NeoSet's pods); a text longer
  // than any state NeoSet writes (a few KiB, a 20-container pod's ~6 KiB) is parsed, never kept.
  let state = parsed.get(raw);
  if (state === undefined) {
    state = parse(raw);
    if (raw.length <= CACHED_TEXT_MAX) {
      if (parsed.size >= PARSED_MAX || parsedBytes + raw.length > PARSED_BYTES_MAX) {
        parsed.clear();
        parsedBytes = 0;
      }
      parsed.set(raw, state);
      parsedBytes += raw.length;
    }
  }
  return state;
}

/** kube-apiserver's TotalAnnotationSizeLimitB: all of a pod's annotations, keys and values. */
export const MAX_STATE_TEXT = 256 * 1024;
/** Texts kept parsed: well above the states NeoSet writes, far below the annotation limit. */
export const CACHED_TEXT_MAX = 16 * 1024;
/** Bytes of annotation text kept parsed (the frozen states take about as much again). */
export const PARSED_BYTES_MAX = 2 * 1024 * 1024;
const PARSED_MAX = 4096;
const parsed = new Map<string, InPlaceState | null>();
let parsedBytes = 0;

/** What the cache holds, for its tests. */
export const parsedCacheSize = () => ({ entries: parsed.size, bytes: parsedBytes });

function parse(raw: string): InPlaceState | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  const state = InPlaceStateSchema.safeParse(value);
  return state.success ? deepFreeze(state.data) : null;
}

export function podInPlaceState(pod: Pod): InPlaceState | null {
  return parseInPlaceState(pod.metadata.annotations?.[ANNOTATION_INPLACE_STATE]);
}

function deepFreeze<T extends object>(value: T): T {
  for (const v of Object.values(value)) if (v !== null && typeof v === 'object') deepFreeze(v);
  return Object.freeze(value);
}
