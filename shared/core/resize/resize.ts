// One pod's resize (§4.9): what the pods/resize write sets, whether it has landed, and whether the
// kubelet has carried it out (containerStatuses[].resources, no PodResizePending/PodResizeInProgress).
import type { Container, Pod } from '../objects.ts';
import { resourcesMatch, resourcesOf, type ResizeTarget } from './resources.ts';

function needsResize(running: Container | undefined, target: ResizeTarget): boolean {
  return !resourcesMatch(resourcesOf(running), target.resources);
}

/** The containers of `pod` whose cpu/memory differ from `containers` (the new template's): the resize to make; null for none. */
export function resizeTargets(pod: Pod, containers: Container[]): Record<string, ResizeTarget> | null {
  const out: Record<string, ResizeTarget> = {};
  for (const c of containers) {
    const target: ResizeTarget = { resources: resourcesOf(c) };
    if (needsResize(pod.spec.containers.find((p) => p.name === c.name), target)) out[c.name] = target;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** The part of `targets` the pod's spec does not hold yet (the pods/resize write has not landed); null when it has. */
export function unresized(pod: Pod, targets: Record<string, ResizeTarget> | undefined): Record<string, ResizeTarget> | null {
  const out = Object.fromEntries(Object.entries(targets ?? {}).filter(([name, t]) => needsResize(pod.spec.containers.find((p) => p.name === name), t)));
  return Object.keys(out).length > 0 ? out : null;
}

/**
 * The kubelet has carried out every resize of the pod: the spec holds the targets, no
 * PodResizePending / PodResizeInProgress remains, and every container reports (in
 * containerStatuses[].resources) the cpu/memory its spec says — not only the targets of this update:
 * a resize of an earlier, re-targeted update still in progress (a RestartContainer still to come)
 * must not be taken for done.
 */
export function resizeDone(pod: Pod, targets: Record<string, ResizeTarget> | undefined): boolean {
  if (unresized(pod, targets)) return false;
  if (pod.status?.conditions?.some((c) => (c.type === 'PodResizePending' || c.type === 'PodResizeInProgress') && c.status === 'True')) return false;
  return pod.spec.containers.every((c) => {
    const reported = pod.status?.containerStatuses?.find((cs) => cs.name === c.name)?.resources;
    return reported === undefined || resourcesMatch(reported, resourcesOf(c));
  });
}
