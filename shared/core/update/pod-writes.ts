// What a pod looks like once one of NeoSet's pod writes has landed — the same merge the API server
// makes (shared/k8s/apply.ts sends these writes). The decision uses it to carry a pod through
// consecutive steps of its update in one invocation (SPEC §2.0 "carry a pod as far as it can go"):
// the next step is decided on the pod as the previous write leaves it, and written conditional on the
// resourceVersion that write returned.
import { ANNOTATION_INPLACE_STATE, ANNOTATION_LIFECYCLE_SINCE, CONDITION_INPLACE_READY, LABEL_LIFECYCLE_STATE, LABEL_REVISION_HASH } from '../../api/names.ts';
import type { Pod, PodCondition } from '../objects.ts';
import type { Action, Gate } from '../plan.ts';

export function afterWrite(pod: Pod, action: Action, nowMs: number): Pod {
  // Copies of what the write changes only: the decision runs for every pod of a large NeoSet.
  const annotations = { ...pod.metadata.annotations };
  const next: Pod = { ...pod, metadata: { ...pod.metadata, annotations } };
  switch (action.kind) {
    case 'markDraining':
      annotations[ANNOTATION_INPLACE_STATE] = JSON.stringify(action.state);
      return withGate(next, action.gate);
    case 'restartDeadline':
      annotations[ANNOTATION_INPLACE_STATE] = JSON.stringify(action.state);
      return next;
    case 'finishInPlaceUpdate':
      delete annotations[ANNOTATION_INPLACE_STATE];
      return action.gate ? withGate(next, action.gate) : next;
    case 'patchImages':
      next.spec = { ...pod.spec, containers: pod.spec.containers.map((c) => (action.images[c.name] ? { ...c, image: action.images[c.name] } : c)) };
      next.metadata.labels = merge({ ...pod.metadata.labels, [LABEL_REVISION_HASH]: action.revision }, action.labels);
      next.metadata.annotations = merge({ ...annotations, [ANNOTATION_INPLACE_STATE]: JSON.stringify(action.state) }, action.annotations);
      return next;
    case 'resizePod':
      // pods/resize keeps only the containers' resources (dropNonResizeUpdates).
      next.spec = { ...pod.spec, containers: pod.spec.containers.map((c) => (action.containers[c.name] ? { ...c, resources: action.containers[c.name].resources } : c)) };
      return next;
    case 'setInPlaceReady':
      return withGate(next, action);
    case 'setLifecycle':
      next.metadata.labels = { ...pod.metadata.labels, [LABEL_LIFECYCLE_STATE]: action.state };
      annotations[ANNOTATION_LIFECYCLE_SINCE] = action.since;
      return next;
    default:
      return next;
  }
}

/** The pod condition a gate write sets: what the applier sends to pods/status. */
export function gateCondition(gate: Gate): PodCondition {
  // null clears a finish's stamp in the strategic merge of pods/status (conditions merge by type).
  return { type: CONDITION_INPLACE_READY, status: gate.status, reason: gate.reason, message: gate.message, lastTransitionTime: gate.lastTransitionTime, lastProbeTime: gate.lastProbeTime ?? null };
}

/** pods/status merges conditions by type: the gate replaces the one of its type. */
function withGate(pod: Pod, gate: Gate): Pod {
  const others = (pod.status?.conditions ?? []).filter((c) => c.type !== CONDITION_INPLACE_READY);
  return { ...pod, status: { ...pod.status, conditions: [...others, gateCondition(gate)] } };
}

function merge(base: Record<string, string>, patch: Record<string, string | null> | undefined): Record<string, string> {
  const out = { ...base };
  for (const [k, v] of Object.entries(patch ?? {})) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}
