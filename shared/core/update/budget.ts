// maxUnavailable (§3, §4.4): an integer, or a percentage of replicas rounded up; at least 1.
import type { NeoSetSpec } from '../../api/neoset.ts';

export function resolveMaxUnavailable(spec: NeoSetSpec): number {
  const value = spec.updateStrategy.maxUnavailable;
  let n: number;
  if (typeof value === 'number') n = value;
  else if (value.trim().endsWith('%')) n = Math.ceil((Number.parseFloat(value) * spec.replicas) / 100);
  else n = Number.parseInt(value, 10);
  return Number.isFinite(n) && n >= 1 ? Math.floor(n) : 1;
}
