// The shape of a NeoSet's selector (SPEC §3). What it selects is the core's rule (core/selector.ts),
// which admission uses to check that the selector selects the template's own labels.
import type { LabelSelector } from '../api/neoset.ts';
import { issue, type Issue } from './issue.ts';

/** Issues with the selector itself, under `path` (e.g. `spec.selector`). */
export function selectorShapeIssues(selector: LabelSelector, path: string): Issue[] {
  const matchLabels = Object.keys(selector.matchLabels ?? {});
  const expressions = selector.matchExpressions ?? [];
  if (matchLabels.length === 0 && expressions.length === 0) {
    return [issue(path, 'empty selector: it would select every pod in the namespace (set matchLabels or matchExpressions)')];
  }
  const issues: Issue[] = [];
  expressions.forEach((req, i) => {
    const values = req.values ?? [];
    const at = `${path}.matchExpressions[${i}].values`;
    if ((req.operator === 'In' || req.operator === 'NotIn') && values.length === 0) {
      issues.push(issue(at, `must be non-empty when operator is ${req.operator}`));
    }
    if ((req.operator === 'Exists' || req.operator === 'DoesNotExist') && values.length > 0) {
      issues.push(issue(at, `must be empty when operator is ${req.operator}`));
    }
  });
  return issues;
}
