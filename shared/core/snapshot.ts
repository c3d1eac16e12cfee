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
  /**
   * The resourceVersions of the lists read (each list's metadata.resourceVersion), by resource; the
   * applier records them with every status it writes (status.observedResourceVersions). Absent when
   * the snapshot was not read from an API server.
   */
  listed?: ListedVersions;
  /**
   * The canary's Prometheus query, measured by the reconcile function when the decision asked for it
   * (Plan.analysis, SPEC §4.11): the one thing in a snapshot that is not an object. Absent otherwise.
   */
  analysis?: AnalysisMeasurement;
}

export type ListedVersions = Partial<Record<'pods' | 'controllerrevisions' | 'persistentvolumeclaims', string>>;

/** A query's value, or why there is none (unreachable, an error, not one number): inconclusive. */
export type AnalysisMeasurement = { value: number } | { error: string };
