// The snapshot read once into the facts every part of the decision shares: the pods by ordinal
// (ours, and orphans to adopt), the live update claims (§2.0), the revisions, and the per-decision
// memo of template changes. Facts only: where the rollout goes is the next step's (target.ts).
import type { NeoSet, NeoSetStatus } from '../api/neoset.ts';
import { controlOf } from './ownership.ts';
import { podInPlaceState } from './pods/in-place-state.ts';
import type { ControllerRevision, Pod } from './objects.ts';
import type { InPlaceState } from '../api/inplace-state.ts';
import type { ObjectRef } from './plan.ts';
import { objectRef, parseOrdinal, podRevision } from './pods/identity.ts';
import { ordinalPositions, ordinalsInRange } from './ordinals.ts';
import { inTerminalPhase, isTerminating } from './pods/conditions.ts';
import { doneAndAvailable } from './pods/availability.ts';
import { resolveRevisions, type Revisions } from './revisions/revisions.ts';
import type { Snapshot } from './snapshot.ts';
import { templateChange, type TemplateChange } from './revisions/template-diff.ts';

export interface ObservedPod {
  pod: Pod;
  name: string;
  ordinal: number;
  ref: ObjectRef;
  /** The pod's revision: its controller-revision-hash label, or the revision that one equals (Revisions.on). */
  revision: string | undefined;
  state: InPlaceState | null;
  /**
   * Its in-place update is done and the pod available (doneAndAvailable, §4.4 step 3, §4.5): the state
   * waits only for the readiness function's finish write. Whether that ends the pod's update in this
   * decision depends on where the rollout goes: inUpdate().
   */
  done: boolean;
  terminating: boolean;
  /** Phase Failed or Succeeded. */
  terminalPhase: boolean;
  /** The ordinal is one of Observed.ordinals (§4.12); the others are condemned (scale-down, start moved, reserved). */
  inRange: boolean;
  /** Its index in Observed.ordinals, what the partition compares (§4.12); -1 when condemned. */
  position: number;
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
  /** The ordinals replicas maps to, ascending (ordinals.ts): 0..replicas-1 without start or reserveOrdinals. */
  ordinals: number[];
  /** ordinal -> position in `ordinals` (what the partition compares); an ordinal not here is condemned. */
  positions: ReadonlyMap<number, number>;
  minReadySeconds: number;
  /** Pods with a NeoSet ordinal, by ordinal. Pods whose name is not `<neoset>-<i>` are not ours to act on. */
  pods: ObservedPod[];
  byOrdinal: Map<number, ObservedPod>;
  revisions: Revisions;
  /** How a pod on revision `from` moves to `to`; null when `from` is not a stored revision. */
  change(from: string | undefined, to: string): TemplateChange | null;
  /** The claims of status.updateClaims that are still live (see ObservedPod.claimed). */
  claims: UpdateClaim[];
  /** Revisions with no controller that the NeoSet selects: adopted, and used meanwhile (§4.1, §4.2). */
  orphanRevisions: ControllerRevision[];
}

export type UpdateClaim = NonNullable<NeoSetStatus['updateClaims']>[number];

/**
 * §4.4: the pod is in its update — it carries an in-place state, unless that update is done, the pod
 * available, toward `target` (the revision the rollout moves pods to). A done pod the rollout now sends
 * elsewhere is re-targeted in this very decision, a drain again: it stays counted, as it did before.
 * What the budget, the claim set (currentUpdatePods), updatedReplicas, currentRevision, a canary's step
 * and OrderedReady ask; the in-place steps themselves follow the state (in-place-steps.ts).
 */
export function inUpdate(v: ObservedPod, target: string): boolean {
  return v.state !== null && !(v.done && v.state.revision === target);
}

export function observe(snapshot: Snapshot, nowMs: number): Observed {
  const { neoset } = snapshot;
  const views: ObservedPod[] = [];
  const claimed = new Map((neoset.status?.updateClaims ?? []).map((c) => [c.pod, c]));
  const claims: UpdateClaim[] = [];
  const usable = snapshot.revisions.filter((r) => controlOf(neoset, r) !== 'other');
  const revisions = resolveRevisions(neoset, usable);
  const ordinals = ordinalsInRange(neoset.spec);
  const { minReadySeconds } = neoset.spec;
  const readiness = neoset.spec.updateStrategy.inPlaceUpdateStrategy.readiness;
  const positions = ordinalPositions(ordinals);
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
      revision: revisions.on(podRevision(pod)),
      state,
      // The mode the update started under (recorded in its state), as inFlightStep judges it.
      done: state?.phase === 'Updating' && !terminating && doneAndAvailable(pod, state, state.readiness ?? readiness, minReadySeconds, nowMs),
      terminating,
      terminalPhase: inTerminalPhase(pod),
      inRange: positions.has(ordinal),
      position: positions.get(ordinal) ?? -1,
      claimed: live,
      orphan: control === 'orphan',
    });
  }
  views.sort((a, b) => a.ordinal - b.ordinal);
  const byOrdinal = new Map(views.map((v) => [v.ordinal, v]));
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
  return {
    neoset,
    nowMs,
    generation: neoset.metadata.generation ?? 0,
    replicas: neoset.spec.replicas,
    ordinals,
    positions,
    minReadySeconds,
    pods: views,
    byOrdinal,
    revisions,
    change,
    claims,
    orphanRevisions: usable.filter((r) => controlOf(neoset, r) === 'orphan'),
  };
}
