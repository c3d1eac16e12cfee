// SPEC §2.0 "claim before act": a decision that starts budget-consuming work first writes the NeoSet
// status naming that work (status.currentUpdatePods), conditional on the resourceVersion it read.
// The work is in flight from that moment ("updates in flight finish", §4.4), and its pod write may
// land a moment later — after a user's edit, even — so a start is judged by the spec under which it
// was claimed:
//   Claim   a pod newly named in currentUpdatePods, with no update in flight yet, is claimed under
//           the spec of the same object: never while paused (or OnDelete), never below partition.
// starts.ts and revision-steps.ts then take claimed starts as in flight.
import { belowPartition, rank } from './ordinals.ts';
import type { Report } from './types.ts';
import type { View } from './view.ts';

/** Pods a state's status names as being updated (an update in flight, or claimed). */
export const claimed = (v: View): Set<string> => new Set(v.neoset.status?.currentUpdatePods ?? []);

export function claimInvariants(prev: View, now: View, report: Report): void {
  const before = claimed(prev);
  for (const name of claimed(now)) {
    const p = now.pods.find((x) => x.name === name);
    if (before.has(name) || !p || p.state !== null || p.terminating) continue;
    if (now.pause || now.strategy === 'OnDelete') report('Pause', `${name} claimed while ${now.pause ? 'paused' : 'OnDelete'}`, name);
    if (belowPartition(now, p.ordinal)) report('Partition', `${name} (ordinal ${p.ordinal}, position ${rank(now, p.ordinal)}) claimed below partition ${now.partition}`, name);
  }
}
