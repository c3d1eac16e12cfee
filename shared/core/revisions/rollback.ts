// Rollback (SPEC §4.7), as `kubectl neoset rollout undo` and the dashboard's undo do it: copy a stored
// revision's template into spec.template; §4.2 then reuses that revision and §4.4 patches the pods back.
// Each revision stores a pod template in `.data.spec.template`, a `.revision` number (higher is newer;
// a rollback renumbers the reused revision to the highest) and the change-cause copied from the
// NeoSet when it was created.
import { ANNOTATION_CHANGE_CAUSE as CHANGE_CAUSE } from '../../api/names.ts';
import type { NeoSet, PodTemplateSpec } from '../../api/neoset.ts';
import { sameJson } from '../json.ts';
import type { ControllerRevision } from '../objects.ts';

export const templateOf = (r: ControllerRevision) => r.data.spec.template as PodTemplateSpec;
export const changeCauseOf = (r: ControllerRevision) => r.metadata.annotations?.[CHANGE_CAUSE];

/** spec.template is already the revision's: undo has nothing to write (the comparison §4.2 finds a template's revision by). */
export const hasTemplateOf = (neoset: NeoSet, r: ControllerRevision) => sameJson(templateOf(r), neoset.spec.template);

/** The newest revision whose template differs from the NeoSet's spec.template: what "undo" goes back to. */
export function previousRevision(neoset: NeoSet, revisions: ControllerRevision[]): ControllerRevision | undefined {
  return revisions.filter((r) => !hasTemplateOf(neoset, r)).sort((a, b) => b.revision - a.revision)[0];
}

/** What `rollout undo [--to-revision=N]` goes back to: revision N, else the previous one; undefined when there is none. */
export function undoTarget(neoset: NeoSet, revisions: ControllerRevision[], toRevision: number | undefined): ControllerRevision | undefined {
  return toRevision === undefined ? previousRevision(neoset, revisions) : revisions.find((r) => r.revision === toRevision);
}

/** A JSON-pointer token: '/' and '~' escaped (RFC 6901). */
const pointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * The JSON patch that rolls the NeoSet back to `revision`: replaces spec.template whole (a merge patch
 * would keep keys the old template lacks) and sets the change-cause annotation to the revision's —
 * as `kubectl rollout undo` does for a Deployment — guarded by the resourceVersion it was read at.
 */
export function undoPatch(neoset: NeoSet, revision: ControllerRevision): object[] {
  const ops: object[] = [
    // Not a `test` op: the API server answers a failed one with a bare 422. A resourceVersion in the
    // patched object makes the update conditional on it instead: 409 Conflict when stale.
    { op: 'replace', path: '/metadata/resourceVersion', value: neoset.metadata.resourceVersion },
    { op: 'replace', path: '/spec/template', value: templateOf(revision) },
  ];
  const cause = changeCauseOf(revision);
  const annotations = neoset.metadata.annotations;
  const path = `/metadata/annotations/${pointer(CHANGE_CAUSE)}`;
  if (cause !== undefined && annotations === undefined) ops.push({ op: 'add', path: '/metadata/annotations', value: { [CHANGE_CAUSE]: cause } });
  else if (cause !== undefined) ops.push({ op: 'add', path, value: cause });
  else if (annotations?.[CHANGE_CAUSE] !== undefined) ops.push({ op: 'remove', path });
  return ops;
}
