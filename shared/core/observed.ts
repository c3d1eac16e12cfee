// The snapshot read once into the facts every part of the decision shares: the pods by ordinal
// (ours, and orphans to adopt), the live update claims (§2.0), the revisions, the effective current
// revision, and the per-decision memo of template changes.
import type { NeoSet, NeoSetStatus } from '../api/neoset.ts';
import { isAvailable, isUnavailableForBudget } from './pods/availability.ts';
import { resolveMaxUnavailable } from './update/budget.ts';
import { podInPlaceState } from './update/state-annotation.ts';
import type { ControllerRevision, ObjectMeta, Pod } from './objects.ts';
import type { InPlaceState, ObjectRef } from './plan.ts';
import { objectRef, parseOrdinal, podRevision } from './pods/identity.ts';
import { hasFinished, isTerminating } from './pods/conditions.ts';
import { resolveRevisions, type Revision, type Revisions } from './revisions/revisions.ts';
import { selects } from './selector.ts';
import type { Snapshot } from './snapshot.ts';
import { templateChange, type TemplateChange } from './revisions/template-diff.ts';
import { canaryProgress, type CanaryProgress } from './canary/progress.ts';

export interface PodView {
  pod: Pod;
  name: string;
  ordinal: number;
  ref: ObjectRef;
  /** The pod's revision: its controller-revision-hash label. */
  revision: string | undefined;
  state: InPlaceState | null;
  terminating: boolean;
  /** Phase Failed or Succeeded. */
  finished: boolean;
  /** ordinal < spec.replicas; the others are condemned (scale-down). */
  inRange: boolean;
  /**
   * A live claim (§2.0): a decision claimed this pod's update in status.updateClaims and the pod is
   * still at the claimed resourceVersion with no update state, so the claimer's write may still land.
   */
  claimed: boolean;
  /** An orphan (no controller) that the NeoSet selects: adopted before anything else is done to it (§4.1). */
  orphan: boolean;
}

export interface Observed {
  neoset: NeoSet;
  nowMs: number;
  generation: number;
  replicas: number;
  minReadySeconds: number;
  maxUnavailable: number;
  /** Pods with a NeoSet ordinal, by ordinal. Pods whose name is not `<neoset>-<i>` are not ours to act on. */
  pods: PodView[];
  byOrdinal: Map<number, PodView>;
  revisions: Revisions;
  /**
   * The revision the rollout moves pods to: the revision of spec.template (revisions.update), or the
   * current revision while the canary is aborted (§4.11: pods return in place, spec untouched).
   */
  update: Revision;
  /** The partition this decision works with: spec.updateStrategy.partition, or the canary steps' (§4.11). */
  partition: number;
  /** The automated canary's progress (§4.11); status undefined without steps. */
  canary: CanaryProgress;
  /** The current revision this decision works with: status.currentRevision, advanced when the rollout is done (§4.2). */
  current: Revision;
  /** currentRevision moves to updateRevision in this decision. */
  advanced: boolean;
  /** How a pod on revision `from` moves to `to`; null when `from` is not a stored revision. */
  change(from: string | undefined, to: string): TemplateChange | null;
  /** The claims of status.updateClaims that are still live (see PodView.claimed). */
  claims: UpdateClaim[];
  /** Revisions with no controller that the NeoSet selects: adopted, and used meanwhile (§4.1, §4.2). */
  orphanRevisions: ControllerRevision[];
}

export type UpdateClaim = NonNullable<NeoSetStatus['updateClaims']>[number];

export function observe(snapshot: Snapshot, nowMs: number): Observed {
  const { neoset } = snapshot;
  const views: PodView[] = [];
  const claimed = new Map((neoset.status?.updateClaims ?? []).map((c) => [c.pod, c]));
  const claims: UpdateClaim[] = [];
  for (const pod of snapshot.pods) {
    const ordinal = parseOrdinal(neoset.metadata.name, pod.metadata.name);
    const control = controlOf(neoset, pod);
    if (ordinal === null || control === 'other') continue;
    const ref = objectRef(pod.metadata);
    const state = podInPlaceState(pod);
    const terminating = isTerminating(pod);
    const claim = claimed.get(pod.metadata.name);
    const live = claim !== undefined && claim.uid === ref.uid && claim.resourceVersion === ref.resourceVersion && state === null && !terminating;
    if (live) claims.push(claim);
    views.push({
      pod,
      name: pod.metadata.name,
      ordinal,
      ref,
      revision: podRevision(pod),
      state,
      terminating,
      finished: hasFinished(pod),
      inRange: ordinal < neoset.spec.replicas,
      claimed: live,
      orphan: control === 'orphan',
    });
  }
  views.sort((a, b) => a.ordinal - b.ordinal);
  const byOrdinal = new Map(views.map((v) => [v.ordinal, v]));
  const usable = snapshot.revisions.filter((r) => controlOf(neoset, r) !== 'other');
  const revisions = resolveRevisions(neoset, usable);
  // Asked for every pod, several times: memoized per (from, to) without building a key string.
  const changes = new Map<string | undefined, Map<string, TemplateChange | null>>();
  const change = (from: string | undefined, to: string): TemplateChange | null => {
    let row = changes.get(from);
    if (row === undefined) changes.set(from, (row = new Map()));
    let known = row.get(to);
    if (known === undefined) {
      const a = from === undefined ? undefined : revisions.byName.get(from);
      const b = revisions.byName.get(to);
      known = a && b ? templateChange(a.template, b.template) : null;
      row.set(to, known);
    }
    return known;
  };
  const minReadySeconds = neoset.spec.minReadySeconds;
  const canary = canaryProgress({
    neoset,
    nowMs,
    updateRevision: revisions.update.name,
    currentRevision: revisions.current.name,
    minReadySeconds,
    pods: views,
    byOrdinal,
    measurement: snapshot.analysis,
  });
  const update = canary.aborted ? revisions.current : revisions.update;
  const stepsDone = canary.status === undefined || canary.status.stepIndex >= (neoset.spec.updateStrategy.canary?.steps.length ?? 0);
  // currentRevision moves only to a stored revision: the status may be written before this
  // decision's createRevision (a claim, §2.0), and must never name a revision that is not there.
  // With canary steps, only once the last one has passed (its analysis too, §4.11).
  const advanced =
    revisions.current.name !== update.name &&
    stepsDone &&
    update.stored !== null &&
    rolloutDone(neoset.spec.replicas, byOrdinal, update.name, minReadySeconds, nowMs);
  return {
    neoset,
    nowMs,
    generation: neoset.metadata.generation ?? 0,
    replicas: neoset.spec.replicas,
    minReadySeconds,
    maxUnavailable: resolveMaxUnavailable(neoset.spec),
    pods: views,
    byOrdinal,
    revisions,
    update,
    partition: canary.partition,
    canary,
    current: advanced ? update : revisions.current,
    advanced,
    change,
    claims,
    orphanRevisions: usable.filter((r) => controlOf(neoset, r) === 'orphan'),
  };
}

/**
 * Whose pod this is (§4.1): ours (controller ownerReference with our uid — labels alone can be
 * forged), an orphan we adopt (no controller, selected by spec.selector: the StatefulSet
 * controller's rule, e.g. after `kubectl delete --cascade=orphan` and a re-apply), or another's.
 */
export function controlOf(neoset: NeoSet, obj: { metadata: ObjectMeta }): 'ours' | 'orphan' | 'other' {
  const controller = obj.metadata.ownerReferences?.find((r) => r.controller);
  if (controller) return controller.uid === neoset.metadata.uid ? 'ours' : 'other';
  if (obj.metadata.deletionTimestamp) return 'other';
  return selects(neoset.spec.selector, obj.metadata.labels) ? 'orphan' : 'other';
}

/**
 * §4.2: currentRevision advances only when every pod 0..replicas-1 exists, runs updateRevision
 * (label, and no in-place update in flight) and is available — so never while partition holds pods back.
 */
function rolloutDone(replicas: number, byOrdinal: Map<number, PodView>, update: string, minReady: number, nowMs: number): boolean {
  for (let i = 0; i < replicas; i++) {
    const v = byOrdinal.get(i);
    if (!v || v.terminating || v.revision !== update || v.state !== null || !isAvailable(v.pod, minReady, nowMs)) return false;
  }
  return true;
}

/** Pods 0..replicas-1 that count against maxUnavailable: missing, terminating, not available, mid-update, or claimed (§4.4, §2.0). */
export function unavailableInRange(o: Observed): number {
  let n = 0;
  for (let i = 0; i < o.replicas; i++) {
    const v = o.byOrdinal.get(i);
    if (!v || v.terminating || v.claimed || isUnavailableForBudget(v.pod, o.minReadySeconds, o.nowMs)) n++;
  }
  return n;
}

/** A rollout is in progress: currentRevision differs from updateRevision (§4.3). */
export function rolloutInProgress(o: Observed): boolean {
  return o.current.name !== o.update.name;
}
