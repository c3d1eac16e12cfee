// The canary's step language (SPEC §4.11), read without a cluster: what partition a step holds, how
// long a pause lasts, and whether a measured value meets `successCondition`. Admission validates
// with the same functions the decision uses, so what it accepts is exactly what decide() can read.
import type { CanaryStep } from '../../api/neoset.ts';
import { parseDuration } from '../duration.ts';
import { parsePercent } from '../percent.ts';

/** A step's partition against replicas: a percentage rounds UP (more pods held back: OpenKruise's rounding). */
export function stepPartition(value: number | string, replicas: number): number {
  if (typeof value === 'number') return value;
  const percent = parsePercent(value);
  return percent === null ? replicas : Math.ceil((percent * replicas) / 100);
}

/** Why a step's partition is unreadable, or null: an integer >= 0 or a percentage 0%..100%. */
export function partitionProblem(value: number | string): string | null {
  if (typeof value === 'number') return value < 0 ? `${value} must be >= 0` : null;
  const percent = parsePercent(value);
  if (percent === null) return `${JSON.stringify(value)} must be an integer >= 0 or a percentage such as "50%"`;
  return percent > 100 ? `${value} is over 100%` : null;
}

/** A timed pause's length in ms; null for a pause that waits for promote (or a step that is no pause). */
export function pauseMs(step: CanaryStep): number | null {
  const d = step.pause?.duration;
  return d === undefined ? null : (parseDuration(d) ?? 0);
}

/**
 * The partition the steps hold at stepIndex: the last partition step at or before it; every pod is
 * held back before the first one; 0 once all steps are done (the rollout finishes, as Argo's does).
 */
export function partitionAt(steps: CanaryStep[], stepIndex: number, replicas: number): number {
  if (stepIndex >= steps.length) return 0;
  for (let i = stepIndex; i >= 0; i--) {
    const p = steps[i].partition;
    if (p !== undefined) return Math.min(replicas, stepPartition(p, replicas));
  }
  return replicas;
}

export interface SuccessCondition {
  op: '<' | '<=' | '>' | '>=' | '==' | '!=';
  threshold: number;
}

const CONDITION = /^\s*result\s*(<=|>=|==|!=|<|>)\s*(-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$/;

/** `result <op> <number>`, or null when the text is not that. */
export function parseSuccessCondition(text: string): SuccessCondition | null {
  const m = CONDITION.exec(text);
  return m ? { op: m[1] as SuccessCondition['op'], threshold: Number(m[2]) } : null;
}

export function holds(c: SuccessCondition, value: number): boolean {
  switch (c.op) {
    case '<':
      return value < c.threshold;
    case '<=':
      return value <= c.threshold;
    case '>':
      return value > c.threshold;
    case '>=':
      return value >= c.threshold;
    case '==':
      return value === c.threshold;
    case '!=':
      return value !== c.threshold;
  }
}
