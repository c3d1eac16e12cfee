// One pod's update in flight (§4.4), driven by its state annotation — the only memory. Each call
// returns the NEXT write for the pod; decide() carries the pod on through the steps that need no
// waiting (decided on the pod as that write leaves it, pod-writes.ts), each written conditional on
// the resourceVersion the previous write returned (SPEC §2.0).
//
//   (no state) --markDraining (state + gate False, one write)--> Draining --> [gracePeriodSeconds]
//       Draining --patchImages--> Updating --[restarted on the new images]--setInPlaceReady True--> Updating, gate True
//       Updating --[done, §4.5]--> finishInPlaceUpdate (+ gate True, or told done) --> (no state)
//       Updating --resizePod--> Updating                            (§4.9: cpu/memory through pods/resize,
//                                                                    chained on the patch; refused -> resizeRefused)
//       Updating, resize refused or PodResizePending Infeasible --> Failed (ResizeInfeasible) until re-targeted
//       Draining --deletePod--> (gone; §4.3 recreates it)          (not in place: recreate)
//       Draining --finishInPlaceUpdate(aborted)--> (no state)      (the rollout no longer wants it)
//       Updating --markDraining--> Draining                        (a new updateRevision: re-target)
//       Updating --restartDeadline--> Updating                     (pause toggled: retry, §4.4 step 5)
//   (no state), gate not True, running --setInPlaceReady True-->   (a new pod, or finished before it ran)
//   Draining, gate not False --setInPlaceReady False-->            (a gate someone else reopened)
//
// The grace period runs from the moment the gate became False (its lastTransitionTime), not from
// the annotation write: that is when the pod left the Service endpoints. The gate opens again once
// the changed containers run the new images, before their probes pass (readiness.ts, step 3a): the
// kubelet's Ready waits for those; the state stays until done, and the deadline runs until then. The
// pod counts as in its update (the budget, the status, a canary) until done and available
// (observed.ts inUpdate): from then on only the finish write is left, off the rollout's critical path.
import type { Rollout } from '../target.ts';
import { ANNOTATION_INPLACE_STATE, ANNOTATION_RESTART_BASE } from '../../api/names.ts';
import { restartBase } from '../canary/restarts.ts';
import type { ObservedPod } from '../observed.ts';
import type { InPlaceState } from '../../api/inplace-state.ts';
import type { Action, PodStep } from '../plan.ts';
import { POD_IDENTITY_LABELS } from '../pods/identity.ts';
import { containerIds, inPlaceGate } from '../pods/conditions.ts';
import { resizeTargets } from '../resize/resize.ts';
import { resizeStep } from '../resize/step.ts';
import { rfc3339, toMs, type Wakeups } from '../time.ts';
import { gateTransitionTime } from '../readiness/gate-time.ts';
import { finishInPlaceUpdate, podReadiness, REASON_DRAINING } from '../readiness/readiness.ts';
import { canMove, drainingState, markDraining, updateMethod } from './starts.ts';

const none: PodStep = { action: null };
const step = (action: Action): PodStep => ({ action });

/**
 * The next write for a pod in range whose state annotation is present — or why its update failed:
 * not done within timeoutSeconds of startedAt (§4.4 step 5), or a resize that cannot be done
 * (§4.9: refused by the API server, or Infeasible for the kubelet).
 */
export function inFlightStep(o: Rollout, v: ObservedPod, wake: Wakeups): PodStep {
  const state = v.state!;
  const strategy = o.neoset.spec.updateStrategy.inPlaceUpdateStrategy;
  const target = o.target.name;
  const movable = canMove(o, v);

  if (state.phase === 'Draining') {
    // Nothing has changed on the pod yet: a drain the rollout no longer wants (partition raised,
    // strategy now OnDelete or InPlaceOnly-blocked, template back to the pod's revision) is abandoned.
    if (!movable) return step(finishInPlaceUpdate(v.pod, state, o.nowMs, true));
    // Re-target to the new updateRevision; the drain goes on.
    if (state.revision !== target) return step(retarget(o, v, state));
    // The drain wrote state and gate together; a gate reopened since (by hand, or a state written by
    // NeoSet 0.1, which wrote them apart) is closed again, and the grace period counts from then.
    const gate = inPlaceGate(v.pod);
    if (gate?.status !== 'False') {
      return step({
        kind: 'setInPlaceReady',
        pod: v.ref,
        status: 'False',
        reason: REASON_DRAINING,
        message: `draining for update to ${target}`,
        lastTransitionTime: gateTransitionTime('False', strategy.gracePeriodSeconds, o.nowMs),
      });
    }
    const graceEnd = toMs(gate.lastTransitionTime) + strategy.gracePeriodSeconds * 1000;
    if (o.nowMs < graceEnd) {
      wake.at(graceEnd);
      return none;
    }
    // 2. In place: one patch with images, revision label and state; otherwise delete and let §4.3 recreate it.
    if (updateMethod(o, v.revision) === 'InPlace') return step(patchImages(o, v, state));
    return step({
      kind: 'deletePod',
      pod: v.ref,
      event: { type: 'Normal', reason: 'SuccessfulDelete', message: `delete Pod ${v.name} in NeoSet ${o.neoset.metadata.name} successful: recreate at revision ${target}` },
    });
  }

  // Updating: the pod runs (or is starting) the images of state.revision.
  // A new updateRevision re-targets it: a fresh update from its current state (a rollback of a stuck pod).
  if (state.revision !== target && movable) return step(retarget(o, v, state));
  // 2b (§4.9): the resize the image patch recorded, or why it cannot be done (resize/step.ts).
  const resize = resizeStep(v.pod, v.ref, state);
  if (resize) return resize;
  // 3b. Done (§4.5) -> 4. remove the state (the gate opens, or is told done, in the same write).
  // 3a. Restarted on the new images, not yet ready: the gate opens, the state stays.
  const [duty] = podReadiness(v.pod, o.nowMs, strategy.readiness);
  if (duty?.kind === 'finishInPlaceUpdate') return step(duty);
  const gate = duty ?? null;
  // 5. The deadline restarts when pause was toggled since the patch (its condition flipped after
  // startedAt): that is the user's "retry" (the gate, if due, follows in the chain). A template change
  // re-targets (above); a scale, an HPA or a promote changes nothing here, so under their churn a
  // stuck update still reaches Failed — an open gate included: it waits on the same deadline.
  if (pauseToggledSince(o, state.startedAt)) {
    return step({
      kind: 'restartDeadline',
      pod: v.ref,
      state: { ...state, startedAt: rfc3339(o.nowMs) },
      event: { type: 'Normal', reason: 'InPlaceUpdateDeadlineRestarted', message: `pod ${v.name}: pause was toggled, the in-place update deadline restarts` },
    });
  }
  const deadline = toMs(state.startedAt) + strategy.timeoutSeconds * 1000;
  if (o.nowMs >= deadline) {
    const message = `pod ${v.name}: in-place update to ${state.revision} not done within ${strategy.timeoutSeconds}s`;
    return { action: gate, failure: { reason: 'ProgressDeadlineExceeded', message, key: `deadline-exceeded/${v.name}/${state.startedAt}` } };
  }
  wake.at(deadline);
  return gate ? step(gate) : none;
}

/** A new updateRevision while the pod is on its way to another: Draining again toward it, drainStartedAt kept. */
function retarget(o: Rollout, v: ObservedPod, state: InPlaceState): Action {
  return markDraining(o, v, drainingState(o, state.drainStartedAt), {
    type: 'Normal',
    reason: 'UpdateRetargeted',
    message: `pod ${v.name}: update re-targeted from revision ${state.revision} to ${o.target.name}`,
  });
}

/** The Paused condition (status as read) changed after `since`: pause was set or cleared since then. */
function pauseToggledSince(o: Rollout, since: string | undefined): boolean {
  const paused = o.neoset.status?.conditions?.find((c) => c.type === 'Paused');
  return paused !== undefined && since !== undefined && toMs(paused.lastTransitionTime) > toMs(since);
}

/** Step 2: new images of the changed containers, the revision label, template metadata changes, state Updating. */
function patchImages(o: Rollout, v: ObservedPod, state: InPlaceState): Action {
  const target = o.target.template;
  const images: Record<string, string> = {};
  for (const c of target.spec.containers) {
    const running = v.pod.spec.containers.find((p) => p.name === c.name);
    if (running && running.image !== c.image) images[c.name] = c.image;
  }
  const before = containerIds(v.pod, Object.keys(images));
  const targetResources = resizeTargets(v.pod, target.spec.containers);
  const from = v.revision === undefined ? undefined : o.revisions.byName.get(v.revision)?.template;
  const labels = metadataPatch(v.pod.metadata.labels, from?.metadata?.labels, target.metadata?.labels, POD_IDENTITY_LABELS);
  const templateAnnotations = metadataPatch(v.pod.metadata.annotations, from?.metadata?.annotations, target.metadata?.annotations, [
    ANNOTATION_INPLACE_STATE,
    ANNOTATION_RESTART_BASE,
  ]);
  // §4.11 maxRestarts counts the restarts past this base; only a canary's analysis reads it.
  const annotations = o.neoset.spec.updateStrategy.canary?.analysis?.maxRestarts !== undefined
    ? { ...templateAnnotations, [ANNOTATION_RESTART_BASE]: JSON.stringify(restartBase(v.pod, Object.keys(images))) }
    : templateAnnotations;
  return {
    kind: 'patchImages',
    pod: v.ref,
    images,
    revision: o.target.name,
    state: {
      ...state,
      revision: o.target.name,
      phase: 'Updating',
      startedAt: rfc3339(o.nowMs),
      targetImages: images,
      previousImageIDs: before.imageIDs,
      previousContainerIDs: before.containerIDs,
      ...(targetResources ? { targetResources } : {}),
    },
    ...(labels ? { labels } : {}),
    ...(annotations ? { annotations } : {}),
    event: {
      type: 'Normal',
      reason: 'InPlaceUpdateStarted',
      message: `pod ${v.name}: patch ${[...Object.entries(images).map(([c, i]) => `${c}=${i}`), ...Object.keys(targetResources ?? {}).map((c) => `${c} resources`)].join(', ') || 'metadata'} (revision ${o.target.name})`,
    },
  };
}

/** Merge-patch from the pod's labels/annotations to the new template's: set what differs, remove what the old template had. */
function metadataPatch(
  current: Record<string, string> | undefined,
  from: Record<string, string> | undefined,
  to: Record<string, string> | undefined,
  reserved: string[],
): Record<string, string | null> | null {
  const patch: Record<string, string | null> = {};
  for (const [k, value] of Object.entries(to ?? {})) if (!reserved.includes(k) && current?.[k] !== value) patch[k] = value;
  for (const k of Object.keys(from ?? {})) if (!reserved.includes(k) && !(k in (to ?? {})) && current && k in current) patch[k] = null;
  return Object.keys(patch).length > 0 ? patch : null;
}
