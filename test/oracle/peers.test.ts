// The oracle's checks of the peers' rules (SPEC §4.12): Priority (update priority) and ScaleBudget
// (scaleStrategy.maxUnavailable). The start or create being judged is written by hand, so that a
// case does not depend on what the core decides; the core only brings the world to the state before.
import { describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_STATE } from '../../shared/api/names.ts';
import type { NeoSetSpecInput } from '../../shared/api/neoset.ts';
import { settled } from '../unit/helpers.ts';
import type { World } from '../unit/world.ts';
import { checkInvariants, type Invariant, type Observation } from './index.ts';

const found = (w: World, previous: Observation): Invariant[] => checkInvariants({ ...w.observation(), previous }).map((v) => v.invariant);

/** 4 pods, a new template stored as the update revision (a paused reconcile stores it), nothing started, unpaused. */
async function rollingWith(updateStrategy: NeoSetSpecInput['updateStrategy'], labels: Record<number, Record<string, string>>): Promise<World> {
  const w = await settled({ replicas: 4, updateStrategy });
  for (const [i, l] of Object.entries(labels)) w.changePod(`web-${i}`, (p) => void Object.assign(p.metadata.labels!, l));
  w.edit((s) => ((s.updateStrategy.pause = true), (s.template.spec.containers[0].image = 'nginx:v2')));
  await w.reconcile();
  w.edit((s) => void (s.updateStrategy.pause = false));
  return w;
}

/** The start of web-<ordinal>'s update, as §4.4 documents it: Draining toward the update revision. */
function start(w: World, ordinal: number): void {
  const state = { revision: w.neoset.status!.updateRevision, phase: 'Draining', drainStartedAt: new Date(w.now).toISOString() };
  w.changePod(`web-${ordinal}`, (p) => void (p.metadata.annotations = { ...p.metadata.annotations, [ANNOTATION_INPLACE_STATE]: JSON.stringify(state) }));
}

const replicasFirst = { weightPriority: [{ weight: 100, matchSelector: { matchLabels: { role: 'replica' } } }] };

describe('oracle: update priority (§4.12)', () => {
  it('Priority: an available pod started while an available one ranking before it waits', async () => {
    const w = await rollingWith({ priorityStrategy: replicasFirst }, { 1: { role: 'replica' } });
    const previous = w.observation();
    start(w, 3);
    expect(found(w, previous)).toEqual(['Priority']);
  });

  it('in priority order it is fine, and so are ties out of ordinal order (not judged)', async () => {
    const w = await rollingWith({ maxUnavailable: 2, priorityStrategy: replicasFirst }, { 1: { role: 'replica' } });
    const previous = w.observation();
    start(w, 1);
    start(w, 0);
    expect(found(w, previous)).toEqual([]);
  });

  it('a pod already unavailable costs no slot: it may start past an available one ranking before it', async () => {
    const w = await rollingWith({ priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }] } }, { 0: { rank: 'r-1' } });
    w.kubeletUnready('web-3');
    const previous = w.observation();
    start(w, 3);
    expect(found(w, previous)).toEqual([]);
  });
});

describe('oracle: the scale budget (§4.12)', () => {
  /** 2 pods Ready, Parallel, replicas raised to 5: the state before, with the budget in both states' spec. */
  async function scaling(budget: number | string): Promise<{ w: World; previous: Observation }> {
    const w = await settled({ replicas: 2, podManagementPolicy: 'Parallel' });
    w.edit((s) => void (s.replicas = 5));
    const previous = structuredClone(w.observation());
    (previous.neoset as { spec: NeoSetSpecInput }).spec.scaleStrategy = { maxUnavailable: budget };
    await w.reconcile(); // no budget in the world: web-2, web-3 and web-4 at once
    w.edit((s) => void (s.scaleStrategy = { maxUnavailable: budget }));
    return { w, previous };
  }

  it('ScaleBudget: more pods created than the budget leaves', async () => {
    const { w, previous } = await scaling(2);
    expect(found(w, previous)).toEqual(['ScaleBudget']);
  });

  it('within the budget it is fine (a percentage of replicas rounded down: 60% of 5 is 3)', async () => {
    const { w, previous } = await scaling('60%');
    expect(found(w, previous)).toEqual([]);
  });
});
