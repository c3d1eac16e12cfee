// The core's public surface, for the functions, the applier, the plugin and the dashboard.
// Everything here is pure: no I/O, no clock (time is always an argument). The files are layered as
// layers.ts lists them, bottom first (test/unit/layers.test.ts holds them to it): wire types and
// helpers (objects.ts, plan.ts, actions.ts: the table of action kinds), pod facts (pods/, resize/
// §4.9), observed
// facts (observed.ts, revisions/ §4.2), the rollout target (target.ts, canary/ §4.11), one folder per
// SPEC section — readiness/ §4.5, update/ §4.4 (the budget included), hooks/ §4.10, scaling/ §4.3 —
// then status/ §4.6, and decide.ts (§2: the order of the parts).
export { decide, type Duties } from './decide.ts';
export { ACTIONS, isReadinessDuty } from './actions.ts';
export { podReadiness } from './readiness/readiness.ts';
export type { Action, ActionKind, EventSpec, ObjectRef, Plan } from './plan.ts';
export type { InPlaceState } from '../api/inplace-state.ts';
export type { Snapshot } from './snapshot.ts';
/** §4.1 */
export { volumeClaimName, newPod, parseOrdinal, podName, podRevision } from './pods/identity.ts';
export { availableSince, isAvailable } from './pods/availability.ts';
export { inPlaceUpdateDone, isReady } from './pods/conditions.ts';
export { normalizeImage, runsImage, sameImage } from './pods/images.ts';
/** §4.2: revision names and resolution — what a rollback or `rollout history` needs. */
export { mainImage, resolveRevisions, revisionName, type Revision, type Revisions } from './revisions/revisions.ts';
export { templateHash } from './revisions/hash.ts';
export { templateChange, type TemplateChange } from './revisions/template-diff.ts';
/** §4.3 */
export { volumeClaimNames } from './scaling/volume-claims.ts';
/** §4.4: the budget, and the in-place state annotation. */
export { resolveMaxUnavailable } from './update/budget.ts';
export { encodeInPlaceState, parseInPlaceState, podInPlaceState } from './pods/in-place-state.ts';
export { labelSelectorString } from './selector.ts';
export { canonicalJson, sameJson } from './json.ts';
export { rfc3339, toMs } from './time.ts';
