// Claims that grow (§4.12), between two observed states with their PVCs (skipped without them): a
// claim of the NeoSet is `<template>-<neoset>-<ordinal>`; it grows when its spec.resources.requests
// .storage rises, and it is resizing while it requests more than its status.capacity reports.
//
//   ClaimShrink     no claim of the NeoSet requests less storage than it did (same uid).
//   Pause           no claim grows while pause is true, or the strategy OnDelete, in both states.
//   Partition       no claim grows on an ordinal the partition holds back in both states (its position, ordinals.ts).
//   MaxUnavailable  once claims grow (or pods start updates) while claims resize, the pods
//                   in range in both states busy in both — unavailable, or a claim resizing — plus the
//                   ones that were not busy before and now grow a claim or start an update fit in
//                   maxUnavailable (the larger of the two). Kubelet failures between the states may
//                   make more pods busy, but then nothing may start.
//
// Quantities are read here (decimal and binary suffixes, by value), not with the core's parser.
import type { PersistentVolumeClaim } from '../../shared/core/objects.ts';
import { belowPartition, rangeInBoth } from './ordinals.ts';
import type { Report } from './types.ts';
import type { View } from './view.ts';

export function claimGrowthInvariants(prev: View, now: View, report: Report): void {
  if (!prev.pvcs || !now.pvcs) return;
  const templates = [...new Set([prev, now].flatMap((v) => v.neoset.spec.volumeClaimTemplates.map((t) => t.metadata.name)))];
  const ordinalOf = (claim: string): number | null => {
    for (const t of templates) {
      const prefix = `${t}-${now.name}-`;
      const digits = claim.startsWith(prefix) ? claim.slice(prefix.length) : '';
      if (/^(0|[1-9][0-9]{0,8})$/.test(digits)) return Number(digits);
    }
    return null;
  };
  const grown = new Map<number, string[]>();
  for (const [name, after] of now.pvcs) {
    const ordinal = ordinalOf(name);
    const before = prev.pvcs.get(name);
    if (ordinal === null || !before || before.metadata.uid !== after.metadata.uid) continue;
    const from = bytes(request(before));
    const to = bytes(request(after));
    if (to < from) report('ClaimShrink', `claim ${name} shrank from ${request(before)} to ${request(after)}`, name);
    if (to > from) grown.set(ordinal, [...(grown.get(ordinal) ?? []), name]);
  }
  const resizingIn = (v: View) => {
    const out = new Set<number>();
    for (const [name, pvc] of v.pvcs!) {
      const ordinal = ordinalOf(name);
      if (ordinal !== null && resizing(pvc)) out.add(ordinal);
    }
    return out;
  };
  const [resizingBefore, resizingNow] = [resizingIn(prev), resizingIn(now)];
  if (grown.size === 0 && resizingBefore.size === 0 && resizingNow.size === 0) return;

  const claims = (ordinals: Iterable<number>) => [...ordinals].flatMap((o) => grown.get(o) ?? []).join(', ');
  if ((prev.pause && now.pause) || (prev.strategy === 'OnDelete' && now.strategy === 'OnDelete')) {
    if (grown.size > 0) report('Pause', `claims grew while ${now.pause ? 'paused' : 'OnDelete'}: ${claims(grown.keys())}`);
  }
  for (const [ordinal, names] of grown) {
    if (belowPartition(prev, ordinal) && belowPartition(now, ordinal)) report('Partition', `claims ${names.join(', ')} of ordinal ${ordinal} grew below partition ${Math.min(prev.partition, now.partition)}`, names[0]);
  }

  // The budget: busy = unavailable, or a claim resizing.
  const busy = (v: View, resizingNowOrBefore: Set<number>, i: number) => (v.byOrdinal.get(i)?.unavailable ?? true) || resizingNowOrBefore.has(i);
  const startedUpdate = (i: number) => {
    const p = now.byOrdinal.get(i);
    const before = prev.byOrdinal.get(i);
    return p !== undefined && p.state !== null && before !== undefined && before.uid === p.uid && (before.state === null || before.state.drainStartedAt !== p.state.drainStartedAt);
  };
  const both: number[] = [];
  const started: number[] = [];
  for (const i of rangeInBoth(prev, now)) {
    const wasBusy = busy(prev, resizingBefore, i);
    if ((grown.has(i) || startedUpdate(i)) && !wasBusy) started.push(i);
    else if (wasBusy && busy(now, resizingNow, i)) both.push(i);
  }
  const max = Math.max(prev.maxUnavailable, now.maxUnavailable);
  if (started.length > 0 && both.length + started.length > max) {
    report('MaxUnavailable', `${both.length + started.length} pods unavailable or resizing (ordinals [${both.join(', ')}] already, started ${started.join(', ')}${grown.size > 0 ? `; claims grown: ${claims(grown.keys())}` : ''}) > maxUnavailable ${max}`);
  }
}

type Claim = PersistentVolumeClaim & { spec?: { resources?: { requests?: { storage?: unknown } } }; status?: { phase?: unknown; capacity?: { storage?: unknown } } };

const request = (pvc: Claim): string => String(pvc.spec?.resources?.requests?.storage ?? '');

/** Bound, and requesting more than its capacity says it has. */
function resizing(pvc: Claim): boolean {
  const capacity = pvc.status?.capacity?.storage;
  return pvc.status?.phase === 'Bound' && capacity !== undefined && bytes(String(capacity)) < bytes(request(pvc));
}

const SUFFIXES: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };

/** A storage quantity in bytes; NaN when unreadable (compares false with everything: no finding). */
function bytes(q: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?\s*$/.exec(q);
  return m ? Number(m[1]) * SUFFIXES[m[2] ?? ''] : NaN;
}
