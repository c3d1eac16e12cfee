// The NeoSet invariants (SPEC §7), checked over any observed state — by the property tests after
// every step of the in-memory world, and by the e2e tests after every state they watch on a real
// API server. Stateless: it takes plain JSON, and optionally the previous observation, which turns
// "never start an update that ..." into checks of what changed between the two.
//
// State checks (every observation):
//   Identity        every pod is `<neoset>-<ordinal>` with the identity labels, the controller
//                   ownerReference, the InPlaceUpdateReady readiness gate, hostname/subdomain and its
//                   claims' volumes (§4.1);
//   RevisionInUse   every revision a pod is labelled with or moving to, and status.currentRevision,
//                   is stored; revision numbers are unique (§4.2);
//   ClaimOwnership  no claim has the NeoSet as its controller;
//   MaxUnavailable  (no previous only) pods 0..replicas-1 mid-update inside the budget <= maxUnavailable.
// Transition checks (with previous): see invariant-steps.ts.
import { CONDITION_INPLACE_READY, KIND, LABEL_NEOSET_NAME, LABEL_POD_INDEX, LABEL_POD_NAME, LABEL_REVISION_HASH } from '../api/names.ts';
import { claimName } from './claims.ts';
import { readObservation, type Observation, type View } from './invariant-view.ts';
import { stepInvariants } from './invariant-steps.ts';

export type { Observation } from './invariant-view.ts';

export type Invariant =
  | 'Malformed'
  | 'Identity'
  | 'RevisionInUse'
  | 'ClaimOwnership'
  | 'MaxUnavailable'
  | 'Rescue'
  | 'Pause'
  | 'Partition'
  | 'NewPodRevision'
  | 'OrderedReady'
  | 'Drain'
  | 'InPlaceDone'
  | 'Terminating'
  | 'CurrentRevision';

export interface Violation {
  invariant: Invariant;
  message: string;
  /** The pod (or claim, revision) concerned, when there is one. */
  object?: string;
}

export interface ObservedStates extends Observation {
  previous?: Observation;
}

export function checkInvariants(observed: ObservedStates): Violation[] {
  const now = readObservation(observed);
  if (typeof now === 'string') return [{ invariant: 'Malformed', message: now }];
  const out: Violation[] = [];
  identity(now, out);
  revisionsInUse(now, out);
  claims(now, out);
  const previous = observed.previous ? readObservation(observed.previous) : null;
  if (typeof previous === 'string') out.push({ invariant: 'Malformed', message: `previous: ${previous}` });
  else if (previous) stepInvariants(previous, now, out);
  else budgetNow(now, out);
  return out;
}

function identity(v: View, out: Violation[]): void {
  const fail = (object: string, message: string) => out.push({ invariant: 'Identity', object, message });
  for (const pod of v.strangers) fail(pod.metadata.name, `labelled ${LABEL_NEOSET_NAME}=${v.name} but not named ${v.name}-<ordinal>`);
  const templateVolumes = new Set(((v.neoset.spec.template.spec.volumes ?? []) as { name: string }[]).map((vol) => vol.name));
  for (const p of v.pods) {
    const labels = p.pod.metadata.labels ?? {};
    if (labels[LABEL_POD_NAME] !== p.name) fail(p.name, `label ${LABEL_POD_NAME}=${labels[LABEL_POD_NAME]}`);
    if (labels[LABEL_POD_INDEX] !== String(p.ordinal)) fail(p.name, `label ${LABEL_POD_INDEX}=${labels[LABEL_POD_INDEX]}`);
    if (!labels[LABEL_REVISION_HASH]) fail(p.name, `no ${LABEL_REVISION_HASH} label`);
    const controllers = (p.pod.metadata.ownerReferences ?? []).filter((r) => r.controller);
    const owner = controllers[0];
    if (
      controllers.length !== 1 ||
      owner.kind !== KIND ||
      owner.name !== v.name ||
      (v.neoset.metadata.uid && owner.uid !== v.neoset.metadata.uid) ||
      owner.blockOwnerDeletion !== true
    ) {
      fail(p.name, `controller ownerReference is not the NeoSet (blockOwnerDeletion): ${JSON.stringify(controllers)}`);
    }
    if (!p.pod.spec.readinessGates?.some((g) => g.conditionType === CONDITION_INPLACE_READY)) fail(p.name, 'no InPlaceUpdateReady readiness gate');
    if (p.pod.spec.hostname !== p.name) fail(p.name, `hostname ${p.pod.spec.hostname}`);
    if (v.neoset.spec.serviceName && p.pod.spec.subdomain !== v.neoset.spec.serviceName) fail(p.name, `subdomain ${p.pod.spec.subdomain}`);
    for (const claim of v.neoset.spec.volumeClaimTemplates) {
      if (templateVolumes.has(claim.metadata.name)) continue;
      const volume = p.pod.spec.volumes?.find((vol) => vol.name === claim.metadata.name) as
        | { persistentVolumeClaim?: { claimName?: string } }
        | undefined;
      const expected = claimName(claim.metadata.name, v.name, p.ordinal);
      if (volume?.persistentVolumeClaim?.claimName !== expected) fail(p.name, `volume ${claim.metadata.name} does not mount claim ${expected}`);
    }
  }
}

function revisionsInUse(v: View, out: Violation[]): void {
  if (!v.revisionNames) return;
  const stored = v.revisionNames;
  const missing = (what: string, name: string | undefined, object?: string) => {
    if (name !== undefined && !stored.has(name)) out.push({ invariant: 'RevisionInUse', object: object ?? name, message: `${what} ${name} is not stored` });
  };
  for (const p of v.pods) {
    missing('revision label', p.revision, p.name);
    missing('in-place target', p.state?.revision, p.name);
  }
  missing('status.currentRevision', v.neoset.status?.currentRevision);
  for (const n of v.duplicateNumbers) out.push({ invariant: 'RevisionInUse', message: `revision number ${n} is held by more than one revision` });
}

function claims(v: View, out: Violation[]): void {
  if (!v.pvcs) return;
  for (const pvc of v.pvcs.values()) {
    if ((pvc.metadata.ownerReferences ?? []).some((r) => r.kind === KIND && r.name === v.name && r.controller)) {
      out.push({ invariant: 'ClaimOwnership', object: pvc.metadata.name, message: 'the NeoSet is the claim\'s controller (it must be a plain owner)' });
    }
  }
}

/** Without a previous state, the budget can only be checked on the updates in flight (§4.4). */
function budgetNow(v: View, out: Violation[]): void {
  const inBudget = v.pods.filter((p) => p.ordinal < v.replicas && p.state !== null && !p.state.rescue);
  if (inBudget.length > v.maxUnavailable) {
    out.push({
      invariant: 'MaxUnavailable',
      message: `${inBudget.length} pods mid-update within the budget (${inBudget.map((p) => p.name).join(', ')}) > maxUnavailable ${v.maxUnavailable}`,
    });
  }
}
