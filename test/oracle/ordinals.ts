// §4.12 in the SPEC's words, for the other checks: the pods that should exist are the first
// `replicas` ordinals from spec.ordinals.start that spec.reserveOrdinals does not name (an ordinal,
// or a range "a-b"); the partition counts a pod's position among them (the StatefulSet controller
// compares ordinal - start; OpenKruise counts the unreserved pods below). Written again here, one
// ordinal at a time, rather than imported: the core jumps over ranges, this walks.
//
//   Ordinals   (between two states) a pod is created only on an ordinal in range in one of them:
//              never on a reserved one, never below start.
import type { NeoSet } from '../../shared/api/neoset.ts';
import type { Report } from './types.ts';
import type { PodFacts, View } from './view.ts';

export interface Range {
  /** The ordinals in range, ascending. */
  ordinals: number[];
  /** ordinal -> its position in `ordinals`. */
  position: Map<number, number>;
  isReserved(ordinal: number): boolean;
  start: number;
}

const memo = new WeakMap<View, Range>();

/** The ordinals that should exist in this state, by the SPEC's words. */
export function rangeOf(v: View): Range {
  let r = memo.get(v);
  if (r) return r;
  r = expectedOrdinals(v.neoset.spec);
  memo.set(v, r);
  return r;
}

/** The ordinals a spec asks for: from start, one at a time, the reserved skipped, until replicas. */
export function expectedOrdinals(spec: NeoSet['spec']): Range {
  const reserved = (spec.reserveOrdinals ?? []).flatMap((e): [number, number][] => {
    // Admission refuses anything else; an entry stored anyway reserves nothing.
    const m = /^\s*(0|[1-9]\d*)(?:-(0|[1-9]\d*))?\s*$/.exec(String(e));
    const [a, b] = m ? [Number(m[1]), Number(m[2] ?? m[1])] : [NaN, NaN];
    return a <= b && b <= 999_999_999 && (typeof e === 'string' || Number.isInteger(e)) ? [[a, b]] : [];
  });
  const isReserved = (o: number) => reserved.some(([a, b]) => a <= o && o <= b);
  const start = spec.ordinals?.start ?? 0;
  const ordinals: number[] = [];
  for (let o = start; ordinals.length < spec.replicas && o <= 999_999_999; o++) if (!isReserved(o)) ordinals.push(o);
  return { ordinals, position: new Map(ordinals.map((o, i) => [o, i])), isReserved, start };
}

export const inRange = (v: View, ordinal: number): boolean => rangeOf(v).position.has(ordinal);

/**
 * Where the partition puts an ordinal in this state: its position in range; above the range, the
 * position it would have if replicas were raised (a pod created there in a scale-up is held back as
 * one in range would be); below start or reserved, Infinity: such a pod is never created (Ordinals).
 */
export function rank(v: View, ordinal: number): number {
  const r = rangeOf(v);
  const known = r.position.get(ordinal);
  if (known !== undefined) return known;
  if (ordinal < r.start || r.isReserved(ordinal)) return Infinity;
  let n = r.ordinals.length;
  for (let o = (r.ordinals.at(-1) ?? r.start - 1) + 1; o < ordinal; o++) if (!r.isReserved(o)) n++;
  return n;
}

/** Held back by the partition in this state. */
export const belowPartition = (v: View, ordinal: number): boolean => rank(v, ordinal) < v.partition;

/** The ordinals in range in both states, ascending. */
export function rangeInBoth(prev: View, now: View): number[] {
  return rangeOf(prev).ordinals.filter((o) => inRange(now, o));
}

export function ordinalInvariants(prev: View, now: View, created: PodFacts[], report: Report): void {
  for (const p of created) {
    if (inRange(prev, p.ordinal) || inRange(now, p.ordinal)) continue;
    const why = (v: View) => `[${rangeOf(v).ordinals.slice(0, 8).join(', ')}${v.replicas > 8 ? ', ...' : ''}]`;
    report('Ordinals', `created on ordinal ${p.ordinal}, in range in neither state (${why(prev)}, ${why(now)}: start ${now.neoset.spec.ordinals?.start ?? 0}, reserveOrdinals ${JSON.stringify(now.neoset.spec.reserveOrdinals ?? [])})`, p.name);
  }
}
