// The ordinals a NeoSet's replicas map to (§4.12): the first `replicas` ordinals from
// spec.ordinals.start that spec.reserveOrdinals does not reserve, ascending. The one definition every
// rule that says "in range" uses — creation, condemnation, the partition, the budgets, status.
//
// Peers: the StatefulSet controller's podInOrdinalRange (start <= ordinal <= start + replicas - 1,
// pkg/controller/statefulset/stateful_set_utils.go) and OpenKruise's getStatefulSetReplicasRange
// (the same walk from start, reserved ordinals skipped until replicas are counted).
import { MAX_ORDINAL, type NeoSetSpec } from '../api/neoset.ts';

/** An inclusive range of reserved ordinals. */
export interface OrdinalRange {
  from: number;
  to: number;
}

type OrdinalSpec = Pick<NeoSetSpec, 'replicas' | 'ordinals' | 'reserveOrdinals'>;

const RANGE = /^(0|[1-9][0-9]{0,8})(?:-(0|[1-9][0-9]{0,8}))?$/;

/**
 * One entry of spec.reserveOrdinals: an integer, or the text "a" or "a-b" (Kruise's ParseRange; a
 * plain number as text is accepted too, as int-or-string fields are written either way). Null for
 * anything else: admission refuses it (admission/ordinals.ts), and a stored one is ignored.
 */
export function parseReservedOrdinal(entry: number | string): OrdinalRange | null {
  if (typeof entry === 'number') return Number.isInteger(entry) && entry >= 0 && entry <= MAX_ORDINAL ? { from: entry, to: entry } : null;
  const m = RANGE.exec(entry.trim());
  if (!m) return null;
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  return from <= to ? { from, to } : null;
}

/** The reserved ranges, valid entries only, sorted by their first ordinal. */
export function reservedRanges(spec: Pick<NeoSetSpec, 'reserveOrdinals'>): OrdinalRange[] {
  const ranges: OrdinalRange[] = [];
  for (const entry of spec.reserveOrdinals ?? []) {
    const r = parseReservedOrdinal(entry);
    if (r) ranges.push(r);
  }
  return ranges.sort((a, b) => a.from - b.from);
}

export function startOrdinal(spec: Pick<NeoSetSpec, 'ordinals'>): number {
  return spec.ordinals?.start ?? 0;
}

/**
 * The ordinals in range, ascending; a pod's position is its index here. Stops at MAX_ORDINAL (an
 * ordinal beyond cannot name a pod): admission refuses a spec that needs one, and a stored one gets
 * the pods that fit. A reserved range is jumped over whole, so the walk costs replicas + ranges.
 */
export function ordinalsInRange(spec: OrdinalSpec): number[] {
  const ranges = reservedRanges(spec);
  const out: number[] = [];
  let ordinal = startOrdinal(spec);
  let next = 0;
  while (out.length < spec.replicas && ordinal <= MAX_ORDINAL) {
    while (next < ranges.length && ranges[next].to < ordinal) next++;
    if (next < ranges.length && ranges[next].from <= ordinal) {
      ordinal = ranges[next].to + 1;
      continue;
    }
    out.push(ordinal++);
  }
  return out;
}

/**
 * The ordinal the last of `replicas` pods takes (start - 1 for none), by arithmetic over the ranges
 * rather than the walk: admission asks it of any spec, replicas as large as a request says.
 */
export function lastOrdinal(spec: OrdinalSpec): number {
  let at = startOrdinal(spec);
  let remaining = spec.replicas;
  for (const r of reservedRanges(spec)) {
    if (r.to < at) continue;
    const free = Math.max(0, r.from - at);
    if (remaining <= free) break;
    remaining -= free;
    at = r.to + 1;
  }
  return at + remaining - 1;
}

/** ordinal -> position in ordinalsInRange; an ordinal not in the map is condemned. */
export function ordinalPositions(ordinals: readonly number[]): Map<number, number> {
  return new Map(ordinals.map((ordinal, position) => [ordinal, position]));
}
