// The invariants about what changed between two observed states (SPEC §7). Exact when `previous`
// is the snapshot decide() acted on (the property tests); sound for states sampled further apart
// (the e2e tests) because each check accepts what either state's spec allows.
//
//   MaxUnavailable  when updates start (a pod gets a new in-place state that is not a rescue), the
//                   pods 0..replicas-1 unavailable in both states plus those starts <= maxUnavailable.
//                   "Unavailable caused by the update" is exactly that: kubelet failures between the
//                   states may make more pods unavailable, but then no update may start.
//   Rescue          an update outside the budget (state.rescue) starts only on a pod that was unavailable.
//   Pause           while paused — or under OnDelete — in both states, no update starts.
//   Partition       no pod below partition (the lower of the two) newly lands on updateRevision while
//                   a rollout is in progress (currentRevision != updateRevision).
//   NewPodRevision  a new pod starts on currentRevision or updateRevision; on updateRevision during a
//                   rollout only where scaling.ts's revisionForNewPod allows it (ordinal >= partition,
//                   not paused, and the rollout can only recreate: ReCreate, OnDelete, or a change
//                   beyond images under InPlaceIfPossible).
//   OrderedReady    a new pod i implies pods 0..i-1 existed, Running and Ready, not terminating; a
//                   condemned pod is deleted only when no higher ordinal exists and 0..replicas-1 are
//                   Running and Ready; a pod's new claims exist and are owned as the policy says, and a
//                   condemned pod under whenScaled=Delete owns its claims when it is deleted (ClaimOwnership).
//   Drain           an image patch comes only after the pod left the Service endpoints
//                   (InPlaceUpdateReady not True) for gracePeriodSeconds: startedAt >= drainStartedAt
//                   + grace, and the gate stays closed while the update is in flight. (A deletion to
//                   recreate is not told apart from a user's or a scale-down's: unit tests cover it.)
//   InPlaceDone     an in-place update's state is removed only when §4.5 says done (in either state);
//                   an update abandoned while Draining has changed no image.
//   Terminating     a terminating pod is never written again (labels, annotations, images, gate).
//   CurrentRevision status.currentRevision moves only to updateRevision, with every pod 0..replicas-1
//                   on it, Ready, and no update in flight.
import { KIND } from '../api/names.ts';
import { claimNames } from './claims.ts';
import type { PodFacts, View } from './invariant-view.ts';
import type { Violation } from './invariants.ts';
import { normalizeImage } from './images.ts';
import type { Pod } from './k8s.ts';
import type { InPlaceState } from './plan.ts';
import { inPlaceGate, isRunningAndReady } from './readiness.ts';
import { toMs } from './time.ts';
import { canonicalJson } from './json.ts';

export function stepInvariants(prev: View, now: View, out: Violation[]): void {
  const created = now.pods.filter((p) => !prev.byUid.has(p.uid));
  starts(prev, now, out);
  partition(prev, now, out);
  for (const p of created) newPodRevision(prev, now, p, out);
  ordered(prev, now, created, out);
  claimsOnCreate(now, created, out);
  drain(prev, now, out);
  finished(prev, now, out);
  terminating(prev, now, out);
  currentRevision(prev, now, out);
}

function drain(prev: View, now: View, out: Violation[]): void {
  const grace = Math.min(graceOf(prev), graceOf(now)) * 1000;
  for (const p of now.pods) {
    if (p.state?.phase !== 'Updating' || p.terminating) continue;
    if (inPlaceGate(p.pod)?.status === 'True') out.push({ invariant: 'Drain', object: p.name, message: 'InPlaceUpdateReady True while the in-place update is in flight' });
    const before = prev.byUid.get(p.uid);
    const patched = before !== undefined && (before.state?.phase !== 'Updating' || before.state.startedAt !== p.state.startedAt);
    if (patched && toMs(p.state.startedAt) < toMs(p.state.drainStartedAt) + grace) {
      out.push({ invariant: 'Drain', object: p.name, message: `patched less than gracePeriodSeconds after drainStartedAt ${p.state.drainStartedAt}` });
    }
  }
}

/**
 * §4.4 step 3 / §4.5 written again from the SPEC, not imported from readiness.ts: an oracle that
 * shared the code it checks would miss exactly that code's bugs. A little more lenient than decide().
 */
function updateDone(pod: Pod, state: InPlaceState, mode: 'Probe' | 'Ready'): boolean {
  if (pod.status?.phase !== 'Running') return false;
  const containersReady = pod.status.conditions?.some((c) => c.type === 'ContainersReady' && c.status === 'True') ?? false;
  const statuses = new Map((pod.status.containerStatuses ?? []).map((c) => [c.name, c]));
  const restartedOnTarget = Object.entries(state.targetImages ?? {}).every(([name, image]) => {
    const c = statuses.get(name);
    if (!c || (normalizeImage(c.image) !== normalizeImage(image) && !image.includes('@'))) return false; // digests: see images.ts
    const restarted = c.imageID !== state.previousImageIDs?.[name] || c.containerID !== state.previousContainerIDs?.[name];
    return restarted && (mode === 'Ready' || c.ready);
  });
  return restartedOnTarget && (mode === 'Probe' || containersReady);
}

const graceOf = (v: View) => v.neoset.spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds;

function finished(prev: View, now: View, out: Violation[]): void {
  const images = (p: PodFacts) => canonicalJson(p.pod.spec.containers.map((c) => c.image));
  for (const before of prev.pods) {
    const after = now.byUid.get(before.uid);
    if (!before.state || !after || after.state || after.terminating) continue;
    if (before.state.phase === 'Draining') {
      if (images(after) !== images(before)) out.push({ invariant: 'InPlaceDone', object: after.name, message: 'update abandoned after its images changed' });
      continue;
    }
    const done = (v: View, p: PodFacts) => updateDone(p.pod, before.state!, v.neoset.spec.updateStrategy.inPlaceUpdateStrategy.readiness);
    if (!done(prev, before) && !done(now, after)) {
      out.push({ invariant: 'InPlaceDone', object: after.name, message: `in-place update to ${before.state.revision} ended before it was done (§4.5)` });
    }
  }
}

function starts(prev: View, now: View, out: Violation[]): void {
  const range = Math.min(prev.replicas, now.replicas);
  const started = now.pods.filter((p) => {
    if (p.ordinal >= range || p.terminating || p.state === null) return false;
    const before = prev.byUid.get(p.uid);
    return !before?.state || before.state.drainStartedAt !== p.state.drainStartedAt;
  });
  if (started.length === 0) return;
  if ((prev.pause && now.pause) || (prev.strategy === 'OnDelete' && now.strategy === 'OnDelete')) {
    out.push({ invariant: 'Pause', message: `updates started while ${now.pause ? 'paused' : 'OnDelete'}: ${started.map((p) => p.name).join(', ')}` });
  }
  const budgeted = started.filter((p) => !p.state!.rescue);
  for (const p of started.filter((s) => s.state!.rescue)) {
    const before = prev.byUid.get(p.uid);
    if (before && !before.maybeUnavailable) out.push({ invariant: 'Rescue', object: p.name, message: 'update started outside the budget on a pod that was available' });
  }
  if (budgeted.length === 0) return;
  const startedOrdinals = new Set(budgeted.map((p) => p.ordinal));
  const unavailable = (v: View, i: number) => !v.byOrdinal.get(i) || v.byOrdinal.get(i)!.unavailable;
  const both: number[] = [];
  for (let i = 0; i < range; i++) if (!startedOrdinals.has(i) && unavailable(prev, i) && unavailable(now, i)) both.push(i);
  const max = Math.max(prev.maxUnavailable, now.maxUnavailable);
  if (both.length + budgeted.length > max) {
    out.push({
      invariant: 'MaxUnavailable',
      message:
        `started ${budgeted.map((p) => p.name).join(', ')} while ordinals [${both.join(', ')}] were unavailable: ` +
        `${both.length + budgeted.length} > maxUnavailable ${max}`,
    });
  }
}

/** A rollout is in progress in this view: both revisions known and different. */
const rolling = (v: View) => v.update !== undefined && v.current !== undefined && v.current !== v.update;

function partition(prev: View, now: View, out: Violation[]): void {
  if (!rolling(now)) return;
  const bound = Math.min(prev.partition, now.partition);
  for (const p of now.pods) {
    if (p.ordinal >= bound || p.revision !== now.update) continue;
    const before = prev.byUid.get(p.uid);
    if (!before || before.revision === now.update) continue; // a new pod is NewPodRevision's to judge
    out.push({ invariant: 'Partition', object: p.name, message: `ordinal ${p.ordinal} < partition ${bound} moved to updateRevision ${now.update}` });
  }
}

/** Could decide() in this view create `ordinal` on `revision`? (scaling.ts revisionForNewPod) */
function mayCreate(v: View, ordinal: number, revision: string | undefined): boolean {
  if (revision === undefined) return false;
  if (revision === v.current) return true;
  if (revision !== v.update) return false;
  if (!rolling(v)) return true;
  if (ordinal < v.partition || v.pause) return false;
  if (v.strategy === 'OnDelete' || v.strategy === 'ReCreate') return true;
  return v.strategy === 'InPlaceIfPossible' && v.inPlace(v.current!, v.update!) !== true;
}

function newPodRevision(prev: View, now: View, p: PodFacts, out: Violation[]): void {
  if (mayCreate(prev, p.ordinal, p.revision) || mayCreate(now, p.ordinal, p.revision)) return;
  // Without the revisions, a revision the status does not name yet (the pod was seen before the
  // status write of the same reconcile) cannot be judged.
  const named = [prev.current, prev.update, now.current, now.update];
  if (!now.revisionNames && !named.includes(p.revision)) return;
  out.push({
    invariant: 'NewPodRevision',
    object: p.name,
    message: `created on ${p.revision}; current ${now.current}, update ${now.update}, partition ${now.partition}, pause ${now.pause}, ${now.strategy}`,
  });
}

function ordered(prev: View, now: View, created: PodFacts[], out: Violation[]): void {
  if (now.neoset.spec.podManagementPolicy !== 'OrderedReady') return;
  const healthy = (v: View, i: number) => {
    const p = v.byOrdinal.get(i);
    return p !== undefined && isRunningAndReady(p.pod);
  };
  for (const p of created) {
    for (let j = 0; j < p.ordinal; j++) {
      if (!healthy(prev, j) && !healthy(now, j)) {
        out.push({ invariant: 'OrderedReady', object: p.name, message: `created while ordinal ${j} was not Running and Ready` });
        break;
      }
    }
  }
  const condemned = Math.max(prev.replicas, now.replicas);
  for (const p of now.pods) {
    const before = prev.byUid.get(p.uid);
    if (p.ordinal < condemned || !p.terminating || !before || before.terminating) continue;
    const higher = now.pods.filter((q) => q.ordinal > p.ordinal);
    if (higher.length > 0) out.push({ invariant: 'OrderedReady', object: p.name, message: `scaled down while ${higher.map((q) => q.name).join(', ')} exist` });
    for (let j = 0; j < Math.min(prev.replicas, now.replicas); j++) {
      if (!healthy(prev, j) && !healthy(now, j)) {
        out.push({ invariant: 'OrderedReady', object: p.name, message: `scaled down while ordinal ${j} was not Running and Ready` });
        break;
      }
    }
    claimsOnScaleDown(now, p, out);
  }
}

function claimsOnCreate(now: View, created: PodFacts[], out: Violation[]): void {
  if (!now.pvcs) return;
  const whenDeleted = now.neoset.spec.persistentVolumeClaimRetentionPolicy.whenDeleted;
  for (const p of created) {
    if (p.ordinal >= now.replicas) continue;
    for (const name of claimNames(now.neoset, p.ordinal)) {
      const pvc = now.pvcs.get(name);
      const refs = pvc?.metadata.ownerReferences ?? [];
      const ownedBySet = refs.some((r) => r.kind === KIND && r.name === now.name);
      const problem = !pvc
        ? 'is missing'
        : pvc.metadata.deletionTimestamp
          ? 'is terminating'
          : refs.some((r) => r.kind === 'Pod')
            ? 'is owned by a pod'
            : ownedBySet !== (whenDeleted === 'Delete')
              ? `${ownedBySet ? 'is' : 'is not'} owned by the NeoSet under whenDeleted=${whenDeleted}`
              : null;
      if (problem) out.push({ invariant: 'ClaimOwnership', object: name, message: `pod ${p.name} created while its claim ${problem}` });
    }
  }
}

function claimsOnScaleDown(now: View, p: PodFacts, out: Violation[]): void {
  if (!now.pvcs || now.neoset.spec.persistentVolumeClaimRetentionPolicy.whenScaled !== 'Delete') return;
  for (const name of claimNames(now.neoset, p.ordinal)) {
    const pvc = now.pvcs.get(name);
    if (pvc && !(pvc.metadata.ownerReferences ?? []).some((r) => r.kind === 'Pod' && r.uid === p.uid)) {
      out.push({ invariant: 'ClaimOwnership', object: name, message: `pod ${p.name} scaled down (whenScaled=Delete) before it owned its claim` });
    }
  }
}

function terminating(prev: View, now: View, out: Violation[]): void {
  const written = (p: PodFacts) =>
    canonicalJson([p.pod.metadata.labels, p.pod.metadata.annotations, p.pod.spec.containers.map((c) => c.image), inPlaceGate(p.pod)?.status]);
  for (const before of prev.pods) {
    if (!before.terminating) continue;
    const after = now.byUid.get(before.uid);
    if (after && written(after) !== written(before)) {
      out.push({ invariant: 'Terminating', object: after.name, message: 'a terminating pod was written (labels, annotations, images or InPlaceUpdateReady)' });
    }
  }
}

function currentRevision(prev: View, now: View, out: Violation[]): void {
  const from = prev.neoset.status?.currentRevision;
  const to = now.neoset.status?.currentRevision;
  if (!from || !to || from === to) return;
  const done = (v: View) => {
    for (let i = 0; i < v.replicas; i++) {
      const p = v.byOrdinal.get(i);
      if (!p || p.terminating || p.revision !== to || p.state !== null || !p.ready) return false;
    }
    return true;
  };
  const target = to === now.update || to === prev.update || to === now.neoset.status?.updateRevision;
  if (!target || (!done(prev) && !done(now))) {
    out.push({ invariant: 'CurrentRevision', message: `currentRevision moved ${from} -> ${to} before every pod ran it, Ready` });
  }
}

