// The core's public surface, for the functions, the applier, the plugin and the e2e tests.
// Everything here is pure: no I/O, no clock (time is always an argument).
export { decide, decideReadiness } from './decide.ts';
export { checkInvariants, type Invariant, type ObservedStates, type Violation } from './invariants.ts';
export type { Observation } from './invariant-view.ts';
export type { Action, ActionKind, EventSpec, InPlaceState, ObjectRef, Plan } from './plan.ts';
export type { Snapshot } from './snapshot.ts';
/** Revision names and resolution (§4.2): what a rollback or `rollout history` needs. */
export { mainImage, resolveRevisions, revisionName, type Revision, type Revisions } from './revisions.ts';
export { templateHash } from './hash.ts';
/** The in-place state annotation (§4.4). */
export { encodeInPlaceState, parseInPlaceState, podInPlaceState } from './inplace-state.ts';
export { normalizeImage, runsImage, sameImage } from './images.ts';
export { templateChange, type TemplateChange } from './template-diff.ts';
export { claimName, claimNames } from './claims.ts';
export { newPod, parseOrdinal, podName, podRevision } from './pods.ts';
export { availableSince, isAvailable } from './availability.ts';
export { inPlaceUpdateDone, isReady } from './readiness.ts';
export { resolveMaxUnavailable } from './budget.ts';
export { labelSelectorString } from './selector.ts';
export { canonicalJson, sameJson } from './json.ts';
export { rfc3339, toMs } from './time.ts';
