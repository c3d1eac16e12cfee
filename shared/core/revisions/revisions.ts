// Revisions (§4.2): every distinct spec.template is stored as a ControllerRevision `<neoset>-<hash>`
// with an increasing `.revision` number. updateRevision is the revision of the current template; a
// template equal to an older revision reuses it and is renumbered to the top (that is rollback).
// "Equal" and "distinct" are semantic (semantic.ts): a template that only spells out a default the
// API server would fill is the same template, its pods are on the same revision, nothing rolls.
import { ANNOTATION_CHANGE_CAUSE, LABEL_NEOSET_NAME, LABEL_REVISION_HASH } from '../../api/names.ts';
import type { NeoSet, PodTemplateSpec } from '../../api/neoset.ts';
import { templateHash } from './hash.ts';
import { canonicalJson } from '../json.ts';
import { canonicalTemplateJson } from './semantic.ts';
import type { ControllerRevision } from '../objects.ts';
import type { Action } from '../plan.ts';
import { neosetOwnerRef, objectRef } from '../pods/identity.ts';

export interface Revision {
  name: string;
  /** `.revision`, after any renumbering this decision makes. */
  number: number;
  template: PodTemplateSpec;
  /** The stored object; null for the revision this decision creates. */
  stored: ControllerRevision | null;
}

export interface Revisions {
  update: Revision;
  /**
   * status.currentRevision, or updateRevision when it is unset (a new NeoSet) or names no stored
   * revision (StatefulSet semantics: a pod cannot be created from a template we no longer have).
   */
  current: Revision;
  byName: Map<string, Revision>;
  collisionCount: number;
  /** createRevision or (rollback) recordEvent + renumberRevision: memory written before anything uses it. */
  actions: Action[];
  /**
   * The revision a pod labelled `revision` runs, compared semantically: update's or current's name
   * when the labelled revision's template equals theirs (e.g. two revisions a previous release made
   * of one template, one spelling a default out), else the label itself.
   */
  on(revision: string | undefined): string | undefined;
  /** The canonical form of each stored revision's template, by name (semantic.ts). */
  canonical: Map<string, string>;
}

export function revisionName(neoset: string, template: unknown, collisionCount: number): string {
  return `${neoset}-${templateHash(template, collisionCount)}`;
}

/** The first container's image: what status.currentImage/targetImage and the printer columns show. */
export function mainImage(revision: Revision): string {
  return revision.template.spec.containers[0]?.image ?? '';
}

export function resolveRevisions(neoset: NeoSet, stored: ControllerRevision[]): Revisions {
  const byName = new Map<string, Revision>();
  const json = new Map<string, string>();
  let top = 0;
  for (const r of stored) {
    const template = r.data.spec.template as PodTemplateSpec;
    byName.set(r.metadata.name, { name: r.metadata.name, number: r.revision, template, stored: r });
    json.set(r.metadata.name, canonicalTemplateJson(template));
    top = Math.max(top, r.revision);
  }
  const name = neoset.metadata.name;
  const template = neoset.spec.template;
  const wanted = canonicalTemplateJson(template);
  let collisionCount = neoset.status?.collisionCount ?? 0;
  const actions: Action[] = [];

  // §2.0: the status may name an update revision another decision claimed and has not created yet
  // (or our read of the revisions predates its creation): it takes top + 1, so ours goes above it.
  const claimed = neoset.status?.updateRevision;
  const reserves = (ours: string) => (claimed !== undefined && claimed !== ours && !byName.has(claimed) ? 1 : 0);

  // Of several revisions with the template (a previous release told apart templates that differed
  // only in a spelled-out default), the one the status names stays: no renumbering, no rollout.
  const equals = [...byName.values()].filter((r) => json.get(r.name) === wanted).sort((a, b) => b.number - a.number);
  const equal = equals.find((r) => r.name === claimed) ?? equals[0];
  let update: Revision;
  if (equal) {
    const alone = [...byName.values()].every((r) => equals.includes(r) || r.number < equal.number) && reserves(equal.name) === 0;
    update = equal;
    if (!alone) {
      update = { ...equal, number: top + 1 + reserves(equal.name) };
      byName.set(equal.name, update);
      actions.push(
        {
          kind: 'recordEvent',
          key: `rollback/${equal.name}/${update.number}`,
          event: {
            type: 'Normal',
            reason: 'RollbackDetected',
            message: `spec.template equals revision ${equal.number} (${equal.name}): rolling back to it`,
          },
        },
        {
          kind: 'renumberRevision',
          revision: objectRef(equal.stored!.metadata),
          number: update.number,
          event: { type: 'Normal', reason: 'RevisionRenumbered', message: `revision ${equal.name} renumbered ${equal.number} -> ${update.number}` },
        },
      );
    }
  } else {
    // A name taken by a different template is a hash collision: count it and hash again (§4.2).
    let revName = revisionName(name, template, collisionCount);
    while (byName.has(revName)) revName = revisionName(name, template, ++collisionCount);
    update = { name: revName, number: top + 1 + reserves(revName), template, stored: null };
    byName.set(revName, update);
    actions.push({
      kind: 'createRevision',
      revision: newRevision(neoset, revName, collisionCount, update.number),
      event: { type: 'Normal', reason: 'RevisionCreated', message: `created revision ${update.number} (${revName})` },
    });
  }
  const current = byName.get(neoset.status?.currentRevision ?? '') ?? update;
  json.set(update.name, wanted);
  const on = (revision: string | undefined) => {
    const form = revision === undefined ? undefined : json.get(revision);
    if (form === undefined || revision === update.name) return revision;
    return form === wanted ? update.name : form === json.get(current.name) ? current.name : revision;
  };
  return { update, current, byName, collisionCount, actions, on, canonical: json };
}

function newRevision(neoset: NeoSet, name: string, collisionCount: number, number: number): ControllerRevision {
  const changeCause = neoset.metadata.annotations?.[ANNOTATION_CHANGE_CAUSE];
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name,
      ...(neoset.metadata.namespace ? { namespace: neoset.metadata.namespace } : {}),
      labels: {
        ...neoset.spec.selector.matchLabels,
        [LABEL_NEOSET_NAME]: neoset.metadata.name,
        [LABEL_REVISION_HASH]: templateHash(neoset.spec.template, collisionCount),
      },
      ownerReferences: [neosetOwnerRef(neoset, true)],
      ...(changeCause ? { annotations: { [ANNOTATION_CHANGE_CAUSE]: changeCause } } : {}),
    },
    // Keys sorted at every depth: kube-apiserver compares `data` byte for byte on every update, and a
    // strategic merge patch (the garbage collector's, orphaning) re-serializes it with sorted keys —
    // any other order reads as a change of the immutable field.
    data: JSON.parse(canonicalJson({ spec: { template: neoset.spec.template } })),
    revision: number,
  };
}

/**
 * History beyond revisionHistoryLimit, oldest first: never a revision in `live` (a pod's label or
 * in-place target, currentRevision, updateRevision). The limit counts revisions not in use, as the
 * StatefulSet controller's truncateHistory does.
 */
export function pruneRevisions(revisions: Revisions, live: Set<string>, limit: number): Action[] {
  // A revision equal to a live one is live: pods labelled with it count as on the live one (`on`),
  // and without it their label would name nothing, so they would be rolled.
  const liveForms = new Set([...live].map((name) => revisions.canonical.get(name)).filter((f) => f !== undefined));
  const history = [...revisions.byName.values()]
    .filter((r) => r.stored !== null && !live.has(r.name) && !liveForms.has(revisions.canonical.get(r.name)!))
    .sort((a, b) => a.number - b.number);
  return history
    .slice(0, Math.max(0, history.length - limit))
    .map((r) => ({ kind: 'deleteRevision', revision: objectRef(r.stored!.metadata) }) as const);
}
