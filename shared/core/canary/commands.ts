// `kubectl neoset rollout promote|abort|retry` on a NeoSet with canary steps (SPEC §4.11): each is a
// new status.canary, written by the plugin through the status subresource, conditional on the
// resourceVersion it read (two promotes at once take one step, not two). spec is never touched: the
// steps and the template stay as the user wrote them. `request` marks the write as news for the
// reconcile function (shared/core/event-relevance.ts); the next decision drops it.
import type { CanaryStatus, NeoSet } from '../../api/neoset.ts';
import { rfc3339 } from '../time.ts';

export type CanaryCommand = 'promote' | 'promote-full' | 'abort' | 'retry';

/** The status.canary the command writes, or why it cannot be done now (a sentence for the user). */
export function canaryCommand(neoset: NeoSet, command: CanaryCommand, nowMs: number): { canary: CanaryStatus } | { refused: string } {
  const steps = neoset.spec.updateStrategy.canary?.steps ?? [];
  const c = neoset.status?.canary;
  const now = rfc3339(nowMs);
  const { updateRevision, currentRevision } = neoset.status ?? {};
  if (steps.length === 0 || !c) return { refused: 'it has no canary steps (spec.updateStrategy.canary.steps)' };
  if (c.revision !== updateRevision) return { refused: 'the reconcile function has not started the steps of the new revision yet; try again in a moment' };
  const { request: _, ...rest } = c;
  switch (command) {
    case 'promote':
    case 'promote-full':
      if (c.abort) return { refused: `the rollout was aborted (${c.abort.reason}); kubectl neoset rollout retry starts it again` };
      if (c.stepIndex >= steps.length) return { refused: 'every canary step is done' };
      return { canary: { ...rest, stepIndex: command === 'promote' ? c.stepIndex + 1 : steps.length, stepStartedAt: now, request: `${command} at ${now}` } };
    case 'abort':
      if (c.abort) return { refused: `the rollout is already aborted (${c.abort.reason})` };
      if (updateRevision === currentRevision) return { refused: 'no rollout is in progress' };
      return { canary: { ...rest, abort: { reason: 'Aborted', message: `aborted by kubectl neoset rollout abort at step ${c.stepIndex + 1}/${steps.length}`, at: now }, request: `abort at ${now}` } };
    case 'retry':
      if (!c.abort) return { refused: 'the rollout is not aborted: nothing to retry' };
      return { canary: { revision: c.revision, stepIndex: 0, stepStartedAt: now, request: `retry at ${now}` } };
  }
}
