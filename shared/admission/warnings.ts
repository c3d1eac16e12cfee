// Doubtful but legal settings, answered as AdmissionReview warnings (kubectl prints each as
// `Warning: ...`). Kubernetes asks for short warnings (under 120 characters) without newlines.
import type { NeoSet } from '../api/neoset.ts';
import { inPlaceChangeBlockers } from '../core/revisions/template-diff.ts';
import { sameJson } from '../core/json.ts';
import type { AdmissionLimits } from './limits.ts';
import { canaryWarnings } from './canary.ts';
import { uncappedWarnings } from './resources.ts';
import { joinPath } from '../core/field-path.ts';
import { resolveMaxUnavailable } from '../core/update/budget.ts';

/** An image whose tag can move: pushing it again is no template change, so nothing rolls out. */
function floatingTag(image: string): boolean {
  if (image.includes('@')) return false;
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  return colon === -1 || lastSegment.slice(colon + 1) === 'latest';
}

export function neosetWarnings(neoset: NeoSet, old: NeoSet | null, limits: AdmissionLimits): string[] {
  const { spec } = neoset;
  const strategy = spec.updateStrategy;
  const warnings: string[] = [];
  if (strategy.partition > spec.replicas) {
    warnings.push(`spec.updateStrategy.partition (${strategy.partition}) > spec.replicas (${spec.replicas}): no pod will be updated`);
  }
  // With one replica maxUnavailable cannot be lower, so the default would warn on every small NeoSet.
  // The budget as the decision resolves it (§4.4).
  const maxUnavailable = resolveMaxUnavailable(spec);
  if (spec.replicas > 1 && maxUnavailable >= spec.replicas) {
    warnings.push(`spec.updateStrategy.maxUnavailable (${strategy.maxUnavailable}) >= spec.replicas (${spec.replicas}): an update may take every pod down at once`);
  }
  const timeout = strategy.inPlaceUpdateStrategy.timeoutSeconds;
  if (spec.minReadySeconds >= timeout && (strategy.type === 'InPlaceIfPossible' || strategy.type === 'InPlaceOnly')) {
    warnings.push(`spec.minReadySeconds (${spec.minReadySeconds}) >= inPlaceUpdateStrategy.timeoutSeconds (${timeout}): pods become available only after the timeout`);
  }
  if (spec.revisionHistoryLimit === 0) {
    warnings.push('spec.revisionHistoryLimit is 0: no earlier revision is kept, so there is nothing to roll back to');
  }
  if (spec.serviceName === undefined || spec.serviceName === '') {
    warnings.push('spec.serviceName is unset: pods get no stable DNS name (<pod>.<serviceName>)');
  }
  spec.template.spec.containers.forEach((c, i) => {
    if (floatingTag(c.image)) {
      warnings.push(`spec.template.spec.containers[${i}].image "${c.image}" has no fixed tag: pushing it again rolls nothing out`);
    }
  });
  if (old !== null && strategy.type === 'InPlaceIfPossible' && !sameJson(old.spec.template, spec.template)) {
    const blockers = inPlaceChangeBlockers(old.spec.template, spec.template);
    if (blockers.length > 0) {
      const shown = blockers.slice(0, 3).map((b) => joinPath('spec.template', b)).join(', ');
      warnings.push(`pods will be recreated, not updated in place: ${shown}${blockers.length > 3 ? ', …' : ''} changed`);
    }
  }
  warnings.push(...canaryWarnings(neoset));
  warnings.push(...uncappedWarnings(neoset, limits));
  return warnings;
}
