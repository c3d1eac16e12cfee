// Property test of claims that grow (SPEC §4.12): random clusters with volume claims, a CSI driver
// that binds, resizes, stalls at FileSystemResizePending or fails (test/unit/csi.ts), kubelet
// progress and failures, user edits (storage raised — and lowered, as admission would refuse but a
// NeoSet stored while it was down may hold —, pause, partition, budget, image, scale, strategy) and
// crashes part-way through a plan. After every step the oracle (test/oracle/, claim-growth.ts among
// its rules) holds between the snapshot a decision read and the state after; once the user stops
// and the driver is healthy, every claim of a pod in range reports what it requests, at least the
// template's storage, and the NeoSet has nothing left to do.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decide } from '../../shared/core/decide.ts';
import { checkInvariants, type Observation } from '../oracle/index.ts';
import { bindClaims, resizeClaim, resizingClaims } from './csi.ts';
import { describePods, isWorldCommand, worldStep } from './helpers.ts';
import { World, type WorldObservation } from './world.ts';

const SIZES = ['1Gi', '2Gi', '3Gi', '5Gi', '1536Mi'];
const ordinal = fc.nat(5);

const command = fc.oneof(
  { weight: 10, arbitrary: fc.constant({ k: 'tick' as const }) },
  { weight: 3, arbitrary: fc.constant({ k: 'reconcile' as const }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('crash' as const), after: fc.nat(3) }) },
  // The driver: binds what is unbound; one resizing claim moves on (or stalls, or fails).
  { weight: 6, arbitrary: fc.record({ k: fc.constant('csi' as const), pick: fc.nat(20), how: fc.constantFrom('done' as const, 'done' as const, 'FileSystemResizePending' as const, 'Resizing' as const, 'error' as const, 'infeasible' as const) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('unready' as const), pod: ordinal }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('kubelet' as const), pod: ordinal }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('time' as const), seconds: fc.integer({ min: 1, max: 30 }) }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('storage' as const), size: fc.constantFrom(...SIZES) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('pause' as const), on: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('partition' as const), n: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('maxUnavailable' as const), value: fc.constantFrom<number | string>(1, 2, '50%') }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('image' as const), image: fc.constantFrom('nginx:v1', 'nginx:v2', 'nginx:v3') }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('scale' as const), n: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('strategy' as const), type: fc.constantFrom('InPlaceIfPossible' as const, 'OnDelete' as const, 'ReCreate' as const) }) },
);
const setup = fc.record({
  replicas: fc.integer({ min: 1, max: 5 }),
  podManagementPolicy: fc.constantFrom('OrderedReady' as const, 'Parallel' as const),
  maxUnavailable: fc.constantFrom<number | string>(1, 2, '40%'),
  minReadySeconds: fc.constantFrom(0, 0, 10),
  templates: fc.constantFrom(1, 2),
});

type Command = typeof command extends fc.Arbitrary<infer T> ? T : never;
type Setup = typeof setup extends fc.Arbitrary<infer T> ? T : never;

const storageOf = (spec: unknown) => (spec as { resources?: { requests?: { storage?: string } } }).resources?.requests?.storage;

function build(s: Setup): World {
  const claim = (name: string) => ({ metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
  return new World({
    replicas: s.replicas,
    podManagementPolicy: s.podManagementPolicy,
    minReadySeconds: s.minReadySeconds,
    volumeClaimTemplates: s.templates === 1 ? [claim('data')] : [claim('data'), claim('logs')],
    updateStrategy: { maxUnavailable: s.maxUnavailable },
  });
}

async function step(w: World, c: Command, state: WorldObservation): Promise<void> {
  if (isWorldCommand(c)) return worldStep(w, c, state);
  switch (c.k) {
    case 'csi': {
      bindClaims(w);
      const resizing = resizingClaims(w);
      if (resizing.length > 0) resizeClaim(w, resizing[c.pick % resizing.length], c.how);
      return;
    }
    case 'storage':
      return w.edit((s) => {
        for (const t of s.volumeClaimTemplates) t.spec.resources = { requests: { storage: c.size } };
      });
    case 'pause':
      return w.edit((s) => void (s.updateStrategy.pause = c.on));
    case 'partition':
      return w.edit((s) => void (s.updateStrategy.partition = c.n));
    case 'maxUnavailable':
      return w.edit((s) => void (s.updateStrategy.maxUnavailable = c.value));
    case 'image':
      return w.setImage(c.image);
    case 'scale':
      return w.edit((s) => void (s.replicas = c.n));
    case 'strategy':
      return w.edit((s) => void (s.updateStrategy.type = c.type));
  }
}

function assertInvariants(w: World, previous: Observation, current: Observation, trail: string[]): void {
  const violations = checkInvariants({ ...current, previous });
  if (violations.length > 0) {
    const claims = [...w.pvcs.values()].map((p) => `${p.metadata.name} ${storageOf(p.spec)}/${(p.status as { capacity?: { storage?: string } } | undefined)?.capacity?.storage ?? '-'}`);
    throw new Error(`${JSON.stringify(violations, null, 1)}\nafter: ${trail.slice(-12).join(' | ')}\npods: ${describePods(w)}\nclaims: ${claims.join(', ')}`);
  }
}

describe('claims that grow under random driver progress, failures, user edits and crashes (§4.12)', () => {
  it('never shrink a claim, never grow one while paused or below the partition, never beyond the budget; converge once the user stops', async () => {
    await fc.assert(
      fc.asyncProperty(setup, fc.array(command, { minLength: 5, maxLength: 50, size: 'max' }), async (s, commands) => {
        const w = build(s);
        const trail: string[] = ['bootstrap'];
        const check = (previous: Observation, current: Observation) => assertInvariants(w, previous, current, trail);
        if ((await w.settle(200, check)) < 0) throw new Error(`bootstrap did not settle: ${describePods(w)}`);
        bindClaims(w);
        let previous = w.observation();
        for (const c of commands) {
          await step(w, c, previous);
          trail.push(JSON.stringify(c));
          const current = w.observation();
          check(previous, current);
          previous = current;
        }
        // The user's last word, and a healthy driver: every resize completes.
        w.edit((spec) => {
          spec.updateStrategy.pause = false;
          spec.updateStrategy.partition = 0;
          spec.updateStrategy.type = 'InPlaceIfPossible';
        });
        trail.push('final edit');
        let quiet = 0;
        previous = w.observation();
        for (let round = 0; round < 300 && quiet < 2; round++) {
          const r = await w.reconcile({ snapshot: previous });
          w.kubeletSettle(1);
          bindClaims(w);
          for (const name of resizingClaims(w)) resizeClaim(w, name, 'done');
          w.advance(r.plan.requeueAfter ?? 1);
          const current = w.observation();
          check(previous, current);
          previous = current;
          quiet = r.plan.actions.length === 0 && r.plan.status === null ? quiet + 1 : 0;
        }
        const plan = decide(w.snapshot(), new Date(w.now));
        expect(plan.actions, trail.join(' | ')).toEqual([]);
        const spec = w.neoset.spec;
        for (let i = 0; i < spec.replicas; i++) {
          for (const t of spec.volumeClaimTemplates) {
            const pvc = w.pvcs.get(`${t.metadata.name}-web-${i}`)!;
            const capacity = (pvc.status as { capacity?: { storage?: string } }).capacity?.storage;
            expect(capacity, `${pvc.metadata.name}: ${trail.join(' | ')}`).toBe(storageOf(pvc.spec));
          }
        }
        // True once it was shown (a claim fell short), else absent; without pods in range, no claim is
        // looked at: absent.
        const claimsResized = w.neoset.status?.conditions?.find((c) => c.type === 'ClaimsResized')?.status;
        expect([...(spec.replicas > 0 ? ['True'] : []), undefined], trail.join(' | ')).toContain(claimsResized);
      }),
      { numRuns: Number(process.env.NEOSET_RUNS ?? 300), seed: Number(process.env.NEOSET_SEED ?? 20261201), endOnFailure: false },
    );
  }, 300_000);
});
