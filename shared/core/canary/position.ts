// Where a NeoSet's automated canary (SPEC §4.11) stands, read from status.canary: one reading for the
// decision (progress.ts), `kubectl neoset get|rollout status|rollout promote` and the dashboard, so
// that none of them counts steps or pause ends its own way.
import type { CanaryStep } from '../../api/neoset.ts';
import { toMs } from '../time.ts';
import { pauseMs } from './steps.ts';

export interface CanaryPosition {
  /** The step running, 0-based; the number of steps once every step is done. */
  index: number;
  /** How many steps spec.updateStrategy.canary has. */
  count: number;
  /** Every step is done. */
  done: boolean;
  /** status.canary is the update revision's and a step remains: the steps are running now. */
  running: boolean;
}

/** Null without steps, or before the reconcile function has reported a step (status.canary). */
export function canaryPosition(count: number, canary: { stepIndex: number; revision?: unknown } | undefined, updateRevision: string | undefined): CanaryPosition | null {
  if (count === 0 || canary === undefined) return null;
  const done = canary.stepIndex >= count;
  return { index: canary.stepIndex, count, done, running: canary.revision === updateRevision && !done };
}

/** When a timed pause step that started at `stepStartedAt` ends, in ms since the epoch. */
export function pauseEnd(step: CanaryStep, stepStartedAt: string): number {
  return toMs(stepStartedAt) + (pauseMs(step) ?? 0);
}
