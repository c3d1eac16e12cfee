// SPEC §2.4: what keeps the fast tick (in-flight.ts).
import { describe, expect, it } from 'vitest';
import type { NeoSet } from '../api/neoset.ts';
import { inFlight } from './in-flight.ts';
import type { Plan } from './plan.ts';

const neoset = (status: NeoSet['status']): Pick<NeoSet, 'spec' | 'status'> => ({ spec: { replicas: 3 } as NeoSet['spec'], status });
const atRest = { phase: 'Completed' as const, replicas: 3, readyReplicas: 3, availableReplicas: 3 };
const plan = (p: Partial<Plan> = {}): Pick<Plan, 'actions' | 'status' | 'requeueAfter'> => ({ actions: [], status: null, requeueAfter: null, ...p });
const event = { kind: 'recordEvent', key: 'k', event: {} } as unknown as Plan['actions'][number];
const deletePod = { kind: 'deletePod', pod: { name: 'a-2' }, event: {} } as unknown as Plan['actions'][number];

describe('inFlight', () => {
  it('is false for a NeoSet at rest: all pods there and Ready, nothing moving, whatever its Events', () => {
    expect(inFlight(neoset(atRest), plan())).toBe(false);
    expect(inFlight(neoset(atRest), plan({ actions: [event] }))).toBe(false);
    for (const phase of ['Idle', 'Paused', 'Canary', 'Failed'] as const) expect(inFlight(neoset({ ...atRest, phase }), plan()), phase).toBe(false);
  });

  it.each([
    ['a time-based wait', plan({ requeueAfter: 10 }), atRest],
    ['a write', plan({ actions: [deletePod] }), atRest],
    ['a rollout moving', plan(), { ...atRest, phase: 'RollingOut' as const }],
    ['a pod being updated (a canary step)', plan(), { ...atRest, phase: 'Canary' as const, currentUpdatePods: ['a-2'] }],
    ['a scale-up not done', plan(), { ...atRest, replicas: 2, readyReplicas: 2 }],
    ['a pod not Ready', plan(), { ...atRest, readyReplicas: 2 }],
    ['a scale-down not done', plan(), { ...atRest, replicas: 4 }],
    ['never decided on', plan(), undefined],
  ])('is true for %s', (_, p, status) => {
    expect(inFlight(neoset(status), p)).toBe(true);
  });

  it("reads the plan's status over the NeoSet's: what the run leaves", () => {
    expect(inFlight(neoset({ ...atRest, phase: 'RollingOut' }), plan({ status: atRest as Plan['status'] }))).toBe(false);
    expect(inFlight(neoset(atRest), plan({ status: { ...atRest, phase: 'RollingOut' } as Plan['status'] }))).toBe(true);
  });
});
