// Scaling (§4.3): which ordinals are created or deleted in this decision, and at which revision a
// new pod starts.
import { rolloutInProgress, type Rollout } from '../target.ts';
import { volumeClaimNames, volumeClaimOwners, newVolumeClaim, replaceVolumeClaimOwners } from './volume-claims.ts';
import type { PersistentVolumeClaim } from '../objects.ts';
import { inUpdate, type ObservedPod } from '../observed.ts';
import type { Action } from '../plan.ts';
import { newPod, objectRef, podName } from '../pods/identity.ts';
import { isRunningAndReady } from '../pods/conditions.ts';
import type { Revision } from '../revisions/revisions.ts';
import { creationSlots } from './scale-budget.ts';

/**
 * The revision a pod NeoSet creates at `position` (its index among the ordinals in range, what the
 * partition compares: §4.12) starts at. SPEC §4.3 gives two rules for a pod
 * created while a rollout is in progress (currentRevision != updateRevision):
 *   (a) "A new pod is created from currentRevision (stable) ... The rollout then updates it like any
 *       other pod, when its ordinal is >= partition and the rollout is not paused."
 *   (b) "A deleted or failed pod is recreated at the revision its ordinal should have (>= partition:
 *       update revision, else current revision)."
 * A missing ordinal does not say whether it is a scale-up or a pod that was deleted (nothing in the
 * cluster remembers the old replica count), so one rule must serve both:
 *   - no rollout in progress: updateRevision;
 *   - position < partition, or paused: currentRevision (rule (a) and (b) agree; pause starts nothing new);
 *   - otherwise, if the rollout can only reach updateRevision by recreating pods (ReCreate; OnDelete,
 *     whose update is the user's deletion; InPlaceIfPossible with a change beyond images): updateRevision —
 *     rule (b); a pod created at currentRevision would only be deleted again (and ReCreate would never
 *     progress), and a missing pod is already unavailable, so nothing is lost;
 *   - otherwise (the change is done in place): currentRevision — rule (a); the rollout then moves the
 *     pod in place like any other, so a deleted pod also ends on updateRevision, as (b) wants.
 * The acceptance case — pods 4,3 on v2, pause, scale 5 -> 8 — creates 5,6,7 on v1; after resume with
 * partition 0 they are updated in place.
 */
export function revisionForNewPod(o: Rollout, position: number): Revision {
  if (!rolloutInProgress(o)) return o.target;
  const { pause, type } = o.neoset.spec.updateStrategy;
  // §4.12: the partition compares positions among the ordinals in range (update/starts.ts wantsUpdate).
  if (position < o.partition || pause) return o.current;
  if (type === 'OnDelete' || type === 'ReCreate') return o.target;
  if (type === 'InPlaceIfPossible' && !o.change(o.current.name, o.target.name)?.inPlace) return o.target;
  return o.current;
}

/** Volume claims of the pods in range owned as the retention policy says (an earlier scale-down may have given them the pod). */
export function volumeClaimOwnerActions(o: Rollout, pvcs: Map<string, PersistentVolumeClaim>): Action[] {
  const actions: Action[] = [];
  for (const i of o.ordinals) {
    for (const name of volumeClaimNames(o.neoset, i)) {
      const pvc = pvcs.get(name);
      if (!pvc || pvc.metadata.deletionTimestamp) continue;
      const owners = replaceVolumeClaimOwners(pvc, o.neoset, podName(o.neoset.metadata.name, i), volumeClaimOwners(o.neoset, null));
      if (owners) actions.push({ kind: 'setPVCOwners', pvc: objectRef(pvc.metadata), ownerReferences: owners });
    }
  }
  return actions;
}

/**
 * Creates, deletes of failed pods, and scale-down. OrderedReady: walk the ordinals in range
 * (Observed.ordinals, ascending: 0..replicas-1 without start or reserveOrdinals) and stop at the
 * first ordinal that is missing (create it: one per decision), terminating (its name is not reused
 * until it is gone), failed (delete it) or not Running and Ready; only when all are Running and Ready,
 * delete the highest condemned pod, once the one above it is gone — condemned: out of range after a
 * scale-down, a change of spec.ordinals.start, or an ordinal newly reserved (§4.12; the StatefulSet
 * controller creates the new range first and then deletes the condemned, highest first, and Kruise
 * deletes a pod on a reserved ordinal the same way). Parallel: all at once — but with
 * a scale budget (scaleStrategy.maxUnavailable, scale-budget.ts) only while it has room.
 * Deleted pods are added to `touched` (one write per pod per decision).
 */
export function scalingActions(o: Rollout, pvcs: Map<string, PersistentVolumeClaim>, touched: Set<string>): Action[] {
  const actions: Action[] = [];
  const ordered = o.neoset.spec.podManagementPolicy === 'OrderedReady';
  const remove = (v: ObservedPod, why: string) => {
    if (v.orphan) return; // adopted first (decide.ts), deleted by a later decision if still condemned
    touched.add(v.name);
    actions.push({
      kind: 'deletePod',
      pod: v.ref,
      event: { type: 'Normal', reason: 'SuccessfulDelete', message: `delete Pod ${v.name} in NeoSet ${o.neoset.metadata.name} successful: ${why}` },
    });
  };
  // §4.12 scale budget (Parallel): the lowest missing ordinals first, as many as it allows.
  let slots = creationSlots(o);
  for (const [position, i] of o.ordinals.entries()) {
    const v = o.byOrdinal.get(i);
    if (!v) {
      if (slots <= 0) continue;
      const created = createOrdinal(o, i, position, pvcs);
      if (created) slots--;
      actions.push(...(created ?? []));
      if (ordered) return actions;
    } else if (v.terminating) {
      if (ordered) return actions;
    } else if (v.terminalPhase) {
      remove(v, `pod phase ${v.pod.status?.phase}`);
      if (ordered) return actions;
    } else if (ordered && (!isRunningAndReady(v.pod) || inUpdate(v, o.target.name) || v.claimed)) {
      // A pod in its update (an in-place state, or a live claim whose drain may land any moment) is
      // not Ready for OrderedReady even while its Ready condition still says so: the drain sets the
      // gate False before the kubelet recomputes Ready, and a pod list may not show the drain yet.
      // One done and available (inUpdate) is Ready on its new images: its finish write is not waited for.
      return actions;
    }
  }
  const condemned = o.pods.filter((v) => !v.inRange).sort((a, b) => b.ordinal - a.ordinal);
  for (const v of condemned) {
    if (v.terminating) {
      if (ordered) return actions;
      continue;
    }
    // whenScaled=Delete: the pod becomes its volume claims' owner before it is deleted, so they go with it.
    for (const name of volumeClaimNames(o.neoset, v.ordinal)) {
      const pvc = pvcs.get(name);
      if (!pvc || pvc.metadata.deletionTimestamp) continue;
      const owners = replaceVolumeClaimOwners(pvc, o.neoset, v.name, volumeClaimOwners(o.neoset, v.pod));
      if (owners) actions.push({ kind: 'setPVCOwners', pvc: objectRef(pvc.metadata), ownerReferences: owners });
    }
    remove(v, 'scale down');
    if (ordered) return actions;
  }
  return actions;
}

/** The volume claims (created first when missing) and the pod of a missing ordinal; null while a volume claim is still terminating. */
function createOrdinal(o: Rollout, ordinal: number, position: number, pvcs: Map<string, PersistentVolumeClaim>): Action[] | null {
  const actions: Action[] = [];
  for (const template of o.neoset.spec.volumeClaimTemplates) {
    const volumeClaim = newVolumeClaim(o.neoset, template, ordinal);
    const existing = pvcs.get(volumeClaim.metadata.name);
    if (existing?.metadata.deletionTimestamp) return null;
    if (!existing) {
      actions.push({
        kind: 'createPVC',
        pvc: volumeClaim,
        event: { type: 'Normal', reason: 'SuccessfulCreate', message: `create Claim ${volumeClaim.metadata.name} for Pod ${podName(o.neoset.metadata.name, ordinal)} in NeoSet ${o.neoset.metadata.name} success` },
      });
    }
  }
  const revision = revisionForNewPod(o, position);
  const pod = newPod(o.neoset, ordinal, revision.name, revision.template);
  actions.push({
    kind: 'createPod',
    pod,
    event: { type: 'Normal', reason: 'SuccessfulCreate', message: `create Pod ${pod.metadata.name} in NeoSet ${o.neoset.metadata.name} successful (revision ${revision.name})` },
  });
  return actions;
}
