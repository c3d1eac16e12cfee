// The shape of a compatibility fixture (test/fixtures/compat/<release>/<state>.json), written by
// capture.ts and read by test/unit/compat.test.ts.
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../../shared/core/objects.ts';

/** The states issue 22 §2 names, each left by the previous release's functions. */
export const FIXTURE_STATES = [
  'completed',
  'mid-rollout-draining-and-updating',
  'canary-paused-at-step',
  'canary-timed-pause-running',
  'failed-deadline',
  'failed-analysis-abort',
  'hooks-waiting-for-owner',
  'resize-in-flight',
  'orderedready-scale-up-half-done',
] as const;
export type FixtureState = (typeof FIXTURE_STATES)[number];

export interface PreviousDecision {
  /** Decided at capturedAt + afterMs. */
  afterMs: number;
  actions: unknown[];
  status: unknown;
  requeueAfter: number | null;
}

export interface FixtureFile {
  state: FixtureState;
  /** The commit whose functions left this state. */
  commit: string;
  /** When the objects were read (the machine's clock, which is the local API server's). */
  capturedAt: string;
  /** The NeoSet as the API server returned it (no defaults applied beyond what it stored). */
  neoset: unknown;
  pods: Pod[];
  revisions: ControllerRevision[];
  pvcs: PersistentVolumeClaim[];
  /** The previous release's decide() of these objects, at the capture and later. */
  previousDecisions: PreviousDecision[];
}
