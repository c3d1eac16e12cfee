// An independent oracle for the NeoSet invariants (SPEC §7): test equipment, not product. It reads
// plain JSON — one observed state, and optionally the state before it, which turns "never start an
// update that ..." into checks of what changed — and derives what is allowed from the SPEC's words.
// It imports nothing from shared/core/ but types: a checker that shared definitions with the code
// it checks (availability, revision resolution, the rescue flag the core writes about itself) would
// miss exactly that code's bugs. shared/api/ is the API (schema defaults, label names), not the core.
//
// Every state: state.ts. Between two states: update-claims.ts (what a status claims, §2.0), starts.ts (budget, rescue, pause, partition of starts; priority.ts: their order),
// revision-steps.ts (partition of landings, re-targets, new pods' revisions, currentRevision),
// scaling-steps.ts (OrderedReady, claims, the scale budget), in-place-steps.ts (drain, done, terminating pods),
// canary.ts (the steps' partition, step progress, abort; §4.11), claim-growth.ts (claims that grow: never a shrink, pause, partition, budget; §4.12).
import { canaryInvariants } from './canary.ts';
import { claimGrowthInvariants } from './claim-growth.ts';
import { claimInvariants } from './update-claims.ts';
import { inPlaceInvariants } from './in-place-steps.ts';
import { revisionInvariants } from './revision-steps.ts';
import { scalingInvariants } from './scaling-steps.ts';
import { startInvariants } from './starts.ts';
import { budgetWithoutPrevious, stateInvariants } from './state.ts';
import type { ObservedStates, Report, Violation } from './types.ts';
import { readObservation } from './view.ts';

export type { Invariant, Observation, ObservedStates, Violation } from './types.ts';

export function checkInvariants(observed: ObservedStates): Violation[] {
  const out: Violation[] = [];
  const report: Report = (invariant, message, object) => out.push({ invariant, message, ...(object === undefined ? {} : { object }) });
  const now = readObservation(observed);
  if (typeof now === 'string') return [{ invariant: 'Malformed', message: now }];
  stateInvariants(now, report);
  const previous = observed.previous ? readObservation(observed.previous) : null;
  if (typeof previous === 'string') report('Malformed', `previous: ${previous}`);
  else if (previous === null) budgetWithoutPrevious(now, report);
  else {
    claimInvariants(previous, now, report);
    startInvariants(previous, now, report);
    revisionInvariants(previous, now, report);
    scalingInvariants(previous, now, report);
    inPlaceInvariants(previous, now, report);
    canaryInvariants(previous, now, report);
    claimGrowthInvariants(previous, now, report);
  }
  return out;
}
