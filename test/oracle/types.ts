// The oracle's public vocabulary: what it is given (observed states) and what it answers (violations).
// Kept identical to the checker it replaces, so that a test switches by changing one import line.
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../../shared/core/objects.ts';

/** An observed state: plain JSON as read from the API server (or the in-memory world). */
export interface Observation {
  /** The NeoSet; schema defaults are applied here when missing. */
  neoset: unknown;
  pods: Pod[];
  /** Its ControllerRevisions; without them, revisions are taken from status. */
  revisions?: ControllerRevision[];
  /** Its PVCs; without them, claim checks are skipped. */
  pvcs?: PersistentVolumeClaim[];
  /** When the state was observed: makes minReadySeconds exact; without it, availability is judged leniently. */
  at?: Date | string | number;
}

export interface ObservedStates extends Observation {
  previous?: Observation;
}

export type Invariant =
  | 'Malformed'
  | 'Identity'
  | 'Ordinals'
  | 'RevisionInUse'
  | 'ClaimOwnership'
  | 'ClaimShrink'
  | 'MaxUnavailable'
  | 'Rescue'
  | 'Priority'
  | 'ScaleBudget'
  | 'Pause'
  | 'Partition'
  | 'Retarget'
  | 'NewPodRevision'
  | 'OrderedReady'
  | 'Drain'
  | 'InPlaceDone'
  | 'Terminating'
  | 'CurrentRevision'
  | 'CanaryStep'
  | 'Abort';

export interface Violation {
  invariant: Invariant;
  message: string;
  /** The pod (or claim, revision) concerned, when there is one. */
  object?: string;
}

/** Where each check writes what it finds. */
export type Report = (invariant: Invariant, message: string, object?: string) => void;
