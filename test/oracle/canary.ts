// SPEC §4.11 (automated canary), re-derived from its words — no code shared with shared/core/canary.
//
//   The partition a state's decision works with is the steps': the last `partition` step at or before
//   status.canary.stepIndex (its percentage of replicas rounded up), every pod held back before the
//   first, 0 once the steps are done. view.ts puts it in View.partition, so Partition (starts,
//   claims, landings) checks the steps' partition. An aborted canary's partition is 0: every pod goes
//   back to currentRevision, whatever its ordinal (Abort below checks the direction).
//   CanaryStep   status.canary.stepIndex moves forward, for the same revision, only past steps that
//                were complete in one of the two states: a partition step with every pod >= its
//                partition on the update revision, Ready, with no update in flight (view.ts inUpdate); a timed pause
//                whose duration (from stepStartedAt) had run out by the later observation; never a
//                pause without duration — those only by a promote (status.canary.request).
//   Abort        while both states' canary is aborted, the update revision it rolls back from is no
//                target: no pod newly starts toward it — work claimed before (update-claims.ts) aside.
import type { NeoSet } from '../../shared/api/neoset.ts';
import type { Report } from './types.ts';
import { rangeOf } from './ordinals.ts';
import { claimed } from './update-claims.ts';
import type { View } from './view.ts';
import { seconds } from './wire.ts';

type Step = NonNullable<NeoSet['spec']['updateStrategy']['canary']>['steps'][number];

const GO_UNIT: Record<string, number> = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/** A Go duration in seconds (time.ParseDuration's units); null when unreadable. */
export function goSeconds(text: string): number | null {
  if (text === '0') return 0;
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return null;
  return parts.reduce((sum, p) => sum + Number(p[1]) * GO_UNIT[p[2]], 0);
}

function stepPartition(step: Step, replicas: number): number | null {
  const p = step.partition;
  if (p === undefined) return null;
  if (typeof p === 'number') return Math.min(p, replicas);
  return Math.min(replicas, Math.ceil((Number.parseInt(p, 10) * replicas) / 100));
}

/** The steps' partition at an index (see the header). */
export function partitionAtStep(steps: Step[], index: number, replicas: number): number {
  if (index >= steps.length) return 0;
  for (let i = index; i >= 0; i--) {
    const p = stepPartition(steps[i], replicas);
    if (p !== null) return p;
  }
  return replicas;
}

export interface CanaryFacts {
  steps: Step[];
  /** The revision status.canary speaks of; null when it speaks of no stored update revision (defaults taken). */
  revision: string | null;
  /** status.canary for the state's update revision; null when it names another (a new template: step 0). */
  index: number;
  startedAt: number | null;
  aborted: boolean;
  request: boolean;
}

/** The canary as a state shows it; null without steps. */
export function canaryFacts(neoset: NeoSet, update: string | undefined, rolling: boolean): CanaryFacts | null {
  const steps = neoset.spec.updateStrategy.canary?.steps ?? [];
  if (steps.length === 0) return null;
  const c = neoset.status?.canary;
  // A template whose revision is not stored yet (its createRevision still to land) has no name here:
  // the status names it, as revisions.ts reads it from status without stored revisions.
  const named = update ?? neoset.status?.updateRevision;
  if (!c || c.revision !== named) return { steps, revision: null, index: rolling ? 0 : steps.length, startedAt: null, aborted: false, request: false };
  return { steps, revision: c.revision, index: c.stepIndex, startedAt: seconds(c.stepStartedAt), aborted: c.abort !== undefined, request: c.request !== undefined };
}

export function canaryInvariants(prev: View, now: View, report: Report): void {
  const a = prev.canary;
  const b = now.canary;
  if (!a || !b) return;
  const same = a.revision !== null && a.revision === b.revision;
  if (same && b.index > a.index && !b.request && !a.aborted && !b.aborted) {
    for (let i = a.index; i < b.index; i++) {
      const why = incomplete(prev, now, a, i);
      if (why) {
        report('CanaryStep', `step ${i + 1}/${a.steps.length} passed while ${why}`);
        break;
      }
    }
  }
  const update = now.revisions.update;
  if (a.aborted && b.aborted && update) {
    // Work claimed before the abort was written may still land (§2.0, as under a pause: update-claims.ts);
    // the next decision sends it back.
    const inFlight = claimed(prev);
    for (const p of now.pods) {
      const before = prev.byUid.get(p.uid);
      if (inFlight.has(p.name)) continue;
      if (p.state && p.state.revision === update && before?.state?.revision !== update) report('Abort', `update started toward ${update}, whose canary is aborted`, p.name);
    }
  }
}

function incomplete(prev: View, now: View, c: CanaryFacts, i: number): string | null {
  const step = c.steps[i];
  if (step.pause) {
    if (step.pause.duration === undefined) return 'it is a pause without duration (promote only)';
    // Steps after the first one passed here started when it ended: only the first start is known.
    const started = i === c.index ? c.startedAt : null;
    const d = goSeconds(step.pause.duration);
    const at = now.at === null ? null : Math.floor(now.at / 1000);
    if (started !== null && d !== null && at !== null && at < started + d) return `its ${step.pause.duration} pause ran until ${new Date((started + d) * 1000).toISOString()}`;
    return null;
  }
  const partition = partitionAtStep(c.steps, i, prev.replicas);
  const done = (v: View) => {
    for (const o of rangeOf(v).ordinals.slice(partition)) {
      const p = v.byOrdinal.get(o);
      if (!p || p.terminating || p.revision !== v.revisions.update || p.inUpdate || !p.ready) return false;
    }
    return true;
  };
  return done(prev) || done(now) ? null : `pods >= partition ${partition} were not all updated and Ready`;
}
