// The output of decide(): ordered actions (data, not calls — STYLE §2), the new status, and when to
// look again. One switch in shared/k8s/apply.ts turns each action into conditional API writes.
import type { InPlaceState } from '../api/inplace-state.ts';
import type { NeoSetStatus, PrometheusAnalysis } from '../api/neoset.ts';
import type { ControllerRevision, OwnerReference, PersistentVolumeClaim, Pod } from './objects.ts';
import type { ResizeTarget } from './resize/resources.ts';
import type { Failure } from './failure.ts';

/** Which object version an action was computed from: writes are conditional on it (SPEC §2). */
export interface ObjectRef {
  name: string;
  uid: string;
  resourceVersion: string;
  /**
   * The write follows another write to the same object in this plan and is conditional on the
   * resourceVersion THAT write returned (§2.0: a pod carried through consecutive steps).
   */
  chained?: boolean;
}

/** SPEC §4.10: the pod label neoset.neo.io/lifecycle-state. */
export type LifecycleState = 'Normal' | 'PreparingUpdate' | 'Updating' | 'Updated';

/** The pod condition InPlaceUpdateReady as a decision writes it (pods/status; SPEC §4.4). */
export interface Gate {
  status: 'True' | 'False';
  reason: string;
  message: string;
  /** The condition's lastTransitionTime, stamped by the decision (gate-time.ts). */
  lastTransitionTime: string;
  /**
   * Set by a finish that found the pod Ready: when it found the update done. The reconcile function
   * leaves that write's own event alone (event-relevance.ts); any other gate write clears it.
   */
  lastProbeTime?: string;
}

/** A Kubernetes Event to record for an action. */
export interface EventSpec {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export type Action =
  /** Store a new template (§4.2). */
  | { kind: 'createRevision'; revision: ControllerRevision; event: EventSpec }
  /** An older revision's template is back in spec.template (rollback): give it the next number. */
  | { kind: 'renumberRevision'; revision: ObjectRef; number: number; event: EventSpec }
  /** History beyond revisionHistoryLimit, never one in use. */
  | { kind: 'deleteRevision'; revision: ObjectRef }
  | { kind: 'createPVC'; pvc: PersistentVolumeClaim; event: EventSpec }
  /** Retention policy: replace the PVC's ownerReferences (owner NeoSet on whenDeleted=Delete, owner pod on a scale-down with whenScaled=Delete). */
  | { kind: 'setPVCOwners'; pvc: ObjectRef; ownerReferences: OwnerReference[] }
  /** §4.12 claims that grow: raise the PVC's spec.resources.requests.storage to the template's (never lower). */
  | { kind: 'resizeClaim'; pvc: ObjectRef; storage: string; event: EventSpec }
  | { kind: 'createPod'; pod: Pod; event: EventSpec }
  | { kind: 'deletePod'; pod: ObjectRef; event: EventSpec }
  /**
   * In-place step 1, one write through pods/status: the state annotation (phase Draining) and the
   * gate False together — the memory and the drain land at once (SPEC §4.4).
   */
  | { kind: 'markDraining'; pod: ObjectRef; state: InPlaceState; gate: Gate; event: EventSpec }
  /** Set the InPlaceUpdateReady condition through pods/status (True on a new pod; a gate a drain lost). */
  | ({ kind: 'setInPlaceReady'; pod: ObjectRef } & Gate)
  /** In-place step 2: one patch — new images, controller-revision-hash label, state annotation (phase Updating). */
  | {
      kind: 'patchImages';
      pod: ObjectRef;
      images: Record<string, string>;
      revision: string;
      state: InPlaceState;
      /** Absent when the same plan started the pod's update: its UpdateStarted Event tells it. */
      event?: EventSpec;
      /** Template label changes carried in place (merge-patch: null removes). Absent when none. */
      labels?: Record<string, string | null>;
      /** Template annotation changes carried in place (merge-patch: null removes). Absent when none. */
      annotations?: Record<string, string | null>;
    }
  /**
   * In-place step 2b (§4.9): the containers' cpu/memory through the pods/resize subresource, chained
   * on the image patch that recorded the target. When the API server refuses it (403: the node's
   * allocatable), the applier records the refusal instead: `refused` with the API server's message
   * as resizeRefused, written to the state annotation (conditional like every write).
   */
  | { kind: 'resizePod'; pod: ObjectRef; containers: Record<string, ResizeTarget>; refused: InPlaceState }
  /**
   * In-place step 4: remove the state annotation — with the gate opened in the same pods/status write
   * when the pod runs; the update took durationSeconds (observed once, by the writer). A done update
   * records no Event (the gate's message says it, per pod; SPEC §2.0: Events per plan, not per pod).
   */
  | {
      kind: 'finishInPlaceUpdate';
      pod: ObjectRef;
      revision: string;
      durationSeconds: number;
      /** The gate opened by the same write; absent when the pod does not run yet (it opens later). */
      gate?: Gate;
      event?: EventSpec;
      /** True when the update was abandoned before the image patch (no duration to observe). */
      aborted?: boolean;
    }
  /** §4.4 step 5: pause was toggled since the patch — the deadline runs again from now (the state annotation only). */
  | { kind: 'restartDeadline'; pod: ObjectRef; state: InPlaceState; event: EventSpec }
  /**
   * §4.10: the pod's lifecycle state (label) and since when (annotation), one conditional pod patch;
   * the applier then sends the CloudEvent io.neo.neoset.lifecycle.<state> to $K_SINK.
   */
  | { kind: 'setLifecycle'; pod: ObjectRef; state: LifecycleState; since: string }
  /** Adopt an orphan pod or revision (§4.1): add the NeoSet as its controller, conditional on its resourceVersion. */
  | { kind: 'adoptPod' | 'adoptRevision'; object: ObjectRef; ownerReferences: OwnerReference[]; event: EventSpec }
  /**
   * §2.0: a live claim that no decision will act on (the rollout no longer wants the pod): write the
   * pod so that its resourceVersion moves past the claimed one; the next decision drops the claim.
   */
  | { kind: 'releaseClaim'; pod: ObjectRef }
  /** An Event not tied to a single write (rollout complete, deadline exceeded). `key` makes it idempotent. */
  | { kind: 'recordEvent'; key: string; event: EventSpec };

export type ActionKind = Action['kind'];

/**
 * One pod's next write as a rule decides it (§4.4 in-place steps, §4.5 its gate, §4.10 its hooks),
 * and the failure it found, if any: the rollout is Failed for it, and its Warning Event is recorded
 * once under `key` (an idempotency key naming the pod and the wait that failed).
 */
export interface PodStep {
  action: Action | null;
  failure?: Failure & { key: string };
}

export interface Plan {
  actions: Action[];
  /**
   * §2.0 claim before act: the status (naming the claimed pods) is written FIRST, conditional on the
   * NeoSet's resourceVersion, even when it did not change — the write proves that the spec the plan
   * was computed from is still the current one; on a 409 nothing is done. True when the plan holds a
   * write that depends on the spec (anything but readiness-gate writes, the end of an update, Events).
   */
  claim: boolean;
  /** The status to write; null when it equals the current one and claim is false. */
  status: NeoSetStatus | null;
  /** Seconds until a time-based wait (minReadySeconds, grace period, timeout) needs another look; null: none. */
  requeueAfter: number | null;
  /**
   * §4.11: a step's end is due and must be judged by this Prometheus query first. The plan does not
   * advance the step; the reconcile function measures and decides again with the measurement in the
   * snapshot (decide() does no I/O).
   */
  analysis?: PrometheusAnalysis;
}
