// Checks that hold in every observed state, alone:
//   Identity        every pod is `<neoset>-<ordinal>` with the identity labels, the NeoSet as its
//                   controller (blockOwnerDeletion), the InPlaceUpdateReady readiness gate,
//                   hostname/subdomain and its claims mounted (§4.1);
//   RevisionInUse   every revision a pod runs or moves to, and status.currentRevision, is stored, and
//                   no two stored revisions share a number (§4.2: pruning never removes one in use);
//   ClaimOwnership  the NeoSet is never a claim's controller (StatefulSet retention semantics, §4.1);
//   MaxUnavailable  (without a previous state) the updates in flight on pods in range (ordinals.ts) that the
//                   rescue rule does not exempt fit in maxUnavailable (§4.4); a state whose update is done
//                   and available is not in flight (view.ts inUpdate).
import { CONDITION_INPLACE_READY, KIND, LABEL_NEOSET_NAME, LABEL_POD_INDEX, LABEL_POD_NAME, LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import { inRange } from './ordinals.ts';
import type { Report } from './types.ts';
import type { PodFacts, View } from './view.ts';

/** §3: one PVC per claim per ordinal, `<claim>-<neoset>-<ordinal>`. */
export const claimName = (claim: string, neoset: string, ordinal: number): string => `${claim}-${neoset}-${ordinal}`;

export function stateInvariants(v: View, report: Report): void {
  identity(v, report);
  revisionsInUse(v, report);
  claimControllers(v, report);
}

function identity(v: View, report: Report): void {
  const fail = (object: string, message: string) => report('Identity', message, object);
  for (const pod of v.strangers) fail(pod.metadata.name, `labelled ${LABEL_NEOSET_NAME}=${v.name} but not named ${v.name}-<ordinal>`);
  const templateVolumes = new Set(((v.neoset.spec.template.spec.volumes ?? []) as { name: string }[]).map((vol) => vol.name));
  for (const p of v.pods) {
    const { metadata, spec } = p.pod;
    const labels = metadata.labels ?? {};
    if (labels[LABEL_POD_NAME] !== p.name) fail(p.name, `label ${LABEL_POD_NAME}=${labels[LABEL_POD_NAME]}`);
    if (labels[LABEL_POD_INDEX] !== String(p.ordinal)) fail(p.name, `label ${LABEL_POD_INDEX}=${labels[LABEL_POD_INDEX]}`);
    if (!labels[LABEL_REVISION_HASH]) fail(p.name, `no ${LABEL_REVISION_HASH} label`);
    const controllers = (metadata.ownerReferences ?? []).filter((r) => r.controller);
    const owner = controllers[0];
    const uid = v.neoset.metadata.uid;
    if (controllers.length !== 1 || owner.kind !== KIND || owner.name !== v.name || (uid && owner.uid !== uid) || owner.blockOwnerDeletion !== true) {
      fail(p.name, `controller ownerReference is not the NeoSet (blockOwnerDeletion): ${JSON.stringify(controllers)}`);
    }
    if (!spec.readinessGates?.some((g) => g.conditionType === CONDITION_INPLACE_READY)) fail(p.name, `no ${CONDITION_INPLACE_READY} readiness gate`);
    if (spec.hostname !== p.name) fail(p.name, `hostname ${spec.hostname}`);
    if (v.neoset.spec.serviceName && spec.subdomain !== v.neoset.spec.serviceName) fail(p.name, `subdomain ${spec.subdomain}`);
    for (const claim of v.neoset.spec.volumeClaimTemplates) {
      if (templateVolumes.has(claim.metadata.name)) continue; // the template's own volume of that name wins
      const volume = spec.volumes?.find((vol) => vol.name === claim.metadata.name) as { persistentVolumeClaim?: { claimName?: string } } | undefined;
      const expected = claimName(claim.metadata.name, v.name, p.ordinal);
      if (volume?.persistentVolumeClaim?.claimName !== expected) fail(p.name, `volume ${claim.metadata.name} does not mount claim ${expected}`);
    }
  }
}

function revisionsInUse(v: View, report: Report): void {
  const stored = v.revisions.stored;
  if (!stored) return;
  const missing = (what: string, name: string | undefined, object?: string) => {
    if (name !== undefined && !stored.has(name)) report('RevisionInUse', `${what} ${name} is not stored`, object ?? name);
  };
  for (const p of v.pods) {
    missing('revision label', p.revision, p.name);
    missing('in-place target', p.state?.revision, p.name);
  }
  missing('status.currentRevision', v.neoset.status?.currentRevision);
  for (const n of v.revisions.duplicateNumbers) report('RevisionInUse', `revision number ${n} is held by more than one revision`);
}

function claimControllers(v: View, report: Report): void {
  for (const pvc of v.pvcs?.values() ?? []) {
    if ((pvc.metadata.ownerReferences ?? []).some((r) => r.kind === KIND && r.name === v.name && r.controller)) {
      report('ClaimOwnership', "the NeoSet is the claim's controller (it must be a plain owner)", pvc.metadata.name);
    }
  }
}

/**
 * §4.4 without a previous state: the updates in flight on pods in range, less those the rescue
 * rule may have taken outside the budget, fit in maxUnavailable. Where the pod came from is unknown
 * here: a Draining pod still carries its old revision label, but an Updating one already carries the
 * target's, so an Updating pod that is not Ready is given the benefit of the doubt.
 */
export function budgetWithoutPrevious(v: View, report: Report): void {
  const known = new Set([v.revisions.current, v.revisions.update].filter((r) => r !== undefined));
  const mayBeRescue = (p: PodFacts) => !p.ready && (p.state!.phase === 'Updating' || p.revision === undefined || !known.has(p.revision));
  const counted = v.pods.filter((p) => inRange(v, p.ordinal) && p.inUpdate && !mayBeRescue(p));
  if (counted.length > v.maxUnavailable) {
    report('MaxUnavailable', `${counted.length} pods mid-update that no rescue explains (${counted.map((p) => p.name).join(', ')}) > maxUnavailable ${v.maxUnavailable}`);
  }
}
