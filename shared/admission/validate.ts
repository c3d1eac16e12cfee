// /validate's rules (SPEC §5) over a NeoSet that already parsed with the zod schema (defaults
// applied). Each rule returns issues naming the field path and the limit; nothing throws.
import type { NeoSet } from '../api/neoset.ts';
import { canaryIssues } from './canary.ts';
import { claimTemplateIssues } from './claim-templates.ts';
import { dataFormatIssues } from './data-format.ts';
import { capIssues } from './resources.ts';
import { inPlaceChangeBlockers } from '../core/revisions/template-diff.ts';
import { issue, valueAt, type Issue } from './issue.ts';
import { sameJson } from '../core/json.ts';
import { brief } from './json.ts';
import { LIMIT_VARIABLES, type AdmissionLimits } from './limits.ts';
import { unmetRequirements } from '../core/selector.ts';
import { selectorShapeIssues } from './selector.ts';
import { joinPath } from '../core/field-path.ts';
import { parsePercent } from '../core/percent.ts';
import { priorityIssues } from './priority.ts';
import { ordinalIssues } from './ordinals.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/**
 * A revision is `<neoset>-<hash>` (hash up to 10 characters, as the StatefulSet controller's) and is
 * also the pods' controller-revision-hash label value, limited to 63 characters: 63 - 11 = 52.
 * (A longer StatefulSet name is accepted by Kubernetes and then fails on every pod: kubernetes#64023.)
 */
export const MAX_NAME_LENGTH = 52;

/** The name pods will be named after; on a CREATE with generateName, a stand-in of the final length. */
export function neosetName(neoset: NeoSet): string {
  const generateName = neoset.metadata.generateName;
  if (neoset.metadata.name === '' && typeof generateName === 'string') return `${generateName}xxxxx`;
  return neoset.metadata.name;
}

function nameIssues(neoset: NeoSet): Issue[] {
  const name = neosetName(neoset);
  if (!DNS_LABEL.test(name)) {
    return [issue('metadata.name', `${JSON.stringify(name)} must be a DNS label (lower-case letters, digits and '-'): it is the pods' hostname prefix`)];
  }
  if (name.length > MAX_NAME_LENGTH) {
    return [issue('metadata.name', `${name.length} characters is over the limit of ${MAX_NAME_LENGTH}: the revision label <name>-<hash> must fit in 63`)];
  }
  return [];
}

/** maxUnavailable (of updateStrategy, or of scaleStrategy: §4.12): an integer >= 1 or a percentage from 1% to 100% (SPEC §3, §5). */
function maxUnavailableIssues(value: number | string, path = 'spec.updateStrategy.maxUnavailable'): Issue[] {
  if (typeof value === 'number') {
    return value < 1 ? [issue(path, `${value} must be at least 1 (or a percentage from 1% to 100%)`)] : [];
  }
  const p = parsePercent(value);
  if (p === null) return [issue(path, `${JSON.stringify(value)} must be an integer >= 1 or a percentage such as "25%" (1% to 100%)`)];
  if (p < 1) return [issue(path, `${value} must be at least 1%`)];
  if (p > 100) return [issue(path, `${value} is over 100%`)];
  return [];
}

/** §4.12 scale budget: Kruise's validateMaxUnavailableField — a valid budget, and only under Parallel (OrderedReady creates one at a time). */
function scaleStrategyIssues(neoset: NeoSet): Issue[] {
  const value = neoset.spec.scaleStrategy?.maxUnavailable;
  if (value === undefined) return [];
  const path = 'spec.scaleStrategy.maxUnavailable';
  const shape = maxUnavailableIssues(value, path);
  if (shape.length > 0 || neoset.spec.podManagementPolicy === 'Parallel' || value === 1) return shape;
  return [issue(path, `${JSON.stringify(value)} needs spec.podManagementPolicy Parallel (OrderedReady creates one pod at a time)`)];
}

function readinessIssues(neoset: NeoSet): Issue[] {
  if (neoset.spec.updateStrategy.inPlaceUpdateStrategy.readiness !== 'Probe') return [];
  return neoset.spec.template.spec.containers.flatMap((c, i) =>
    c.readinessProbe === undefined
      ? [issue(`spec.template.spec.containers[${i}].readinessProbe`, `container "${c.name}" needs one: spec.updateStrategy.inPlaceUpdateStrategy.readiness is Probe (or set it to Ready)`)]
      : [],
  );
}

function selectorIssues(neoset: NeoSet): Issue[] {
  const shape = selectorShapeIssues(neoset.spec.selector, 'spec.selector');
  if (shape.length > 0) return shape;
  const unmet = unmetRequirements(neoset.spec.selector, neoset.spec.template.metadata?.labels ?? {});
  if (unmet.length === 0) return [];
  return [issue('spec.selector', `does not select the template's labels (spec.template.metadata.labels): unmet ${unmet.join(', ')}`)];
}

/**
 * The replicas quota, on CREATE and on any write that raises replicas (the NeoSet or its scale
 * subresource). Lowering is never refused for it: an over-quota NeoSet (stored before the quota was
 * lowered) must be able to come down step by step, 500 -> 400 -> 100 under a quota of 100.
 */
export function quotaIssues(replicas: number, oldReplicas: number | null, limits: AdmissionLimits): Issue[] {
  if (replicas <= limits.maxReplicas || (oldReplicas !== null && replicas <= oldReplicas)) return [];
  return [issue('spec.replicas', `${replicas} is over the quota of ${limits.maxReplicas} (${LIMIT_VARIABLES.maxReplicas})`, true)];
}

/** The rules over one NeoSet, as it would be stored (the replicas quota aside: quotaIssues). */
export function neosetIssues(neoset: NeoSet, limits: AdmissionLimits): Issue[] {
  const { spec } = neoset;
  return [
    ...nameIssues(neoset),
    ...selectorIssues(neoset),
    ...maxUnavailableIssues(spec.updateStrategy.maxUnavailable),
    ...readinessIssues(neoset),
    ...canaryIssues(neoset, limits.analysisAddresses),
    ...capIssues(neoset, limits),
    // §4.12 peers' features: update priority, the scale budget, start and reserved ordinals.
    ...priorityIssues(neoset),
    ...scaleStrategyIssues(neoset),
    ...ordinalIssues(neoset),
    // §4.7: the data-format annotations' shape (the downgrade rule needs the pods: functions/admission/data-format.ts).
    ...dataFormatIssues(neoset),
  ];
}

// volumeClaimTemplates: immutable but for a raise of storage (§4.12, claim-templates.ts).
const IMMUTABLE = ['selector', 'serviceName', 'podManagementPolicy'] as const;

/** What an UPDATE may not do: change an immutable field, or (InPlaceOnly) a template change that is not in place. */
export function updateIssues(old: NeoSet, neoset: NeoSet): Issue[] {
  const issues: Issue[] = [];
  for (const field of IMMUTABLE) {
    const before = old.spec[field];
    const after = neoset.spec[field];
    if (!sameJson(before ?? null, after ?? null)) {
      issues.push(issue(`spec.${field}`, `field is immutable (was ${brief(before ?? null, 60)}, now ${brief(after ?? null, 60)})`));
    }
  }
  issues.push(...claimTemplateIssues(old, neoset));
  if (neoset.spec.updateStrategy.type === 'InPlaceOnly') {
    for (const blocker of inPlaceChangeBlockers(old.spec.template, neoset.spec.template)) {
      // A blocker may carry why after its path: `spec.containers[0].resources (QoS class Burstable -> Guaranteed)`.
      const [path, why] = blocker.split(/ \((.*)\)$/);
      issues.push(
        issue(
          joinPath('spec.template', path),
          `${why ? `${why}: ` : ''}cannot change in place and spec.updateStrategy.type is InPlaceOnly (only container images, containers' cpu/memory within the same QoS class, and template labels/annotations can)`,
        ),
      );
    }
  }
  return issues;
}

/**
 * All issues of a CREATE or UPDATE. An UPDATE is refused only for what it makes worse, as Kubernetes'
 * own validation ratcheting does: an issue at a field the UPDATE leaves unchanged, which the old
 * object had too (say, a cap lowered after it was created), does not block edits of other fields —
 * or the removal of a finalizer. Whether the field changed is read from the objects, never from the
 * messages: those name values, and a message that quotes a number differs whenever the number does.
 */
export function reviewIssues(neoset: NeoSet, old: NeoSet | null, limits: AdmissionLimits): Issue[] {
  const quota = quotaIssues(neoset.spec.replicas, old?.spec.replicas ?? null, limits);
  const current = neosetIssues(neoset, limits);
  if (old === null) return [...quota, ...current];
  const before = new Set(neosetIssues(old, limits).map((i) => i.path));
  const unchanged = (i: Issue) => before.has(i.path) && sameJson(valueAt(old, i.path) ?? null, valueAt(neoset, i.path) ?? null);
  return [...quota, ...current.filter((i) => !unchanged(i)), ...updateIssues(old, neoset)];
}
