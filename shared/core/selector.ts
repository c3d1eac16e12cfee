// spec.selector printed as a label-selector string for the scale subresource (status.labelSelector),
// the way metav1.LabelSelectorAsSelector(...).String() prints it: requirements sorted by key.
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
