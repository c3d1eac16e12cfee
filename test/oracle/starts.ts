// Updates that start between two observed states (§4.4). A start is a pod gaining an in-place state
// annotation, or a new drainStartedAt (a fresh drain) — or, with update hooks (§4.10), a pod entering
// them (its drain then is no new start). Each check accepts what either state's spec
// allows, so it is exact when `previous` is the snapshot a decision read (the property tests) and
// sound for states sampled further apart (the e2e observer).
//
//   Pause           while pause is true in both states, or the strategy is OnDelete in both, nothing
//                   starts — rescues included — but work claimed before (update-claims.ts) may land.
//   Partition       nothing starts on a pod whose position (§4.12, ordinals.ts) is below the partition of both states
//                   (claimed work aside, as for Pause).
//   MaxUnavailable  the pods in range in both states unavailable in both (the started ones aside), plus
//                   the started ones that are not rescue-eligible, fit in maxUnavailable (the larger
//                   of the two). A pod done and available whose state is re-targeted counts as started. A start claimed in an earlier state (§2.0) was judged when its claim
//                   appeared, as a start then: a claimed pod takes its slot from the claim on. Kubelet failures between the states may make more pods unavailable,
//                   but then nothing may start.
//   Rescue          reported instead of MaxUnavailable when the other starts fit in the budget and the
//                   excess is starts on pods that were unavailable and yet are no rescue (§4.4 revised: a Pending pod on
//                   currentRevision, a Ready pod inside minReadySeconds): a false rescue, named as such,
//                   because that is the mistake to look for, not an arithmetic slip in the budget.
//   Priority        the unclaimed starts in update order (§4.12): priority.ts.
//
// Rescue-eligible (§4.4 "Rescue [revised, v0.2]"): in the previous state the pod is not Ready and its
// revision is neither currentRevision nor updateRevision of either state — a pod stuck on an
// abandoned revision. Derived from the pods themselves, never from a flag the checked code writes.
import { belowPartition, rangeInBoth, rank } from './ordinals.ts';
import { priorityInvariants } from './priority.ts';
import { claimed } from './update-claims.ts';
import type { Report } from './types.ts';
import { inHooks, type PodFacts, type View } from './view.ts';

export function startInvariants(prev: View, now: View, report: Report): void {
  const started = now.pods.filter((p) => {
    if (p.terminating) return false;
    const before = prev.byUid.get(p.uid);
    const hooksBefore = before !== undefined && inHooks(before.pod);
    // §4.10: with update hooks an update starts when the pod enters them (PreparingUpdate); its drain
    // later is the same update, on the budget slot it has held since.
    if (inHooks(p.pod) && !hooksBefore && !before?.state) return true;
    if (p.state === null || hooksBefore) return false;
    return !before?.state || before.state.drainStartedAt !== p.state.drainStartedAt;
  });
  const names = (pods: PodFacts[]) => pods.map((p) => p.name).join(', ');
  // Claimed work is in flight (§2.0): pause, partition and the budget judged it when it was claimed
  // (update-claims.ts, and below): its pod write may land after a user's edit — a scale-up that adds
  // missing pods, say — as "updates in flight finish" (§4.4).
  const inFlight = claimed(prev);
  const unclaimed = started.filter((p) => !inFlight.has(p.name));
  // Newly claimed, not started yet: they take their budget slots now.
  const claiming = now.pods.filter((p) => claimed(now).has(p.name) && !inFlight.has(p.name) && p.state === null && !p.terminating && !started.includes(p));
  // A pod done and available that still carries its state, sent to another revision (drainStartedAt
  // kept: no new start above), leaves service again: for the budget it is a start.
  const retargeted = now.pods.filter((p) => {
    const before = prev.byUid.get(p.uid);
    return !p.terminating && p.state !== null && before?.state != null && !before.unavailable && before.state.revision !== p.state.revision && !started.includes(p);
  });
  budget(prev, now, [...unclaimed, ...claiming, ...retargeted], report);
  if (started.length === 0) return;
  if (unclaimed.length > 0 && ((prev.pause && now.pause) || (prev.strategy === 'OnDelete' && now.strategy === 'OnDelete'))) {
    report('Pause', `updates started while ${now.pause ? 'paused' : 'OnDelete'}: ${names(unclaimed)}`);
  }
  // §4.12: the partition counts positions among the ordinals in range (ordinals.ts).
  for (const p of unclaimed.filter((s) => belowPartition(prev, s.ordinal) && belowPartition(now, s.ordinal))) {
    report('Partition', `update started on ordinal ${p.ordinal} (position ${rank(now, p.ordinal)}) < partition ${Math.min(prev.partition, now.partition)}`, p.name);
  }
  priorityInvariants(prev, now, unclaimed, report);
}

function budget(prev: View, now: View, started: PodFacts[], report: Report): void {
  if (started.length === 0) return;
  const range = rangeInBoth(prev, now);
  const inBoth = new Set(range);
  const known = new Set([prev, now].flatMap((v) => [v.revisions.current, v.revisions.update]).filter((r) => r !== undefined));
  const eligible = (p: PodFacts) => {
    const before = prev.byUid.get(p.uid);
    return before !== undefined && !before.ready && (before.revision === undefined || !known.has(before.revision));
  };
  const counted = started.filter((p) => inBoth.has(p.ordinal) && !eligible(p));
  const startedOrdinals = new Set(started.map((p) => p.ordinal));
  const unavailable = (v: View, i: number) => v.byOrdinal.get(i)?.unavailable ?? true;
  const both: number[] = [];
  for (const i of range) if (!startedOrdinals.has(i) && unavailable(prev, i) && unavailable(now, i)) both.push(i);
  const max = Math.max(prev.maxUnavailable, now.maxUnavailable);
  const total = both.length + counted.length;
  // Only rescues started: they take no budget, however many pods are down (§4.4).
  if (counted.length === 0 || total <= max) return;
  const falseRescues = counted.filter((p) => prev.byUid.get(p.uid)?.unavailable);
  const tally = `${total} unavailable (ordinals [${both.join(', ')}] already, started ${counted.map((p) => p.name).join(', ')}) > maxUnavailable ${max}`;
  // The starts that are no false rescue fit in what the already-unavailable pods left: the excess is
  // the false rescues' doing.
  if (falseRescues.length > 0 && counted.length - falseRescues.length <= Math.max(0, max - both.length)) {
    for (const p of falseRescues) report('Rescue', `update started outside the budget on ${p.name}, which is no rescue: ${whyNoRescue(prev.byUid.get(p.uid)!)}; ${tally}`, p.name);
    return;
  }
  const note = falseRescues.length > 0 ? `; of these, not rescue-eligible though unavailable: ${falseRescues.map((p) => p.name).join(', ')}` : '';
  report('MaxUnavailable', `${tally}${note}`);
}

function whyNoRescue(before: PodFacts): string {
  if (before.ready) return 'it was Ready (inside minReadySeconds: it serves traffic)';
  return `it was not Ready but runs ${before.revision}, the current or update revision (a pod just created, or failing on a revision still wanted)`;
}
