// One observed state as the invariant checker reads it: the NeoSet with its defaults, pods by
// ordinal, the revisions as decide() would resolve them, and availability at the observation time.
import { LABEL_NEOSET_NAME } from '../api/names.ts';
import { NeoSet, type NeoSet as NeoSetType } from '../api/neoset.ts';
import { availableSince } from './availability.ts';
import { resolveMaxUnavailable } from './budget.ts';
import { podInPlaceState } from './inplace-state.ts';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from './k8s.ts';
import type { InPlaceState } from './plan.ts';
import { parseOrdinal, podRevision } from './pods.ts';
import { isReady, isTerminating } from './readiness.ts';
import { resolveRevisions } from './revisions.ts';
import { templateChange } from './template-diff.ts';

/** An observed state: plain JSON as read from the API server (or the in-memory world). */
export interface Observation {
  /** The NeoSet; schema defaults are applied here when missing. */
  neoset: unknown;
  pods: Pod[];
  /** Its ControllerRevisions; without them, revisions are taken from status and in-place-ability is assumed. */
  revisions?: ControllerRevision[];
  /** Its PVCs; without them, claim checks are skipped. */
  pvcs?: PersistentVolumeClaim[];
  /** When the state was observed: makes minReadySeconds exact; without it, availability is judged leniently. */
  at?: Date | string | number;
}

export interface PodFacts {
  pod: Pod;
  name: string;
  uid: string;
  ordinal: number;
  revision: string | undefined;
  state: InPlaceState | null;
  terminating: boolean;
  ready: boolean;
  /** Surely unavailable (budget sense): not Ready, terminating, mid-update, or Ready for less than minReadySeconds at a known time. */
  unavailable: boolean;
  /** Possibly unavailable: as above, or Ready for an unknown time short of minReadySeconds. */
  maybeUnavailable: boolean;
}

export interface View {
  neoset: NeoSetType;
  name: string;
  replicas: number;
  partition: number;
  pause: boolean;
  strategy: NeoSetType['spec']['updateStrategy']['type'];
  maxUnavailable: number;
  pods: PodFacts[];
  /** Pods labelled with the NeoSet's name whose name is not `<neoset>-<ordinal>`. */
  strangers: Pod[];
  byOrdinal: Map<number, PodFacts>;
  byUid: Map<string, PodFacts>;
  update: string | undefined;
  current: string | undefined;
  revisionNames: Set<string> | null;
  /** Revision numbers held by more than one stored revision. */
  duplicateNumbers: number[];
  /** true/false when both templates are known; null when not. */
  inPlace(from: string, to: string): boolean | null;
  pvcs: Map<string, PersistentVolumeClaim> | null;
}

export function readObservation(obs: Observation): View | string {
  const parsed = NeoSet.safeParse(obs.neoset);
  if (!parsed.success) return `NeoSet does not parse: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`;
  const neoset = parsed.data;
  const at = obs.at === undefined ? null : new Date(obs.at).getTime();
  const minReady = neoset.spec.minReadySeconds;
  const pods: PodFacts[] = [];
  const strangers: Pod[] = [];
  for (const pod of obs.pods) {
    if (pod.metadata.labels?.[LABEL_NEOSET_NAME] !== neoset.metadata.name) continue;
    const ordinal = parseOrdinal(neoset.metadata.name, pod.metadata.name);
    if (ordinal === null) {
      strangers.push(pod);
      continue;
    }
    const state = podInPlaceState(pod);
    const since = availableSince(pod, minReady);
    const terminating = isTerminating(pod);
    const base = terminating || !isReady(pod) || state !== null || since === null;
    pods.push({
      pod,
      name: pod.metadata.name,
      uid: pod.metadata.uid ?? pod.metadata.name,
      ordinal,
      revision: podRevision(pod),
      state,
      terminating,
      ready: isReady(pod),
      unavailable: base || (at !== null && since! > at),
      maybeUnavailable: base || (at === null ? minReady > 0 : since! > at),
    });
  }
  let update = neoset.status?.updateRevision;
  let current = neoset.status?.currentRevision ?? update;
  let revisionNames: Set<string> | null = null;
  const duplicateNumbers: number[] = [];
  const templates = new Map<string, NeoSetType['spec']['template']>();
  if (obs.revisions) {
    const resolved = resolveRevisions(neoset, obs.revisions);
    update = resolved.update.name;
    current = resolved.current.name;
    revisionNames = new Set(obs.revisions.map((r) => r.metadata.name));
    const numbers = obs.revisions.map((r) => r.revision);
    duplicateNumbers.push(...new Set(numbers.filter((n, i) => numbers.indexOf(n) !== i)));
    for (const r of resolved.byName.values()) templates.set(r.name, r.template);
  }
  const spec = neoset.spec;
  return {
    neoset,
    name: neoset.metadata.name,
    replicas: spec.replicas,
    partition: spec.updateStrategy.partition,
    pause: spec.updateStrategy.pause,
    strategy: spec.updateStrategy.type,
    maxUnavailable: resolveMaxUnavailable(spec),
    pods: pods.sort((a, b) => a.ordinal - b.ordinal),
    strangers,
    byOrdinal: new Map(pods.map((p) => [p.ordinal, p])),
    byUid: new Map(pods.map((p) => [p.uid, p])),
    update,
    current,
    revisionNames,
    duplicateNumbers,
    inPlace: (from, to) => {
      const a = templates.get(from);
      const b = templates.get(to);
      return a && b ? templateChange(a, b).inPlace : null;
    },
    pvcs: obs.pvcs ? new Map(obs.pvcs.map((p) => [p.metadata.name, p])) : null,
  };
}
