// Admission of the automated canary (SPEC §4.11, §5): steps non-empty, each exactly one of partition
// and pause, partitions an integer >= 0 or 0%..100%, pause durations Go durations, the Prometheus
// analysis a URL and a successCondition the decision can read. Read with the core's own parsers
// (shared/core/canary/steps.ts), so that what admission lets through is what decide() understands.
// The address must be one the install allows (SPEC §2.3): the reconcile function queries it from
// inside neoset-system, so it is the operator's choice, not the NeoSet author's.
import type { NeoSet } from '../api/neoset.ts';
import { describeAllowed, isAllowedAddress, type AnalysisAddresses } from '../core/canary/addresses.ts';
import { parseSuccessCondition, partitionProblem } from '../core/canary/steps.ts';
import { parseDuration } from '../core/duration.ts';
import { issue, type Issue } from './issue.ts';

const PATH = 'spec.updateStrategy.canary';

/**
 * An UPDATE that keeps a stored address the install no longer allows is not refused for it (the
 * ratchet of validate.ts reviewIssues: the old object had the same issue), so a scale-down or a pause
 * still goes through; only a new or changed address must be allowed.
 */
export function canaryIssues(neoset: NeoSet, allowed: AnalysisAddresses): Issue[] {
  const canary = neoset.spec.updateStrategy.canary;
  if (!canary) return [];
  const issues: Issue[] = [];
  if (canary.steps.length === 0) issues.push(issue(`${PATH}.steps`, 'must have at least one step (remove canary for a rollout without steps)'));
  canary.steps.forEach((step, i) => {
    const at = `${PATH}.steps[${i}]`;
    if ((step.partition === undefined) === (step.pause === undefined)) {
      issues.push(issue(at, 'must have exactly one of partition and pause'));
      return;
    }
    if (step.partition !== undefined) {
      const problem = partitionProblem(step.partition);
      if (problem) issues.push(issue(`${at}.partition`, problem));
    }
    const duration = step.pause?.duration;
    if (duration !== undefined && parseDuration(duration) === undefined) {
      issues.push(issue(`${at}.pause.duration`, `${JSON.stringify(duration)} is not a duration such as 30s, 10m or 1h30m`));
    }
  });
  const prometheus = canary.analysis?.prometheus;
  if (prometheus) {
    if (!URL.canParse(prometheus.address) || !/^https?:$/.test(new URL(prometheus.address).protocol)) {
      issues.push(issue(`${PATH}.analysis.prometheus.address`, `${JSON.stringify(prometheus.address)} is not an http(s) URL such as http://prometheus.monitoring:9090`));
    } else if (!isAllowedAddress(allowed, prometheus.address)) {
      issues.push(issue(`${PATH}.analysis.prometheus.address`, `${JSON.stringify(prometheus.address)} is not a Prometheus address this install allows; ${describeAllowed(allowed)}`, true));
    }
    if (parseSuccessCondition(prometheus.successCondition) === null) {
      issues.push(issue(`${PATH}.analysis.prometheus.successCondition`, `${JSON.stringify(prometheus.successCondition)} must read "result <op> <number>", op one of < <= > >= == !=`));
    }
  }
  return issues;
}

/** With steps, partition is the steps' to drive: a partition the user also set is ignored. */
export function canaryWarnings(neoset: NeoSet): string[] {
  const { partition, canary } = neoset.spec.updateStrategy;
  if (!canary?.steps.length || partition === 0) return [];
  return [`spec.updateStrategy.partition (${partition}) is ignored: canary.steps drive the partition`];
}
