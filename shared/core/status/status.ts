// NeoSet .status (§4.6): counts, revisions, images, phase, pods being updated, conditions.
import type { Rollout } from '../target.ts';
import type { NeoSetStatus } from '../../api/neoset.ts';
import { isAvailable } from '../pods/availability.ts';
import { CONDITION_CLAIMS_RESIZED, claimsCondition } from './claims-condition.ts';
import { neosetConditions } from './conditions.ts';
import type { ClaimGrowth } from '../update/claim-growth.ts';
import { inUpdate, type UpdateClaim } from '../observed.ts';
import type { Failure } from '../failure.ts';
import { phaseOf } from './phase.ts';
import { isReady } from '../pods/conditions.ts';
import { inHooks } from '../pods/lifecycle-state.ts';
import { mainImage } from '../revisions/revisions.ts';
import { labelSelectorString } from '../selector.ts';
import { resolveMaxUnavailable } from '../update/budget.ts';

export function computeStatus(
  o: Rollout,
  unfinished: boolean,
  failure: Failure | null,
  newClaims: UpdateClaim[],
  /** §4.12: the claims that grow; a pod whose claims are not done is not updated. */
  growth?: ClaimGrowth,
): NeoSetStatus {
  // One pass over the pods (a decision runs for every pod of a large NeoSet).
  const n = { replicas: 0, ready: 0, available: 0, availableInRange: 0, updated: 0, updatedReady: 0, updatedInRange: 0 };
  for (const v of o.pods) {
    if (v.terminating) continue;
    const ready = isReady(v.pod);
    const available = ready && isAvailable(v.pod, o.minReadySeconds, o.nowMs);
    const updated = v.revision === o.revisions.update.name && !inUpdate(v, o.target.name) && !growth?.notDone.has(v.name);
    n.replicas++;
    if (ready) n.ready++;
    if (available) n.available++;
    if (available && v.inRange) n.availableInRange++;
    if (updated) n.updated++;
    if (updated && ready) n.updatedReady++;
    if (updated && v.inRange) n.updatedInRange++;
  }
  const phase = phaseOf(o, unfinished, failure?.reason ?? null);
  const spec = o.neoset.spec;
  // §2.0: the claims still live, and this decision's.
  const claims = new Map([...o.claims, ...newClaims].map((c) => [c.pod, c]));
  return {
    observedGeneration: o.generation,
    replicas: n.replicas,
    readyReplicas: n.ready,
    availableReplicas: n.available,
    updatedReplicas: n.updated,
    updatedReadyReplicas: n.updatedReady,
    currentRevision: o.current.name,
    // The revision of spec.template, also while an aborted canary moves pods back (§4.11).
    updateRevision: o.revisions.update.name,
    collisionCount: o.revisions.collisionCount,
    labelSelector: labelSelectorString(spec.selector),
    currentImage: mainImage(o.current),
    targetImage: mainImage(o.revisions.update),
    phase,
    // Not the pods whose claims resize (§4.12): a pod named here without an update in flight is a
    // claim of §2.0, judged by the spec it was named under; the ClaimsResized condition names those.
    // Nor a pod done and available whose state awaits the finish write: it leaves in the write that
    // claims the next pod.
    currentUpdatePods: o.pods.filter((v) => inUpdate(v, o.target.name) || inHooks(v.pod) || claims.has(v.name)).map((v) => v.name),
    ...(o.canary.status ? { canary: o.canary.status } : {}),
    ...(claims.size > 0 ? { updateClaims: [...claims.values()].sort((a, b) => a.pod.localeCompare(b.pod)) } : {}),
    conditions: neosetConditions(
      {
        generation: o.generation,
        nowMs: o.nowMs,
        replicas: o.replicas,
        maxUnavailable: resolveMaxUnavailable(spec),
        available: n.availableInRange,
        updated: n.updatedInRange,
        unfinished,
        pause: spec.updateStrategy.pause,
        canaryWaiting: o.canary.waiting,
        phase,
        failure,
        claims: claimsCondition(growth, o.neoset.status?.conditions?.some((c) => c.type === CONDITION_CLAIMS_RESIZED) ?? false),
      },
      o.neoset.status?.conditions,
    ),
  };
}
