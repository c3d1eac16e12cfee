import { ANNOTATION_INPLACE_STATE, LABEL_REVISION_HASH } from '../../shared/api/names.ts';
// Small helpers for the example tests: read a plan as `kind:pod` strings, build settled worlds.
import type { NeoSetSpecInput } from '../../shared/api/neoset.ts';
import { decide } from '../../shared/core/decide.ts';
import type { Action, Plan } from '../../shared/core/plan.ts';
import { World, type WorldObservation } from './world.ts';

/**
 * `markDraining:web-4`, `createPod:web-5`, `createRevision`, ... in plan order: each pod's first
 * write only — the steps chained after it (§2.0, `pod.chained`) are its continuation; `chain` lists those.
 */
export function steps(plan: Plan | Action[]): string[] {
  const actions = Array.isArray(plan) ? plan : plan.actions;
  return describeActions(actions.filter((a) => !('pod' in a && 'chained' in a.pod && a.pod.chained)));
}

/** Every write of the plan, chained ones included. */
export function chain(plan: Plan | Action[]): string[] {
  return describeActions(Array.isArray(plan) ? plan : plan.actions);
}

function describeActions(actions: Action[]): string[] {
  return actions.map((a) => {
    switch (a.kind) {
      case 'createPod':
        return `${a.kind}:${a.pod.metadata.name}`;
      case 'createPVC':
        return `${a.kind}:${a.pvc.metadata.name}`;
      case 'setPVCOwners':
      case 'resizeClaim':
        return `${a.kind}:${a.pvc.name}`;
      case 'createRevision':
      case 'renumberRevision':
      case 'deleteRevision':
        return a.kind;
      case 'recordEvent':
        return `${a.kind}:${a.event.reason}`;
      case 'adoptPod':
      case 'adoptRevision':
        return `${a.kind}:${a.object.name}`;
      default:
        return `${a.kind}:${a.pod.name}`;
    }
  });
}

/** A NeoSet created and settled: every pod running and Ready on the first revision. */
export async function settled(spec: Partial<NeoSetSpecInput> & { image?: string } = {}): Promise<World> {
  const w = new World({ replicas: 5, ...spec });
  if ((await w.settle()) < 0) throw new Error('did not settle');
  return w;
}

/** The plan decide() makes for the world as it is now. */
export function plan(w: World): Plan {
  return decide(w.snapshot(), new Date(w.now));
}

export function revisionsOfPods(w: World): (string | undefined)[] {
  return Array.from({ length: w.neoset.spec.replicas }, (_, i) => w.revisionOf(i));
}

export function imagesOfPods(w: World): (string | undefined)[] {
  return Array.from({ length: w.neoset.spec.replicas }, (_, i) => w.imageOf(i));
}

export function uids(w: World): string[] {
  return [...w.pods.values()].map((p) => p.metadata.uid!).sort();
}

/** One line per pod for a failure report: name[revision image Ready gate in-place phase]. */
export function describePods(w: World): string {
  return [...w.pods.values()]
    .map((p) => {
      const c = (t: string) => p.status?.conditions?.find((x) => x.type === t)?.status?.[0] ?? '-';
      const state = p.metadata.annotations?.[ANNOTATION_INPLACE_STATE];
      return `${p.metadata.name}[${p.metadata.labels?.[LABEL_REVISION_HASH]} ${p.spec.containers[0].image} ${p.status?.phase} R${c('Ready')} G${c('InPlaceUpdateReady')}${p.metadata.deletionTimestamp ? ' terminating' : ''}${state ? ` ${JSON.parse(state).phase}->${JSON.parse(state).revision}` : ''}]`;
    })
    .join(' ');
}

/** The commands every property run of the world has: reconcile (then a kubelet round), crashes, kubelet steps, time. */
export type WorldCommand =
  | { k: 'tick' }
  | { k: 'reconcile' }
  | { k: 'crash'; after: number }
  | { k: 'kubelet'; pod: number }
  | { k: 'unready'; pod: number }
  | { k: 'time'; seconds: number };

const WORLD_COMMANDS = new Set(['tick', 'reconcile', 'crash', 'kubelet', 'unready', 'time']);

export const isWorldCommand = <C extends { k: string }>(c: C): c is Extract<C, WorldCommand> => WORLD_COMMANDS.has(c.k);

/**
 * A reconcile from `snapshot`. Nothing else writes while the world reconciles, so a 409 could only come
 * from the plan itself: two writes computed from the same resourceVersion of one object.
 */
export async function reconcileFrom(w: World, snapshot: WorldObservation): Promise<void> {
  const r = await w.reconcile({ snapshot });
  if (r.conflict) throw new Error(`the plan conflicts with itself: ${r.plan.actions.map((a) => a.kind).join(', ')}`);
}

/** Apply one WorldCommand; `state` is a copy of the world as it is (the snapshot a reconcile reads). */
export async function worldStep(w: World, c: WorldCommand, state: WorldObservation): Promise<void> {
  const name = (i: number) => `${w.neoset.metadata.name}-${i}`;
  switch (c.k) {
    case 'tick':
      await reconcileFrom(w, state);
      return w.kubeletSettle(1);
    case 'reconcile':
      return reconcileFrom(w, state);
    case 'crash':
      return void (await w.reconcile({ crashAfter: c.after, snapshot: state }));
    case 'kubelet':
      return w.kubeletSync(name(c.pod));
    case 'unready':
      return w.kubeletUnready(name(c.pod));
    case 'time':
      return w.advance(c.seconds);
  }
}
