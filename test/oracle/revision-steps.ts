// What may happen to revisions between two observed states (§4.2–§4.4). "Either state may justify
// it": a decision read one of them, and the checker does not know which.
//
//   Partition        no pod with ordinal below partition (the lower of the two) newly lands on an
//                    update revision while a rollout is in progress (it stays on currentRevision) —
//                    unless the landing is work claimed before the partition was raised.
//   Retarget         an in-place state that is new, or names a new revision, names the updateRevision
//                    of one of the two states: a decider holding a stale spec must not send a pod back.
//                    Work claimed before (named in status.currentUpdatePods, §2.0) may also land on the
//                    revision the claiming status named: it was judged when it was claimed (update-claims.ts).
//   NewPodRevision   a new pod starts on currentRevision; on updateRevision only when no rollout is in
//                    progress, or its ordinal >= partition and the rollout is not paused (§4.3).
//   CurrentRevision  status.currentRevision moves only to updateRevision, with every pod
//                    in range (ordinals.ts) on it, Ready and with no update in flight (§4.2; one done
//                    and available that still carries its state is not in flight: view.ts inUpdate).
import type { Report } from './types.ts';
import { belowPartition, rangeOf, rank } from './ordinals.ts';
import { claimed } from './update-claims.ts';
import type { PodFacts, View } from './view.ts';

export function revisionInvariants(prev: View, now: View, report: Report): void {
  landings(prev, now, report);
  retargets(prev, now, report);
  for (const p of now.pods) if (!prev.byUid.has(p.uid)) newPodRevision(prev, now, p, report);
  currentRevision(prev, now, report);
}

/** The revisions a state's decision may move pods to during a rollout. */
const rolloutTarget = (v: View): string | undefined => (v.revisions.rolling ? v.revisions.update : undefined);

function landings(prev: View, now: View, report: Report): void {
  const currents = new Set([prev.revisions.current, now.revisions.current]);
  const targets = new Set([rolloutTarget(prev), rolloutTarget(now)].filter((r) => r !== undefined && !currents.has(r)));
  const inFlight = claimed(prev); // claimed work finishes as claimed (update-claims.ts)
  for (const p of now.pods) {
    const before = prev.byUid.get(p.uid);
    if (!before || !belowPartition(prev, p.ordinal) || !belowPartition(now, p.ordinal) || p.revision === before.revision || !targets.has(p.revision!) || inFlight.has(p.name)) continue;
    report('Partition', `ordinal ${p.ordinal} (position ${rank(now, p.ordinal)}) < partition ${Math.min(prev.partition, now.partition)} moved to updateRevision ${p.revision}`, p.name);
  }
}

/**
 * Without stored revisions the update revision is read from status, which a decision writes last:
 * a revision no status names yet cannot be judged then.
 */
function judgeable(prev: View, now: View, revision: string): boolean {
  if (prev.revisions.stored || now.revisions.stored) return true;
  return [prev, now].some((v) => v.revisions.current === revision || v.revisions.update === revision);
}

function retargets(prev: View, now: View, report: Report): void {
  // §4.11: an aborted canary sends its pods back to currentRevision.
  const aborted = [prev, now].filter((v) => v.canary?.aborted).map((v) => v.revisions.current);
  const allowed = new Set([prev.revisions.update, now.revisions.update, ...aborted]);
  // Work claimed earlier (§2.0) was judged when claimed: it may still land on the revision the claim named.
  const claimedToward = prev.neoset.status?.updateRevision;
  for (const p of now.pods) {
    if (!p.state || p.terminating || prev.byUid.get(p.uid)?.state?.revision === p.state.revision) continue;
    if (allowed.has(p.state.revision) || !judgeable(prev, now, p.state.revision)) continue;
    if (claimed(prev).has(p.name) && p.state.revision === claimedToward) continue;
    report('Retarget', `in-place update targets ${p.state.revision}, not the updateRevision (${[...allowed].join(' or ')})`, p.name);
  }
}

function mayCreate(v: View, ordinal: number, revision: string | undefined): boolean {
  if (revision === undefined) return false;
  if (revision === v.revisions.current) return true;
  if (revision !== v.revisions.update) return false;
  return !v.revisions.rolling || (!belowPartition(v, ordinal) && !v.pause);
}

function newPodRevision(prev: View, now: View, p: PodFacts, report: Report): void {
  if (mayCreate(prev, p.ordinal, p.revision) || mayCreate(now, p.ordinal, p.revision)) return;
  if (p.revision !== undefined && !judgeable(prev, now, p.revision)) return;
  const { current, update } = now.revisions;
  report('NewPodRevision', `created on ${p.revision}; current ${current}, update ${update}, partition ${now.partition}, pause ${now.pause}`, p.name);
}

function currentRevision(prev: View, now: View, report: Report): void {
  const from = prev.neoset.status?.currentRevision;
  const to = now.neoset.status?.currentRevision;
  if (!from || !to || from === to) return;
  const updates = [prev, now].flatMap((v) => [v.revisions.update, v.neoset.status?.updateRevision]);
  const done = (v: View) => {
    for (const i of rangeOf(v).ordinals) {
      const p = v.byOrdinal.get(i);
      if (!p || p.terminating || p.revision !== to || p.inUpdate || !p.ready) return false;
    }
    return true;
  };
  if (!updates.includes(to) || (!done(prev) && !done(now))) {
    report('CurrentRevision', `currentRevision moved ${from} -> ${to} before every pod ran it, Ready, with no update in flight`);
  }
}
