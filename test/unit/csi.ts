// A CSI driver for the in-memory world (§4.12 claims that grow): binds each claim at its request and
// resizes it — status.capacity catches up with spec.resources.requests — when a test says so, or
// fails the resize as external-resizer reports a failure (ControllerResizeError, *Infeasible).
import type { PersistentVolumeClaim } from '../../shared/core/objects.ts';
import type { World } from './world.ts';

type ClaimStatus = {
  phase?: string;
  capacity?: Record<string, string>;
  conditions?: { type: string; status: string; message?: string }[];
  allocatedResourceStatuses?: Record<string, string>;
};

const requestOf = (pvc: PersistentVolumeClaim) => (pvc.spec as { resources?: { requests?: { storage?: string } } }).resources?.requests?.storage;

/** Bind every unbound claim: phase Bound, capacity = its request (external-provisioner). */
export function bindClaims(w: World): void {
  for (const pvc of w.pvcs.values()) {
    const status = (pvc.status ?? {}) as ClaimStatus;
    if (status.phase === 'Bound') continue;
    pvc.status = { phase: 'Bound', capacity: { storage: requestOf(pvc) ?? '0' } };
  }
}

/** The claims that request more than they have: resizing. */
export function resizingClaims(w: World): string[] {
  return [...w.pvcs.values()].filter((p) => (p.status as ClaimStatus | undefined)?.phase === 'Bound' && (p.status as ClaimStatus).capacity?.storage !== requestOf(p)).map((p) => p.metadata.name);
}

/**
 * One claim's resize as the machinery goes: 'condition' sets a condition for a moment (Resizing,
 * FileSystemResizePending), 'done' reports the request as capacity, 'error' and 'infeasible' fail it.
 */
export function resizeClaim(w: World, name: string, how: 'done' | 'Resizing' | 'FileSystemResizePending' | 'error' | 'infeasible'): void {
  const pvc = w.pvcs.get(name);
  if (!pvc) throw new Error(`no claim ${name}`);
  const status = structuredClone((pvc.status ?? {}) as ClaimStatus);
  const request = requestOf(pvc) ?? '0';
  if (how === 'done') {
    pvc.status = { phase: 'Bound', capacity: { storage: request }, allocatedResources: { storage: request } };
    return;
  }
  if (how === 'infeasible') status.allocatedResourceStatuses = { storage: 'ControllerResizeInfeasible' };
  else {
    const type = how === 'error' ? 'ControllerResizeError' : how;
    const message = how === 'error' ? 'resize volume "pv-1" by resizer "fake.csi.neo.io" failed: out of space' : '';
    status.conditions = [{ type, status: 'True', ...(message ? { message } : {}) }];
  }
  pvc.status = status;
}
