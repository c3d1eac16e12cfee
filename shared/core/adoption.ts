// Adoption (§4.1): orphans the NeoSet selects become its own before anything else is done to them —
// the pods and revisions of the snapshot (decide.ts), and an object found under a name the NeoSet
// creates (the applier asks nameTaken with what it read).
import { LABEL_NEOSET_NAME } from '../api/names.ts';
import type { NeoSet } from '../api/neoset.ts';
import { sameJson } from './json.ts';
import type { ControllerRevision, ObjectMeta, PersistentVolumeClaim, Pod } from './objects.ts';
import type { Observed } from './observed.ts';
import { controlOf } from './ownership.ts';
import type { Action } from './plan.ts';
import { neosetOwnerRef, objectRef } from './pods/identity.ts';

/** The adoptions of a decision: its orphan pods (added to `touched`: one write per pod) and revisions. */
export function adoptions(o: Observed, touched: Set<string>): Action[] {
  const owner = [neosetOwnerRef(o.neoset, true)];
  const actions: Action[] = [];
  for (const v of o.pods.filter((p) => p.orphan)) {
    touched.add(v.name);
    actions.push({
      kind: 'adoptPod',
      object: v.ref,
      ownerReferences: [...(v.pod.metadata.ownerReferences ?? []), ...owner],
      event: { type: 'Normal', reason: 'SuccessfulAdopt', message: `adopted orphan Pod ${v.name}` },
    });
  }
  for (const r of o.orphanRevisions) {
    actions.push({
      kind: 'adoptRevision',
      object: objectRef(r.metadata),
      ownerReferences: [...(r.metadata.ownerReferences ?? []), ...owner],
      event: { type: 'Normal', reason: 'SuccessfulAdopt', message: `adopted orphan ControllerRevision ${r.metadata.name}` },
    });
  }
  return actions;
}

export type Created = Pod | PersistentVolumeClaim | ControllerRevision;

/**
 * A create met AlreadyExists; `existing` is the object read under that name. What the StatefulSet
 * controller does: ours already (another decision won the race) → a race (a conflict); a volume claim of
 * that name → used, labelled as ours so later snapshots list it (volume claims are matched by name, §4.1);
 * an orphan revision with our template → adopted; anything else → refused, with why.
 */
export type NameTaken =
  | { verdict: 'race' }
  | { verdict: 'use' }
  /** Merge-patched onto `existing`, conditional on its resourceVersion. */
  | { verdict: 'patch'; metadata: Pick<ObjectMeta, 'labels' | 'ownerReferences'> }
  | { verdict: 'refuse'; message: string };

export function nameTaken(neoset: NeoSet, created: Created, existing: Created): NameTaken {
  const control = controlOf(neoset, existing);
  if (control === 'ours') return { verdict: 'race' };
  if (created.kind === 'PersistentVolumeClaim' && !existing.metadata.deletionTimestamp) {
    if (existing.metadata.labels?.[LABEL_NEOSET_NAME] === neoset.metadata.name) return { verdict: 'use' };
    return { verdict: 'patch', metadata: { labels: { [LABEL_NEOSET_NAME]: neoset.metadata.name } } };
  }
  if (created.kind === 'ControllerRevision' && control === 'orphan' && sameJson((existing as ControllerRevision).data?.spec?.template, (created as ControllerRevision).data.spec.template)) {
    return { verdict: 'patch', metadata: { ownerReferences: [...(existing.metadata.ownerReferences ?? []), ...(created.metadata.ownerReferences ?? [])] } };
  }
  const owner = existing.metadata.ownerReferences?.find((r) => r.controller);
  const why = owner ? `controlled by ${owner.kind} ${owner.name}` : control === 'orphan' ? 'a different object' : 'not selected by spec.selector';
  return { verdict: 'refuse', message: `${created.kind} ${created.metadata.name} already exists and cannot be adopted (${why})` };
}
