// One observed state read into the facts the SPEC's rules speak of: the NeoSet with its defaults
// (§3), pods by ordinal (§4.1), which revisions are update/current (§4.2), and which pods are
// unavailable in the budget's sense (§4.4, and §4.10: in its update hooks).
import { CONDITION_INPLACE_READY, LABEL_NEOSET_NAME, LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import { NeoSet } from '../../shared/api/neoset.ts';
import type { PersistentVolumeClaim, Pod } from '../../shared/core/objects.ts';
import { canaryFacts, partitionAtStep, type CanaryFacts } from './canary.ts';
import { inPlaceState, type InPlaceState } from './inplace-state.ts';
import { restarted, stateChange } from './in-place-steps.ts';
import { resolveRevisions, type RevisionFacts } from './revisions.ts';
import type { Observation } from './types.ts';
import { condition, isTrue, seconds } from './wire.ts';

export interface PodFacts {
  pod: Pod;
  name: string;
  uid: string;
  ordinal: number;
  /** The controller-revision-hash label: the revision the pod runs. */
  revision: string | undefined;
  state: InPlaceState | null;
  terminating: boolean;
  ready: boolean;
  /** Running, Ready, not terminating: what OrderedReady waits for (§4.3). */
  runningAndReady: boolean;
  /**
   * §4.4: carrying an in-place state whose update is not both done and available — done: every changed
   * container restarted on its new image and ready, the pod's ContainersReady True (so done by either
   * readiness mode, §4.5); available: its gate open, Ready, for minReadySeconds. Such a pod keeps its
   * state only until the readiness function's finish write, and counts as updated (issue 24).
   */
  inUpdate: boolean;
  /**
   * §4.4: terminating, not Ready, Ready for less than minReadySeconds, in its update (inUpdate), or in
   * its update hooks. A gate reopened on the restart (§4.4 step 3, issue 24) changes none of it: the
   * pod is not Ready before its probes pass (Ready = containers ready AND gates), and is in its update
   * until done and available.
   */
  unavailable: boolean;
}

export interface View {
  neoset: NeoSet;
  name: string;
  replicas: number;
  partition: number;
  pause: boolean;
  strategy: NeoSet['spec']['updateStrategy']['type'];
  maxUnavailable: number;
  gracePeriodSeconds: number;
  pods: PodFacts[];
  /** Pods labelled with the NeoSet's name whose name is not `<neoset>-<ordinal>`. */
  strangers: Pod[];
  byOrdinal: Map<number, PodFacts>;
  byUid: Map<string, PodFacts>;
  revisions: RevisionFacts;
  pvcs: Map<string, PersistentVolumeClaim> | null;
  /** §4.11: the canary steps as this state shows them; null without steps. */
  canary: CanaryFacts | null;
  /** When the state was observed (ms); null when unknown. */
  at: number | null;
}

/** The View, or why the NeoSet cannot be read. */
export function readObservation(obs: Observation): View | string {
  const parsed = NeoSet.safeParse(obs.neoset);
  if (!parsed.success) return `NeoSet does not parse: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`;
  const neoset = parsed.data;
  const { spec } = neoset;
  const at = obs.at === undefined ? null : new Date(obs.at).getTime();
  const pods: PodFacts[] = [];
  const strangers: Pod[] = [];
  for (const pod of obs.pods) {
    if (pod.metadata.labels?.[LABEL_NEOSET_NAME] !== neoset.metadata.name) continue;
    const ordinal = ordinalOf(neoset.metadata.name, pod.metadata.name);
    if (ordinal === null) strangers.push(pod);
    else pods.push(podFacts(pod, ordinal, spec.minReadySeconds, at));
  }
  pods.sort((a, b) => a.ordinal - b.ordinal);
  const revisions = resolveRevisions(neoset, obs.revisions);
  const canary = canaryFacts(neoset, revisions.update, revisions.rolling);
  return {
    neoset,
    name: neoset.metadata.name,
    replicas: spec.replicas,
    // §4.11: with steps, the partition is theirs (canary.ts); an aborted canary holds nothing back —
    // every pod returns to currentRevision — and canary.ts's Abort checks that none moves forward.
    partition: canary ? (canary.aborted ? 0 : partitionAtStep(canary.steps, canary.index, spec.replicas)) : spec.updateStrategy.partition,
    pause: spec.updateStrategy.pause,
    strategy: spec.updateStrategy.type,
    maxUnavailable: resolveMaxUnavailable(spec.updateStrategy.maxUnavailable, spec.replicas),
    gracePeriodSeconds: spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds,
    pods,
    strangers,
    byOrdinal: new Map(pods.map((p) => [p.ordinal, p])),
    byUid: new Map(pods.map((p) => [p.uid, p])),
    revisions,
    pvcs: obs.pvcs ? new Map(obs.pvcs.map((p) => [p.metadata.name, p])) : null,
    canary,
    at,
  };
}

/** §4.1: `<neoset>-<ordinal>`, the ordinal in decimal without leading zeros; null for any other name. */
function ordinalOf(neoset: string, name: string): number | null {
  const digits = name.startsWith(`${neoset}-`) ? name.slice(neoset.length + 1) : '';
  return /^(0|[1-9][0-9]{0,8})$/.test(digits) ? Number(digits) : null;
}

/** §4.10: from PreparingUpdate until Normal a pod counts against the budget (its hook owner may not serve from it). */
export function inHooks(pod: Pod): boolean {
  const s = pod.metadata.labels?.['neoset.neo.io/lifecycle-state'];
  return s !== undefined && s !== 'Normal';
}

function podFacts(pod: Pod, ordinal: number, minReadySeconds: number, at: number | null): PodFacts {
  const state = inPlaceState(pod);
  const terminating = Boolean(pod.metadata.deletionTimestamp);
  const ready = isTrue(pod, 'Ready');
  const available = ready && !terminating && !insideMinReady(pod, minReadySeconds, at);
  const inUpdate = state !== null && !(available && doneOnPod(pod, state));
  return {
    pod,
    name: pod.metadata.name,
    uid: pod.metadata.uid ?? pod.metadata.name,
    ordinal,
    revision: pod.metadata.labels?.[LABEL_REVISION_HASH],
    state,
    terminating,
    ready,
    runningAndReady: pod.status?.phase === 'Running' && ready && !terminating,
    inUpdate,
    unavailable: !available || inUpdate || inHooks(pod),
  };
}

/** §4.4 step 3 on the pod alone, by both readiness modes, and its gate open (what step 4 then writes). */
function doneOnPod(pod: Pod, state: InPlaceState): boolean {
  if (state.phase !== 'Updating' || !isTrue(pod, CONDITION_INPLACE_READY) || !isTrue(pod, 'ContainersReady')) return false;
  const change = stateChange(state);
  const statuses = pod.status?.containerStatuses ?? [];
  return restarted(pod, change) && Object.keys(change.targets).every((name) => statuses.find((s) => s.name === name)?.ready === true);
}

/**
 * §4.5: available = Ready for at least minReadySeconds, measured from the Ready condition's
 * lastTransitionTime. A Ready pod without that time never counts (Kubernetes' IsPodAvailable does
 * the same); at an unknown observation time the pod is given the benefit of the doubt.
 */
function insideMinReady(pod: Pod, minReadySeconds: number, at: number | null): boolean {
  if (minReadySeconds <= 0) return false;
  const since = seconds(condition(pod, 'Ready')?.lastTransitionTime);
  if (since === null) return true;
  return at !== null && (since + minReadySeconds) * 1000 > at;
}

/** §3: an integer, or a percentage of replicas rounded up; at least 1. */
function resolveMaxUnavailable(value: number | string, replicas: number): number {
  const text = String(value).trim();
  const n = text.endsWith('%') ? Math.ceil((Number.parseFloat(text) * replicas) / 100) : Number.parseInt(text, 10);
  return Number.isFinite(n) && n >= 1 ? n : 1;
}
