// The NeoSet API's fixed names: group, version, kinds, and the label / annotation / condition keys
// that NeoSet writes on the objects it owns (SPEC §3, §4.1, §4.4).

export const GROUP = 'neo.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'NeoSet';
export const PLURAL = 'neosets';
export const SINGULAR = 'neoset';
export const SHORT_NAMES = ['neo'];

/** Pod label naming the owning NeoSet; events about Pods map to their NeoSet through it (SPEC §2). */
export const LABEL_NEOSET_NAME = 'neoset.neo.io/name';
export const LABEL_POD_NAME = 'neoset.neo.io/pod-name';
/** The label the StatefulSet controller sets too (Kubernetes >= 1.28). */
export const LABEL_POD_INDEX = 'apps.kubernetes.io/pod-index';
export const LABEL_REVISION_HASH = 'controller-revision-hash';

/** The only memory of an in-place update in flight (SPEC §4.4). */
export const ANNOTATION_INPLACE_STATE = 'neoset.neo.io/inplace-update-state';

/**
 * Written on a pod to release an update claim that will not be acted on (SPEC §2.0): the write moves
 * the pod's resourceVersion past the claimed one, so the claimer's conditional write can no longer land.
 */
export const ANNOTATION_CLAIM_RELEASED = 'neoset.neo.io/claim-released';

/**
 * SPEC §4.10: where a pod stands in its update hooks — Normal, PreparingUpdate (waiting for the
 * preUpdate owner's "go"), Updating, Updated (waiting for the postUpdate owner's "re-joined").
 */
export const LABEL_LIFECYCLE_STATE = 'neoset.neo.io/lifecycle-state';
/** When the pod entered its lifecycle state (RFC 3339): what a hook's timeoutSeconds counts from. */
export const ANNOTATION_LIFECYCLE_SINCE = 'neoset.neo.io/lifecycle-since';
/** The CloudEvent type of a lifecycle state change: `io.neo.neoset.lifecycle.<state>`. */
export const LIFECYCLE_EVENT_PREFIX = 'io.neo.neoset.lifecycle.';

/** Readiness gate set on every pod at creation; False while the pod is drained for an in-place update. */
export const CONDITION_INPLACE_READY = 'InPlaceUpdateReady';

/** kubectl's change-cause annotation: copied from the NeoSet onto each new revision, for `rollout history`. */
export const ANNOTATION_CHANGE_CAUSE = 'kubernetes.io/change-cause';

/**
 * Container restartCount at which a pod's update left it, per container (JSON), written with the image
 * patch: restarts past it are the canary's own (SPEC §4.11 maxRestarts). The patch's own restart of a
 * changed container is counted in. Kept after the update (the state annotation is not).
 */
export const ANNOTATION_RESTART_BASE = 'neoset.neo.io/restart-base';
