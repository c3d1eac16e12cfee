// The snapshot read once into the facts every part of the decision shares: the pods by ordinal,
// the revisions, the effective current revision, and the per-decision memo of template changes.
import type { NeoSet } from '../api/neoset.ts';
import { isAvailable, isUnavailableForBudget } from './availability.ts';
import { resolveMaxUnavailable } from './budget.ts';
import { podInPlaceState } from './inplace-state.ts';
import type { Pod } from './k8s.ts';
import type { InPlaceState, ObjectRef } from './plan.ts';
import { objectRef, parseOrdinal, podRevision } from './pods.ts';
import { hasFinished, isTerminating } from './readiness.ts';
import { resolveRevisions, type Revision, type Revisions } from './revisions.ts';
import type { Snapshot } from './snapshot.ts';
import { templateChange, type TemplateChange } from './template-diff.ts';

export interface PodView {
  pod: Pod;
  name: string;
  ordinal: number;
  ref: ObjectRef;
  /** The pod's revision: its controller-revision-hash label. */
  revision: string | undefined;
  state: InPlaceState | null;
  terminating: boolean;
  /** Phase Failed or Succeeded. */
  finished: boolean;
  /** ordinal < spec.replicas; the others are condemned (scale-down). */
  inRange: boolean;
}

export interface Observed {
  neoset: NeoSet;
  nowMs: number;
  generation: number;
  replicas: number;
  minReadySeconds: number;
  maxUnavailable: number;
  /** Pods with a NeoSet ordinal, by ordinal. Pods whose name is not `<neoset>-<i>` are not ours to act on. */
  pods: PodView[];
  byOrdinal: Map<number, PodView>;
  revisions: Revisions;
  update: Revision;
  /** The current revision this decision works with: status.currentRevision, advanced when the rollout is done (§4.2). */
  current: Revision;
  /** currentRevision moves to updateRevision in this decision. */
  advanced: boolean;
  /** How a pod on revision `from` moves to `to`; null when `from` is not a stored revision. */
  change(from: string | undefined, to: string): TemplateChange | null;
}

export function observe(snapshot: Snapshot, nowMs: number): Observed {
  const { neoset } = snapshot;
  const views: PodView[] = [];
  for (const pod of snapshot.pods) {
    const ordinal = parseOrdinal(neoset.metadata.name, pod.metadata.name);
    if (ordinal === null) continue;
    views.push({
      pod,
      name: pod.metadata.name,
      ordinal,
      ref: objectRef(pod.metadata),
      revision: podRevision(pod),
      state: podInPlaceState(pod),
      terminating: isTerminating(pod),
      finished: hasFinished(pod),
      inRange: ordinal < neoset.spec.replicas,
    });
  }
  views.sort((a, b) => a.ordinal - b.ordinal);
  const byOrdinal = new Map(views.map((v) => [v.ordinal, v]));
  const revisions = resolveRevisions(neoset, snapshot.revisions);
  const changes = new Map<string, TemplateChange | null>();
  const change = (from: string | undefined, to: string): TemplateChange | null => {
    const key = `${from}\n${to}`;
    if (!changes.has(key)) {
      const a = from === undefined ? undefined : revisions.byName.get(from);
      const b = revisions.byName.get(to);
      changes.set(key, a && b ? templateChange(a.template, b.template) : null);
    }
    return changes.get(key)!;
  };
  const minReadySeconds = neoset.spec.minReadySeconds;
  const advanced =
    revisions.current.name !== revisions.update.name &&
    rolloutDone(neoset.spec.replicas, byOrdinal, revisions.update.name, minReadySeconds, nowMs);
  return {
    neoset,
    nowMs,
    generation: neoset.metadata.generation ?? 0,
    replicas: neoset.spec.replicas,
    minReadySeconds,
    maxUnavailable: resolveMaxUnavailable(neoset.spec),
    pods: views,
    byOrdinal,
    revisions,
    update: revisions.update,
    current: advanced ? revisions.update : revisions.current,
    advanced,
    change,
  };
}

/**
 * §4.2: currentRevision advances only when every pod 0..replicas-1 exists, runs updateRevision
 * (label, and no in-place update in flight) and is available — so never while partition holds pods back.
 */
function rolloutDone(replicas: number, byOrdinal: Map<number, PodView>, update: string, minReady: number, nowMs: number): boolean {
  for (let i = 0; i < replicas; i++) {
    const v = byOrdinal.get(i);
    if (!v || v.terminating || v.revision !== update || v.state !== null || !isAvailable(v.pod, minReady, nowMs)) return false;
  }
  return true;
}

/** Pods 0..replicas-1 that count against maxUnavailable: missing, terminating, not available, or mid-update (§4.4). */
export function unavailableInRange(o: Observed): number {
  let n = 0;
  for (let i = 0; i < o.replicas; i++) {
    const v = o.byOrdinal.get(i);
    if (!v || v.terminating || isUnavailableForBudget(v.pod, o.minReadySeconds, o.nowMs)) n++;
  }
  return n;
}

/** A rollout is in progress: currentRevision differs from updateRevision (§4.3). */
export function rolloutInProgress(o: Observed): boolean {
  return o.current.name !== o.update.name;
}
