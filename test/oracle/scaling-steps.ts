// Creates and scale-downs between two observed states (§4.1, §4.3), with the claims they need.
//
//   OrderedReady    a new pod implies the pods before it in its range (ordinals.ts: 0..i-1 without start
//                   or reserveOrdinals) were Running and Ready (in either state); a condemned pod (out
//                   of range in both states: scaled down, start moved, reserved) starts terminating only
//                   when no higher condemned ordinal exists and the pods in range in both states are
//                   Running and Ready (the StatefulSet controller: condemned highest first, §4.12).
//   Ordinals        a pod is created only on an ordinal in range (ordinals.ts).
//   ClaimOwnership  a new pod's claims exist, are not terminating, and are owned as
//                   whenDeleted says (the NeoSet a plain owner under Delete, nobody under Retain); a
//                   condemned pod under whenScaled=Delete owns its claims when it is deleted, so the
//                   garbage collector takes them with it (StatefulSet retention semantics).
//   ScaleBudget     §4.12 (OpenKruise scaleStrategy.maxUnavailable), Parallel: the pods created (and
//                   not yet Ready) plus the pods in range in both not Running and Ready in both states fit
//                   in the budget (the larger of the two states'; an integer, or a percentage of
//                   replicas rounded down, at least 1). Pods that failed between the states may leave
//                   more not Ready, but then nothing may be created.
import { KIND } from '../../shared/api/names.ts';
import { inRange, ordinalInvariants, rangeInBoth, rangeOf } from './ordinals.ts';
import { claimName } from './state.ts';
import type { Report } from './types.ts';
import type { PodFacts, View } from './view.ts';

export function scalingInvariants(prev: View, now: View, report: Report): void {
  const created = now.pods.filter((p) => !prev.byUid.has(p.uid));
  ordinalInvariants(prev, now, created, report);
  if (now.neoset.spec.podManagementPolicy === 'OrderedReady') {
    for (const p of created) createdInOrder(prev, now, p, report);
    scaledDownInOrder(prev, now, report);
  }
  for (const p of created) if (inRange(now, p.ordinal)) claimsOnCreate(now, p, report);
  if (created.length > 0) scaleBudget(prev, now, created, report);
  for (const p of now.pods) {
    const before = prev.byUid.get(p.uid);
    if (condemned(prev, now, p.ordinal) && p.terminating && before && !before.terminating) claimsOnScaleDown(now, p, report);
  }
}

/** Out of range in both states: scaled down, left behind by a change of start, or reserved (§4.12). */
const condemned = (prev: View, now: View, ordinal: number) => !inRange(prev, ordinal) && !inRange(now, ordinal);

const healthy = (v: View, i: number) => v.byOrdinal.get(i)?.runningAndReady ?? false;

/** The first of `ordinals` Running and Ready in neither state, or null. */
function firstUnhealthy(prev: View, now: View, ordinals: number[]): number | null {
  for (const j of ordinals) if (!healthy(prev, j) && !healthy(now, j)) return j;
  return null;
}

/** The ordinals before `ordinal` in the range of a state that has it (now's first: the spec it was created under, most likely). */
function before(prev: View, now: View, ordinal: number): number[] {
  const v = inRange(now, ordinal) ? now : prev;
  const { ordinals, position } = rangeOf(v);
  return ordinals.slice(0, position.get(ordinal) ?? 0);
}

function createdInOrder(prev: View, now: View, p: PodFacts, report: Report): void {
  const j = firstUnhealthy(prev, now, before(prev, now, p.ordinal));
  if (j !== null) report('OrderedReady', `created while ordinal ${j} was not Running and Ready`, p.name);
}

function scaledDownInOrder(prev: View, now: View, report: Report): void {
  for (const p of now.pods) {
    const before = prev.byUid.get(p.uid);
    if (!condemned(prev, now, p.ordinal) || !p.terminating || !before || before.terminating) continue;
    const higher = now.pods.filter((q) => q.ordinal > p.ordinal && condemned(prev, now, q.ordinal));
    if (higher.length > 0) report('OrderedReady', `scaled down while ${higher.map((q) => q.name).join(', ')} exist`, p.name);
    const j = firstUnhealthy(prev, now, rangeInBoth(prev, now));
    if (j !== null) report('OrderedReady', `scaled down while ordinal ${j} was not Running and Ready`, p.name);
  }
}

const claimNamesOf = (v: View, ordinal: number) => v.neoset.spec.volumeClaimTemplates.map((c) => claimName(c.metadata.name, v.name, ordinal));

function claimsOnCreate(now: View, p: PodFacts, report: Report): void {
  if (!now.pvcs) return;
  const whenDeleted = now.neoset.spec.persistentVolumeClaimRetentionPolicy.whenDeleted;
  for (const name of claimNamesOf(now, p.ordinal)) {
    const pvc = now.pvcs.get(name);
    const refs = pvc?.metadata.ownerReferences ?? [];
    const ownedBySet = refs.some((r) => r.kind === KIND && r.name === now.name);
    const problem = !pvc
      ? 'is missing'
      : pvc.metadata.deletionTimestamp
        ? 'is terminating'
        : refs.some((r) => r.kind === 'Pod')
          ? 'is owned by a pod'
          : ownedBySet !== (whenDeleted === 'Delete')
            ? `${ownedBySet ? 'is' : 'is not'} owned by the NeoSet under whenDeleted=${whenDeleted}`
            : null;
    if (problem) report('ClaimOwnership', `pod ${p.name} created while its claim ${problem}`, name);
  }
}

function claimsOnScaleDown(now: View, p: PodFacts, report: Report): void {
  if (!now.pvcs || now.neoset.spec.persistentVolumeClaimRetentionPolicy.whenScaled !== 'Delete') return;
  for (const name of claimNamesOf(now, p.ordinal)) {
    const pvc = now.pvcs.get(name);
    if (pvc && !(pvc.metadata.ownerReferences ?? []).some((r) => r.kind === 'Pod' && r.uid === p.uid)) {
      report('ClaimOwnership', `pod ${p.name} scaled down (whenScaled=Delete) before it owned its claim`, name);
    }
  }
}

/** The scale budget a state's spec sets, or null for none (absent, or OrderedReady). */
function scaleBudgetOf(v: View): number | null {
  const value = v.neoset.spec.scaleStrategy?.maxUnavailable;
  if (value === undefined || v.neoset.spec.podManagementPolicy !== 'Parallel') return null;
  const text = String(value).trim();
  const n = text.endsWith('%') ? Math.floor((Number.parseInt(text, 10) * v.replicas) / 100) : Number.parseInt(text, 10);
  return Number.isFinite(n) && n >= 1 ? n : 1;
}

function scaleBudget(prev: View, now: View, created: PodFacts[], report: Report): void {
  const [a, b] = [scaleBudgetOf(prev), scaleBudgetOf(now)];
  if (a === null || b === null) return;
  const range = rangeInBoth(prev, now);
  const createdUids = new Set(created.map((p) => p.uid));
  const notReady = (v: View, i: number) => {
    const p = v.byOrdinal.get(i);
    return p !== undefined && !createdUids.has(p.uid) && !p.runningAndReady;
  };
  const both: number[] = [];
  for (const i of range) if (notReady(prev, i) && notReady(now, i)) both.push(i);
  // Every created pod was in range of the spec it was created under; one already Ready by now may
  // have freed its slot for another (states sampled further apart than one decision).
  const counted = created.filter((p) => !p.runningAndReady);
  const max = Math.max(a, b);
  if (counted.length > 0 && both.length + counted.length > max) {
    report('ScaleBudget', `${both.length + counted.length} pods not Ready (ordinals [${both.join(', ')}] already, created ${counted.map((p) => p.name).join(', ')}) > scaleStrategy.maxUnavailable ${max}`);
  }
}
