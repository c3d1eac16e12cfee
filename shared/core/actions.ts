// What each kind of action is, in one table the compiler holds exhaustive (a new kind of Action does
// not type-check until it has its row): which pod it writes, whether it needs the claim (§2.0),
// whether it is the readiness function's duty (§2.2, §4.5), and how a refusal of it is named (§4.6).
// The decision, the applier, the failure reports and the readiness duties all read it. And the order
// the applier writes a plan in (§2.0), decided here so that the applier only applies.
import type { Action, ActionKind, Plan } from './plan.ts';

/** The action of kind K (adoptPod and adoptRevision share one member of the union). */
type Of<K extends ActionKind> = Action extends infer A ? (A extends { kind: infer X } ? (K extends X ? A & { kind: K } : never) : never) : never;

interface ActionFacts<K extends ActionKind> {
  /**
   * The pod of a pod write that may go out together with other pods' writes (SPEC §2.0 "concurrently,
   * bounded"); null: one at a time, in plan order — adoption (before anything else is done to the
   * pod) and a claim's release (before the status) included.
   */
  pod: ((a: Of<K>) => string) | null;
  /**
   * The write depends on the spec, so the plan that holds it claims (§2.0: its status is written
   * first, conditional on the NeoSet's resourceVersion). Not: the readiness gate and the end of an
   * in-place update (pod facts; an abandoned drain only gives back what it took), Events.
   */
  claimed: boolean;
  /** The readiness function's duty (§2.2, §4.5: an update is done, the gate opens): left to it on a Pod event. */
  readinessDuty: (a: Of<K>) => boolean;
  /** The Warning Event's and the ReplicaFailure condition's reason when the API server refuses it (§4.6). */
  refusal: 'FailedCreate' | 'FailedDelete' | 'FailedUpdate';
  /** The write as a refusal names it: `create Pod web-3`. */
  describe: (a: Of<K>) => string;
}

const podRef = (a: { pod: { name: string } }) => a.pod.name;
const no = () => false;
const named = (a: { kind: string; pod: { name: string } }) => `${a.kind} ${a.pod.name}`;
const podWrite = { pod: podRef, claimed: true, readinessDuty: no, refusal: 'FailedUpdate', describe: named } as const;

export const ACTIONS: { [K in ActionKind]: ActionFacts<K> } = {
  createRevision: { pod: null, claimed: true, readinessDuty: no, refusal: 'FailedCreate', describe: (a) => `create ControllerRevision ${a.revision.metadata.name}` },
  renumberRevision: { pod: null, claimed: true, readinessDuty: no, refusal: 'FailedUpdate', describe: (a) => `renumber ControllerRevision ${a.revision.name}` },
  deleteRevision: { pod: null, claimed: true, readinessDuty: no, refusal: 'FailedDelete', describe: (a) => `delete ControllerRevision ${a.revision.name}` },
  createPVC: { pod: null, claimed: true, readinessDuty: no, refusal: 'FailedCreate', describe: (a) => `create Claim ${a.pvc.metadata.name}` },
  setPVCOwners: { pod: null, claimed: true, readinessDuty: no, refusal: 'FailedUpdate', describe: (a) => `set owners of Claim ${a.pvc.name}` },
  resizeClaim: { pod: null, claimed: true, readinessDuty: no, refusal: 'FailedUpdate', describe: (a) => `resize Claim ${a.pvc.name} to ${a.storage}` },
  createPod: { pod: (a) => a.pod.metadata.name, claimed: true, readinessDuty: no, refusal: 'FailedCreate', describe: (a) => `create Pod ${a.pod.metadata.name}` },
  deletePod: { ...podWrite, refusal: 'FailedDelete' },
  markDraining: podWrite,
  setInPlaceReady: { ...podWrite, claimed: false, readinessDuty: (a) => a.status === 'True' },
  patchImages: podWrite,
  resizePod: podWrite,
  finishInPlaceUpdate: { ...podWrite, claimed: false, readinessDuty: (a) => !a.aborted },
  restartDeadline: podWrite,
  setLifecycle: podWrite,
  adoptPod: { pod: null, claimed: true, readinessDuty: no, refusal: 'FailedUpdate', describe: (a) => `${a.kind} ${a.object.name}` },
  adoptRevision: { pod: null, claimed: true, readinessDuty: no, refusal: 'FailedUpdate', describe: (a) => `${a.kind} ${a.object.name}` },
  releaseClaim: { pod: null, claimed: true, readinessDuty: no, refusal: 'FailedUpdate', describe: named },
  recordEvent: { pod: null, claimed: false, readinessDuty: no, refusal: 'FailedUpdate', describe: () => 'record Event' },
};

/** The row of an action's kind, typed for that action. */
function facts<K extends ActionKind>(a: Of<K>): ActionFacts<K> {
  return ACTIONS[a.kind as K];
}

/** The pod a write may go out with other pods' writes for (see ActionFacts.pod); null: one at a time. */
export function groupedPod(a: Action): string | null {
  const pod = facts(a).pod;
  return pod ? pod(a) : null;
}

export const needsClaim = (a: Action): boolean => facts(a).claimed;

/** The readiness function's duties (§2.2, §4.5): an update is done (finish) and the gate opens. */
export function isReadinessDuty(a: Action): a is Of<'setInPlaceReady' | 'finishInPlaceUpdate'> {
  return facts(a).readinessDuty(a);
}

export const describeAction = (a: Action): string => facts(a).describe(a);
export const refusalReason = (a: Action): ActionFacts<ActionKind>['refusal'] => facts(a).refusal;

/**
 * The order the applier writes a plan in (§2.0). The releases of claims the plan does not act on go
 * first (decide.ts releases()): their pods' resourceVersions move before the status that acknowledges
 * the spec the claims no longer fit is written. A plan that claims writes its status at `claimAt`
 * (after the releases, before everything else); then the rest, in plan order.
 */
export function writeOrder(plan: Plan): { writes: Action[]; claimAt: number } {
  const releases = plan.actions.filter((a) => a.kind === 'releaseClaim');
  return { writes: [...releases, ...plan.actions.filter((a) => a.kind !== 'releaseClaim')], claimAt: releases.length };
}

/**
 * The writes from `start` that go out together: a run of pod writes (decide.ts: one pod's first
 * write, then its chained steps) grouped per pod — each pod's chain in its own order — stopping
 * before `limit` and before anything that is not such a pod write. Any other write is a group of its own.
 */
export function writeGroup(writes: Action[], start: number, limit: number): { chains: Action[][]; end: number } {
  const chains = new Map<string, Action[]>();
  let end = start;
  for (; end < limit; end++) {
    const pod = groupedPod(writes[end]);
    if (pod === null) break;
    chains.set(pod, [...(chains.get(pod) ?? []), writes[end]]);
  }
  if (end === start) return { chains: [[writes[start]]], end: start + 1 };
  return { chains: [...chains.values()], end };
}
