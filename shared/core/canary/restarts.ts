// Container restarts an updated pod made on its own (SPEC §4.11 analysis.maxRestarts): restartCount
// past the base its image patch recorded. kubelet restarts a container whose image is patched in place
// (restartCount + 1): that restart is the update's, not the canary's, and is in the base.
import { ANNOTATION_RESTART_BASE } from '../../api/names.ts';
import type { Pod } from '../objects.ts';

/** The base to record with an image patch: each container's restartCount, plus one for each container the patch changes. */
export function restartBase(pod: Pod, changed: string[]): Record<string, number> {
  const base: Record<string, number> = {};
  for (const cs of pod.status?.containerStatuses ?? []) base[cs.name] = cs.restartCount + (changed.includes(cs.name) ? 1 : 0);
  return base;
}

/** Restarts since the pod's update (since its creation when no patch recorded a base). */
export function restartsSinceUpdate(pod: Pod): number {
  let base: Record<string, number> = {};
  const raw = pod.metadata.annotations?.[ANNOTATION_RESTART_BASE];
  if (raw) {
    try {
      base = JSON.parse(raw) as Record<string, number>;
    } catch {
      // Unreadable (hand-edited): counted from zero, which can only abort sooner.
    }
  }
  let n = 0;
  for (const cs of pod.status?.containerStatuses ?? []) n += Math.max(0, cs.restartCount - (Number(base[cs.name]) || 0));
  return n;
}
