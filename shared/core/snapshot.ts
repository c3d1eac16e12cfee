import type { NeoSet } from '../api/neoset.ts';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from './objects.ts';

/** Everything decide() reads: one NeoSet (spec defaults applied) and the objects it owns, as read at one moment. */
export interface Snapshot {
  neoset: NeoSet;
  /** Pods labelled neoset.neo.io/name=<neoset> in its namespace. */
  pods: Pod[];
  /** ControllerRevisions owned by the NeoSet. */
  revisions: ControllerRevision[];
  /** PVCs created from its volumeClaimTemplates. */
  pvcs: PersistentVolumeClaim[];
}
