// metav1.LabelSelector semantics (k8s.io/apimachinery LabelSelectorAsSelector): every matchLabels
// pair and every matchExpressions requirement must hold. What a NeoSet selects (its own template's
// labels — admission checks it; an orphan it may adopt — §4.1), and the selector printed as a string
// for the scale subresource (status.labelSelector), requirements sorted by key.
import type { LabelSelector } from '../api/neoset.ts';

export function labelSelectorString(selector: LabelSelector): string {
  const reqs: { key: string; text: string }[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) reqs.push({ key, text: `${key}=${value}` });
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const list = [...values].sort().join(',');
    const text =
      operator === 'In' ? `${key} in (${list})` : operator === 'NotIn' ? `${key} notin (${list})` : operator === 'Exists' ? key : `!${key}`;
    reqs.push({ key, text });
  }
  return reqs
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => r.text)
    .join(',');
}

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

/** The requirements (rendered) that `labels` fails; empty when the selector selects them. */
export function unmetRequirements(selector: LabelSelector, labels: Record<string, string>): string[] {
  const unmet: string[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value || !Object.hasOwn(labels, key)) unmet.push(`matchLabels ${key}=${value}`);
  }
  (selector.matchExpressions ?? []).forEach((req, i) => {
    if (!holds(req, labels)) unmet.push(`matchExpressions[${i}] ${req.key} ${req.operator}${req.values?.length ? ` ${brief(req.values)}` : ''}`);
  });
  return unmet;
}

export function selects(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  return unmetRequirements(selector, labels ?? {}).length === 0;
}

/** At most 40 characters of the values, for a message. */
function brief(values: string[]): string {
  const text = JSON.stringify(values);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}
