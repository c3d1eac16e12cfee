// The simulated cluster's storage (SPEC §4.12 claims that grow): what a CSI driver with its sidecars
// does, through the same API calls, so that the API server's own rules run — PersistentVolumeClaim
// validation (a request may change on a bound claim only, never below what was allocated) and the
// PersistentVolumeClaimResize admission plugin (refused unless the claim's StorageClass allows
// expansion). No kube-controller-manager persistentvolume-binder: the test control plane does not run
// it, so this part binds too, as the binder would after external-provisioner's PV.
//
//   StorageClass `standard`: the default class, allowVolumeExpansion, provisioner fake.csi.neo.io
//     (claims of any other class of that provisioner are served too).
//   external-provisioner + binder: a claim of that class, unbound, gets a PV of its request with a
//     claimRef; the PV is Bound, the claim's spec.volumeName set (allowed once), its status Bound with
//     the capacity and accessModes.
//   external-resizer: a bound claim requesting more than its status.capacity gets
//     allocatedResources = the request, allocatedResourceStatuses ControllerResizeInProgress and the
//     condition Resizing; `resizeDelayMs` later the PV's capacity grows and the claim reports
//     FileSystemResizePending (NodeResizePending).
//   kubelet (online expansion): `resizeDelayMs` after that, status.capacity = the request, conditions
//     and statuses cleared.
//   reclaim (Delete): a PV of ours whose claim is gone is Released and deleted, also on stop.
//   A failing resize: the annotation volumes.sim.neo.io/resize-error on the claim or its class (its
//     value the message) stops it at the controller: ControllerResizeError with that message and
//     ControllerResizeInfeasible — as external-resizer reports a final error.
//
// Polled (a list every `pollMs`), not watched: a handful of claims, and nothing to miss. The only
// memory is when each stage was first seen, to wait out the delays; the stage itself is in the claim.
import type { KubeConfig } from '@kubernetes/client-node';
import { ApiError, createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { milli } from '../../shared/core/resize/resources.ts';
import { describeError } from './api-errors.ts';

export const STORAGE_CLASS = 'standard';
export const PROVISIONER = 'fake.csi.neo.io';
/** On a claim or its StorageClass: its resizes fail with this message (ControllerResizeError). */
export const ANNOTATION_RESIZE_ERROR = 'volumes.sim.neo.io/resize-error';

export interface VolumesOptions {
  kubeConfig: KubeConfig;
  /** Only the claims of this namespace; every namespace when omitted. */
  namespace?: string;
  /** Each resize stage (controller expansion, then the file system) takes this long. Default 300. */
  resizeDelayMs?: number;
  /** Time between two lists of the claims. Default 200. */
  pollMs?: number;
  log?: (msg: string) => void;
}

export interface Volumes {
  stop(): Promise<void>;
}

interface Claim {
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; annotations?: Record<string, string>; deletionTimestamp?: string };
  spec: { storageClassName?: string; volumeName?: string; accessModes?: string[]; volumeMode?: string; resources?: { requests?: { storage?: string } } };
  status?: {
    phase?: string;
    capacity?: { storage?: string };
    allocatedResources?: { storage?: string };
    allocatedResourceStatuses?: Record<string, string>;
    conditions?: { type: string; status: string; message?: string; lastTransitionTime?: string }[];
  };
}

const STORAGE_CLASSES = '/apis/storage.k8s.io/v1/storageclasses';
const PVS = '/api/v1/persistentvolumes';
/** PVs are looked at for reclaim this often (and on stop), not on every pass. */
const RECLAIM_EVERY_MS = 5000;

export async function startVolumes(opts: VolumesOptions): Promise<Volumes> {
  const client = createKubeClient(opts.kubeConfig);
  const log = (msg: string): void => opts.log?.(`[volumes] ${msg}`);
  const delay = opts.resizeDelayMs ?? 300;
  await ensureStorageClass(client, log);
  // When a claim was first seen at a stage (`<uid>/<request>/<stage>`): the delays run from then.
  const seen = new Map<string, number>();
  const since = (key: string): number => {
    const at = seen.get(key);
    if (at !== undefined) return Date.now() - at;
    seen.set(key, Date.now());
    return 0;
  };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const pass = async (): Promise<void> => {
    const list = await client.request<{ items: Claim[] }>('GET', opts.namespace ? paths.pvcs(opts.namespace) : '/api/v1/persistentvolumeclaims');
    const classes = await client.request<{ items: { metadata: { name: string; annotations?: Record<string, string> }; provisioner?: string }[] }>('GET', STORAGE_CLASSES);
    // Every class of this driver: `standard`, and any a test adds (one without allowVolumeExpansion, say).
    const ours = new Map(classes.items.filter((c) => c.provisioner === PROVISIONER).map((c) => [c.metadata.name, c.metadata.annotations?.[ANNOTATION_RESIZE_ERROR]]));
    const live = new Set<string>();
    for (const claim of list.items) {
      const className = claim.spec.storageClassName;
      if (className === undefined || !ours.has(className) || claim.metadata.deletionTimestamp) continue;
      live.add(claim.metadata.uid);
      try {
        await step(claim, ours.get(className));
      } catch (err) {
        // A conflict is a claim changed since the list: the next pass sees it as it is.
        if (!(err instanceof ApiError && err.isConflict)) log(`claim ${claim.metadata.namespace}/${claim.metadata.name}: ${describeError(err)}`);
      }
    }
    for (const key of seen.keys()) if (!live.has(key.split('/')[0])) seen.delete(key);
    if (stopped || Date.now() - reclaimedAt >= RECLAIM_EVERY_MS) {
      reclaimedAt = Date.now();
      await reclaim(new Set(list.items.map((c) => c.metadata.uid)));
    }
  };
  let reclaimedAt = 0;

  // reclaimPolicy Delete: a PV of ours whose claim is gone is Released (the binder's write: the
  // pv-protection finalizer holds a Bound PV), then deleted (external-provisioner's).
  const reclaim = async (claims: Set<string>): Promise<void> => {
    const pvs = await client.request<{ items: { metadata: { name: string; annotations?: Record<string, string> }; spec: { claimRef?: { namespace?: string; uid?: string } } }[] }>('GET', PVS);
    for (const pv of pvs.items) {
      const ref = pv.spec.claimRef;
      if (pv.metadata.annotations?.['pv.kubernetes.io/provisioned-by'] !== PROVISIONER || !ref?.uid || claims.has(ref.uid)) continue;
      if (opts.namespace && ref.namespace !== opts.namespace) continue;
      const gone = (err: unknown) => {
        if (!(err instanceof ApiError && err.isNotFound)) log(`reclaim ${pv.metadata.name}: ${describeError(err)}`);
      };
      await client.request('PATCH', `${PVS}/${pv.metadata.name}/status`, { patch: 'merge', body: { status: { phase: 'Released' } } }).catch(gone);
      await client.request('DELETE', `${PVS}/${pv.metadata.name}`).catch(gone);
    }
  };

  const step = async (claim: Claim, classError: string | undefined): Promise<void> => {
    const { name, namespace, uid } = claim.metadata;
    const request = claim.spec.resources?.requests?.storage;
    if (!request) return;
    if (claim.status?.phase !== 'Bound') return bind(client, claim, request, log);
    const capacity = claim.status.capacity?.storage;
    if (capacity === request || !grows(capacity, request)) return;
    const error = claim.metadata.annotations?.[ANNOTATION_RESIZE_ERROR] ?? classError;
    const stage = claim.status.allocatedResourceStatuses?.storage;
    const key = `${uid}/${request}`;
    if (error !== undefined) {
      if (stage === 'ControllerResizeInfeasible') return;
      log(`resize of ${namespace}/${name} to ${request} fails: ${error}`);
      return writeStatus(client, claim, { allocatedResourceStatuses: { storage: 'ControllerResizeInfeasible' } }, [{ type: 'ControllerResizeError', message: error }]);
    }
    if (claim.status.allocatedResources?.storage !== request || stage === undefined || stage === 'ControllerResizeInfeasible') {
      since(`${key}/controller`);
      return writeStatus(client, claim, { allocatedResources: { storage: request }, allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } }, [{ type: 'Resizing' }]);
    }
    if (stage === 'ControllerResizeInProgress') {
      if (since(`${key}/controller`) < delay) return;
      if (claim.spec.volumeName) {
        await client.request('PATCH', `${PVS}/${claim.spec.volumeName}`, { patch: 'merge', body: { spec: { capacity: { storage: request } } } });
      }
      since(`${key}/node`);
      return writeStatus(client, claim, { allocatedResourceStatuses: { storage: 'NodeResizePending' } }, [{ type: 'FileSystemResizePending', message: 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.' }]);
    }
    if (since(`${key}/node`) < delay) return;
    log(`claim ${namespace}/${name} resized to ${request}`);
    return writeStatus(client, claim, { capacity: { storage: request }, allocatedResources: { storage: request }, allocatedResourceStatuses: null }, []);
  };

  const loop = (): void => {
    if (stopped) return;
    running = pass()
      .catch((err) => log(`list: ${describeError(err)}`))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, opts.pollMs ?? 200);
      });
  };
  loop();
  log(`StorageClass ${STORAGE_CLASS} (${PROVISIONER}, allowVolumeExpansion) for ${opts.namespace ?? 'all namespaces'}`);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      // The PVs of claims deleted meanwhile (a test's namespace) do not outlive this part.
      await pass().catch((err) => log(`last pass: ${describeError(err)}`));
    },
  };
}

async function ensureStorageClass(client: KubeClient, log: (msg: string) => void): Promise<void> {
  try {
    await client.request('POST', STORAGE_CLASSES, {
      body: {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: STORAGE_CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
        provisioner: PROVISIONER,
        allowVolumeExpansion: true,
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'Immediate',
      },
    });
    log(`created StorageClass ${STORAGE_CLASS}`);
  } catch (err) {
    // Another kubelet of the same cluster made it: shared, like the real one.
    if (!(err instanceof ApiError && err.isConflict)) throw err;
  }
}

/** external-provisioner's PV for the claim, then the binder's three writes: PV Bound, claim's volumeName, claim Bound. */
async function bind(client: KubeClient, claim: Claim, request: string, log: (msg: string) => void): Promise<void> {
  const { name, namespace, uid } = claim.metadata;
  const pv = `pvc-${uid}`;
  const accessModes = claim.spec.accessModes?.length ? claim.spec.accessModes : ['ReadWriteOnce'];
  try {
    await client.request('POST', PVS, {
      body: {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: pv, annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER } },
        spec: {
          capacity: { storage: request },
          accessModes,
          ...(claim.spec.volumeMode ? { volumeMode: claim.spec.volumeMode } : {}),
          persistentVolumeReclaimPolicy: 'Delete',
          storageClassName: claim.spec.storageClassName,
          claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name, uid },
          csi: { driver: PROVISIONER, volumeHandle: pv },
        },
      },
    });
  } catch (err) {
    if (!(err instanceof ApiError && err.isConflict)) throw err;
  }
  await client.request('PATCH', `${PVS}/${pv}/status`, { patch: 'merge', body: { status: { phase: 'Bound' } } });
  let current = claim;
  if (!claim.spec.volumeName) {
    current = await client.request<Claim>('PATCH', paths.pvc(namespace, name), {
      patch: 'merge',
      body: {
        metadata: { resourceVersion: claim.metadata.resourceVersion, annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' } },
        spec: { volumeName: pv },
      },
    });
  }
  await client.request('PATCH', `${paths.pvc(namespace, name)}/status`, {
    patch: 'merge',
    body: { metadata: { resourceVersion: current.metadata.resourceVersion }, status: { phase: 'Bound', capacity: { storage: request }, accessModes } },
  });
  log(`bound ${namespace}/${name} to ${pv} (${request})`);
}

/** A merge patch of the claim's status, conditional on the version read, with `conditions` as the resize's conditions now. */
async function writeStatus(client: KubeClient, claim: Claim, status: Record<string, unknown>, conditions: { type: string; message?: string }[]): Promise<void> {
  const now = new Date().toISOString();
  const keep = new Map((claim.status?.conditions ?? []).map((c) => [c.type, c]));
  await client.request('PATCH', `${paths.pvc(claim.metadata.namespace, claim.metadata.name)}/status`, {
    patch: 'merge',
    body: {
      metadata: { resourceVersion: claim.metadata.resourceVersion },
      status: {
        ...status,
        conditions: conditions.map((c) => ({ type: c.type, status: 'True', lastProbeTime: null, lastTransitionTime: keep.get(c.type)?.lastTransitionTime ?? now, ...(c.message ? { message: c.message } : {}) })),
      },
    },
  });
}

/** `to` is more than `from` (quantities by value). */
function grows(from: string | undefined, to: string): boolean {
  return from === undefined || milli(to) > milli(from);
}
