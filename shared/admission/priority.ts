// spec.updateStrategy.priorityStrategy (§4.12) as OpenKruise's UpdatePriorityStrategy.FieldsValidation
// refuses it: both kinds of terms at once, an empty or malformed selector. The zod schema has already
// bounded the weights (1..100) and the number of terms.
import type { NeoSet } from '../api/neoset.ts';
import { issue, type Issue } from './issue.ts';
import { selectorShapeIssues } from './selector.ts';

const PATH = 'spec.updateStrategy.priorityStrategy';

export function priorityIssues(neoset: NeoSet): Issue[] {
  const strategy = neoset.spec.updateStrategy.priorityStrategy;
  if (!strategy) return [];
  const weights = strategy.weightPriority ?? [];
  const order = strategy.orderPriority ?? [];
  const issues: Issue[] = [];
  if (weights.length > 0 && order.length > 0) {
    issues.push(issue(PATH, 'only one of weightPriority and orderPriority can be set'));
  }
  weights.forEach((term, i) => issues.push(...selectorShapeIssues(term.matchSelector, `${PATH}.weightPriority[${i}].matchSelector`)));
  const seen = new Map<string, number>();
  order.forEach((term, i) => {
    const first = seen.get(term.orderedKey);
    if (first !== undefined) issues.push(issue(`${PATH}.orderPriority[${i}].orderedKey`, `${JSON.stringify(term.orderedKey)} is already orderPriority[${first}]'s key`));
    else seen.set(term.orderedKey, i);
  });
  return issues;
}
