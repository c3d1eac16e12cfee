// The peers' rules of SPEC §4.12 as `rollout status` prints them: the update order a priorityStrategy
// sets (which pods go first is what a user watching a database rollout wants to know), and the
// scale budget.
import type { NeoSetSpec, PriorityStrategy } from '../../shared/api/neoset.ts';
import { labelSelectorString } from '../../shared/core/selector.ts';

/** `priority: +100 role notin (primary)` / `priority: by rank, then role`; empty without a strategy. */
export function priorityText(strategy: PriorityStrategy | undefined): string {
  const weights = strategy?.weightPriority ?? [];
  if (weights.length > 0) return `priority: ${weights.map((t) => `+${t.weight} ${labelSelectorString(t.matchSelector)}`).join(', ')}`;
  const order = strategy?.orderPriority ?? [];
  return order.length > 0 ? `priority: by ${order.map((t) => t.orderedKey).join(', then ')}` : '';
}

/** `scale budget 3 not Ready at once` under Parallel with scaleStrategy.maxUnavailable; empty otherwise. */
export function scaleBudgetText(spec: NeoSetSpec): string {
  const value = spec.scaleStrategy?.maxUnavailable;
  return value !== undefined && spec.podManagementPolicy === 'Parallel' ? `scale budget ${value} not Ready at once` : '';
}
