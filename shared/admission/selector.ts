// metav1.LabelSelector semantics: every matchLabels pair and every matchExpressions requirement must
// hold (k8s.io/apimachinery/pkg/apis/meta/v1 LabelSelectorAsSelector). A NeoSet's selector must
// select its own template's labels, or the pods it creates would not be its own (SPEC §3).
import type { LabelSelector } from '../api/neoset.ts';
import { brief } from './json.ts';
import { issue, type Issue } from './issue.ts';

type Requirement = NonNullable<LabelSelector['matchExpressions']>[number];

function holds(req: Requirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, req.key);
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return has && values.includes(labels[req.key]);
    case 'NotIn':
      return !has || !values.includes(labels[req.key]);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
  }
}

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

/** The requirements (rendered) that `labels` fails; empty when the selector selects them. */
export function unmetRequirements(selector: LabelSelector, labels: Record<string, string>): string[] {
  const unmet: string[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value || !Object.hasOwn(labels, key)) unmet.push(`matchLabels ${key}=${value}`);
  }
  (selector.matchExpressions ?? []).forEach((req, i) => {
    if (!holds(req, labels)) {
      unmet.push(`matchExpressions[${i}] ${req.key} ${req.operator}${req.values?.length ? ` ${brief(req.values, 40)}` : ''}`);
    }
  });
  return unmet;
}
