// NeoSet .status (§4.6): counts, revisions, images, phase, pods being updated, conditions.
import type { NeoSetStatus } from '../../api/neoset.ts';
import { isAvailable } from '../pods/availability.ts';
import { neosetConditions } from './conditions.ts';
import type { Observed, UpdateClaim } from '../observed.ts';
import type { FailureReason } from './phase.ts';
import { phaseOf } from './phase.ts';
import { isReady } from '../pods/conditions.ts';
import { mainImage } from '../revisions/revisions.ts';
import { labelSelectorString } from '../selector.ts';

export function computeStatus(
  o: Observed,
  pending: boolean,
  failure: { reason: FailureReason; message: string } | null,
  newClaims: UpdateClaim[],
): NeoSetStatus {
  const live = o.pods.filter((v) => !v.terminating);
  const updated = live.filter((v) => v.revision === o.update.name && v.state === null);
  const available = (v: (typeof live)[number]) => isAvailable(v.pod, o.minReadySeconds, o.nowMs);
  const phase = phaseOf(o, pending, failure?.reason ?? null);
  const spec = o.neoset.spec;
  // §2.0: the claims still live, and this decision's.
  const claims = new Map([...o.claims, ...newClaims].map((c) => [c.pod, c]));
  return {
    observedGeneration: o.generation,
    replicas: live.length,
    readyReplicas: live.filter((v) => isReady(v.pod)).length,
    availableReplicas: live.filter(available).length,
    updatedReplicas: updated.length,
    updatedReadyReplicas: updated.filter((v) => isReady(v.pod)).length,
    currentRevision: o.current.name,
    updateRevision: o.update.name,
    collisionCount: o.revisions.collisionCount,
    labelSelector: labelSelectorString(spec.selector),
    currentImage: mainImage(o.current),
    targetImage: mainImage(o.update),
    phase,
    currentUpdatePods: o.pods.filter((v) => v.state !== null || claims.has(v.name)).map((v) => v.name),
    ...(claims.size > 0 ? { updateClaims: [...claims.values()].sort((a, b) => a.pod.localeCompare(b.pod)) } : {}),
    conditions: neosetConditions(
      {
        generation: o.generation,
        nowMs: o.nowMs,
        replicas: o.replicas,
        maxUnavailable: o.maxUnavailable,
        available: live.filter((v) => v.inRange && available(v)).length,
        updated: updated.filter((v) => v.inRange).length,
        pending,
        pause: spec.updateStrategy.pause,
        phase,
        failure,
      },
      o.neoset.status?.conditions,
    ),
  };
}
