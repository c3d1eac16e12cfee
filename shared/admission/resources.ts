// Container CPU / memory limits against the configured caps (SPEC §5). Init containers count too:
// they run on the same node with the same limits, and a cap that a sidecar could dodge is no cap.
import type { NeoSet } from '../api/neoset.ts';
import { issue, type Issue } from './issue.ts';
import { isPlainObject } from '../core/json.ts';
import { LIMIT_VARIABLES, type AdmissionLimits } from './limits.ts';
import { compareQuantities, parseQuantity, type Quantity } from './quantity.ts';

const RESOURCES = [
  { name: 'cpu', cap: (l: AdmissionLimits) => l.maxCpu, variable: LIMIT_VARIABLES.maxCpu },
  { name: 'memory', cap: (l: AdmissionLimits) => l.maxMemory, variable: LIMIT_VARIABLES.maxMemory },
] as const;

interface ContainerAt {
  path: string;
  name: string;
  limits: Record<string, unknown>;
}

/** Containers and init containers of the template, with their field paths and limits. */
function containersOf(neoset: NeoSet): ContainerAt[] {
  const spec = neoset.spec.template.spec as Record<string, unknown>;
  const out: ContainerAt[] = [];
  for (const list of ['containers', 'initContainers']) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    containers.forEach((c: unknown, i) => {
      if (!isPlainObject(c)) return;
      const resources = isPlainObject(c.resources) ? c.resources : {};
      const limits = isPlainObject(resources.limits) ? resources.limits : {};
      out.push({ path: `spec.template.spec.${list}[${i}]`, name: String(c.name), limits });
    });
  }
  return out;
}

/** Limits over a cap (403: a policy limit), or not a quantity at all when a cap must compare them. */
export function capIssues(neoset: NeoSet, limits: AdmissionLimits): Issue[] {
  const issues: Issue[] = [];
  for (const container of containersOf(neoset)) {
    for (const resource of RESOURCES) {
      const cap = resource.cap(limits);
      const value = container.limits[resource.name];
      if (cap === null || value === undefined) continue;
      const path = `${container.path}.resources.limits.${resource.name}`;
      const quantity = typeof value === 'string' || typeof value === 'number' ? parseQuantity(value) : null;
      if (quantity === null) {
        issues.push(issue(path, `${JSON.stringify(value)} is not a Kubernetes quantity`));
      } else if (compareQuantities(quantity, cap) > 0) {
        issues.push(issue(path, `${quantity.text} is over the cap of ${cap.text} (${resource.variable}) for container "${container.name}"`, true));
      }
    }
  }
  return issues;
}

/** Containers without a limit on a capped resource: the cap cannot hold them (a LimitRange can). */
export function uncappedWarnings(neoset: NeoSet, limits: AdmissionLimits): string[] {
  const warnings: string[] = [];
  for (const container of containersOf(neoset)) {
    for (const resource of RESOURCES) {
      const cap: Quantity | null = resource.cap(limits);
      if (cap !== null && container.limits[resource.name] === undefined) {
        warnings.push(`${container.path}.resources.limits.${resource.name} is unset: the ${resource.variable}=${cap.text} cap does not bound container "${container.name}"`);
      }
    }
  }
  return warnings;
}
