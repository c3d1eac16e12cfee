// What one event asks of the reconcile function (SPEC §2.0, §2.2), and when a run looks again by
// itself: rules the handler (functions/reconcile/app.ts) only calls.
//   * An event whose object shows nothing for reconcile to do is answered without a run
//     (shared/core/event-relevance.ts says which).
//   * A Pod event also reaches the readiness function, whose duties it then leaves alone; a NeoSet
//     event, a tick or a re-check asks for them all. A run that covers several events does what any
//     of them asked, with the lists not older than the newest Pod they showed (snapshot-reader.ts).
//   * A run that lost a race, or whose decision wants to look again soon, schedules its own re-check.
import type { NeoSet } from '../api/neoset.ts';
import type { Duties } from '../core/decide.ts';
import { neosetEventCanSkip, podEventCanSkip } from '../core/event-relevance.ts';
import type { Pod } from '../core/objects.ts';
import type { Outcome } from '../k8s/reconcile.ts';
import { isComparable, newest } from '../k8s/resource-version.ts';
import type { ParsedEvent } from './target.ts';

/** A short requeueAfter is served by a bounded in-process re-check; longer ones by the resync tick. */
export const MAX_SELF_RECHECK_SECONDS = 30;

/**
 * A decision that lost a race (409) looks again this soon: the write it lost to may have been one whose
 * event reconcile leaves alone (a kubelet status write on a pod mid-update, shared/core/event-relevance.ts).
 */
export const CONFLICT_RECHECK_MS = 250;

/** What the events a run covers ask of it: the duties, and the newest Pod and NeoSet resourceVersions they showed. */
export interface Ask {
  duties: Duties;
  seen?: string;
  /** The newest NeoSet resourceVersion a NeoSet event showed: the NeoSet read is not older (snapshot-reader.ts). */
  neosetSeen?: string;
  /**
   * A NeoSet event showed no version to compare with (Reference mode carries none): the NeoSet is read
   * from etcd, so that the change it tells of is decided on even where the watch cache lags.
   */
  neosetFromEtcd?: true;
}

/** What a re-check (or anything that is no event) asks: every duty, no Pod seen. */
export const RECHECK_ASK: Ask = { duties: 'all' };

/** An event either asks a run of each NeoSet it names, or says why none is needed. */
export type EventAsk = { skipped: string } | { ask: Ask };

/** `nowMs`: this instance's clock (the skip of a finish's event is bounded in time, event-relevance.ts). */
export function eventAsk(event: ParsedEvent, nowMs: number): EventAsk {
  const skipped = skipReason(event, nowMs);
  if (skipped !== null) return { skipped };
  if (event.target.kind === 'pod') return { ask: { duties: 'reconcile', seen: resourceVersionOf(event.object) } };
  if (event.target.kind === 'neoset') {
    const neosetSeen = resourceVersionOf(event.object);
    return { ask: neosetSeen === undefined ? { duties: 'all', neosetFromEtcd: true } : { duties: 'all', neosetSeen } };
  }
  return { ask: RECHECK_ASK };
}

/** The ask of one run that covers two events. */
export function mergeAsks(a: Ask, b: Ask): Ask {
  const later = (x?: string, y?: string) => (y === undefined ? x : newest(y, x));
  const merged: Ask = { duties: a.duties === 'all' || b.duties === 'all' ? 'all' : 'reconcile', seen: later(a.seen, b.seen), neosetSeen: later(a.neosetSeen, b.neosetSeen) };
  return a.neosetFromEtcd || b.neosetFromEtcd ? { ...merged, neosetFromEtcd: true } : merged;
}

/** When a run looks again by itself, in ms; null when the next event or the resync tick covers it. */
export function recheckDelayMs(outcome: Pick<Outcome, 'result' | 'requeueAfter'>): number | null {
  if (outcome.result === 'conflict') return CONFLICT_RECHECK_MS;
  if (outcome.requeueAfter !== null && outcome.requeueAfter <= MAX_SELF_RECHECK_SECONDS) return Math.max(100, outcome.requeueAfter * 1000);
  return null;
}

function skipReason(event: ParsedEvent, nowMs: number): string | null {
  if (event.object === null || !event.type.endsWith('.update')) return null;
  if (event.target.kind === 'pod') return podEventCanSkip(event.object as Pod, nowMs);
  if (event.target.kind === 'neoset') return neosetEventCanSkip(event.object as NeoSet);
  return null;
}

/**
 * The event's object's resourceVersion (a Pod's, a NeoSet's), when it is a comparable one (a replayed
 * or hand-written event may carry anything). The reader compares what it read with it and never asks
 * the API server for it: a forged 999999999999 costs one consistent list or one read from etcd, not a
 * 3 s wait (snapshot-reader.ts).
 */
function resourceVersionOf(object: unknown): string | undefined {
  const version = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
  return typeof version === 'string' && isComparable(version) ? version : undefined;
}
