// The core's public surface, for the functions, the applier, the plugin and the dashboard.
// Everything here is pure: no I/O, no clock (time is always an argument). The files are grouped as
// the SPEC is: decide.ts (the whole decision, §2), observed.ts (the snapshot's facts), plan.ts (its
// output); pods/ (§4.1 identity, §4.5 readiness and availability), revisions/ (§4.2), scaling/
// (§4.3), update/ (§4.4: which pods start, the budget, one pod's in-place steps), status/ (§4.6).
export { decide, isReadinessDuty, type Duties } from './decide.ts';
export { podReadiness } from './update/readiness.ts';
export type { Action, ActionKind, EventSpec, InPlaceState, ObjectRef, Plan } from './plan.ts';
export type { Snapshot } from './snapshot.ts';
/** §4.1 */
export { newPod, parseOrdinal, podName, podRevision } from './pods/identity.ts';
export { availableSince, isAvailable } from './pods/availability.ts';
export { inPlaceUpdateDone, isReady } from './pods/conditions.ts';
export { normalizeImage, runsImage, sameImage } from './pods/images.ts';
/** §4.2: revision names and resolution — what a rollback or `rollout history` needs. */
export { mainImage, resolveRevisions, revisionName, type Revision, type Revisions } from './revisions/revisions.ts';
export { templateHash } from './revisions/hash.ts';
export { templateChange, type TemplateChange } from './revisions/template-diff.ts';
/** §4.3 */
export { claimName, claimNames } from './scaling/volume-claims.ts';
/** §4.4: the budget, and the in-place state annotation. */
export { resolveMaxUnavailable } from './update/budget.ts';
export { encodeInPlaceState, parseInPlaceState, podInPlaceState } from './update/state-annotation.ts';
export { labelSelectorString } from './selector.ts';
export { canonicalJson, sameJson } from './json.ts';
export { rfc3339, toMs } from './time.ts';
