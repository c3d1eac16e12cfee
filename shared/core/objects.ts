// Kubernetes objects as the core sees them: plain wire-format JSON (timestamps are RFC 3339 strings),
// typed only as deep as NeoSet reads them. The edges convert client-node's models to this shape.
import type { ResourceRequirements } from './resize/resources.ts';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
  /** The pod generation the condition was computed for (PodResizePending / PodResizeInProgress set it). */
  observedGeneration?: number;
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: { exitCode: number; reason?: string };
}

export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  state?: ContainerState;
  /** What the container runs with, as the kubelet reports it (§4.9: a resize is done when it shows the target). */
  resources?: ResourceRequirements;
}

export interface Container {
  name: string;
  image: string;
  [key: string]: unknown;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    containers: Container[];
    readinessGates?: { conditionType: string }[];
    hostname?: string;
    subdomain?: string;
    nodeName?: string;
    volumes?: Record<string, unknown>[];
    [key: string]: unknown;
  };
  status?: {
    phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
    podIP?: string;
    conditions?: PodCondition[];
    containerStatuses?: ContainerStatus[];
    [key: string]: unknown;
  };
}

export interface ControllerRevision {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  /** The stored object: for NeoSet, `{spec: {template}}` (as the StatefulSet controller stores a patch). */
  data: { spec: { template: unknown } } & Record<string, unknown>;
  revision: number;
}

export interface PersistentVolumeClaim {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}
