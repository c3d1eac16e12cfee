// The objects the dashboard shows, as the API server sends them (wire JSON), typed only as deep as
// it reads them and every field optional: it only displays them, and status fields may gain entries
// (SPEC §4.11 adds status.canary) that an older or newer controller writes or not.
import type { NeoSet } from '../../../shared/api/neoset.ts';

/** The API's ObjectMeta (shared/api), plus the owner references the dashboard matches pods by. */
export type Meta = NeoSet['metadata'] & { ownerReferences?: { kind: string; uid: string; controller?: boolean }[] };

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface NeoSetObject {
  metadata: Meta;
  spec?: {
    replicas?: number;
    /** §4.12: which ordinals replicas maps to. */
    ordinals?: { start?: number };
    reserveOrdinals?: (number | string)[];
    /** Whose orphans it adopts (SPEC §4.1). */
    selector?: NeoSet['spec']['selector'];
    template?: unknown;
    updateStrategy?: {
      type?: string;
      partition?: number;
      maxUnavailable?: number | string;
      pause?: boolean;
      canary?: { steps?: unknown[] };
    };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
    currentImage?: string;
    targetImage?: string;
    phase?: string;
    currentUpdatePods?: string[];
    conditions?: Condition[];
    /** SPEC §4.11: the step index and when it started. */
    canary?: { stepIndex?: number; stepStartedAt?: string; [key: string]: unknown };
  };
}

export interface PodObject {
  metadata: Meta;
  spec?: { containers?: { name: string; image?: string }[] };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: Condition[];
    containerStatuses?: { name: string; ready?: boolean; restartCount?: number; state?: { waiting?: { reason?: string } } }[];
  };
}

export interface RevisionObject {
  metadata: Meta;
  revision: number;
  /** The stored pod template (SPEC §4.2). */
  data?: { spec?: { template?: unknown } };
}

export interface EventObject {
  metadata: Meta;
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  firstTimestamp?: string;
}
