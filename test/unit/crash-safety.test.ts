// SPEC §2: "a process may be killed between any two writes; the next invocation must finish the job".
// At every decision of a scenario, the plan is cut after every possible prefix (a crash, or a 409
// that stops the applier; the status is then not written): from each of those states, decide()
// still reaches the same end, keeping the invariants on the way.
import { describe, expect, it } from 'vitest';
import { LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import { checkInvariants } from '../oracle/index.ts';
import { settled } from './helpers.ts';
import type { World } from './world.ts';

async function endState(w: World) {
  const rounds = await w.settle(300, (previous, current) => expect(checkInvariants({ ...current, previous })).toEqual([]));
  expect(rounds).toBeGreaterThanOrEqual(0);
  return {
    pods: [...w.pods.values()].map((p) => [p.metadata.name, p.metadata.labels?.[LABEL_REVISION_HASH], p.spec.containers[0].image]).sort(),
    claims: [...w.pvcs.keys()].sort(),
    phase: w.neoset.status?.phase,
    current: w.neoset.status?.currentRevision,
    update: w.neoset.status?.updateRevision,
  };
}

/** Drive `w` to its end; at each decision, cut its plan after each prefix in a fork and check the fork ends the same way. */
async function everyPrefixEndsTheSame(w: World): Promise<number> {
  const expected = await endState(w.fork());
  let tried = 0;
  for (let round = 0; round < 100; round++) {
    // How many writes the decision makes (Events and the status included): a crash may follow any of them.
    const probe = w.fork(); // a fork counts its own requests from zero
    await probe.reconcile();
    const writes = Object.entries(probe.api.requests).reduce((n, [verb, count]) => n + (verb === 'GET' ? 0 : count), 0);
    for (let k = 0; k < writes; k++) {
      const fork = w.fork();
      await fork.reconcile({ crashAfter: k });
      expect(await endState(fork)).toEqual(expected);
      tried++;
    }
    const r = await w.reconcile();
    w.kubeletSettle(1);
    if (r.plan.actions.length === 0 && !r.statusWritten) {
      if (r.plan.requeueAfter === null) break;
      w.advance(r.plan.requeueAfter);
    }
  }
  expect(await endState(w)).toEqual(expected);
  return tried;
}

describe('crash safety: any prefix of any plan', () => {
  it('in-place rollout with a batch of 2 and a grace period', async () => {
    const w = await settled({ replicas: 3, updateStrategy: { maxUnavailable: 2, inPlaceUpdateStrategy: { gracePeriodSeconds: 5 } } });
    w.setImage('nginx:v2');
    expect(await everyPrefixEndsTheSame(w)).toBeGreaterThan(10);
  });

  it('a rollout by recreation with claims, scaled up and down at once (Parallel)', async () => {
    const w = await settled({
      replicas: 3,
      podManagementPolicy: 'Parallel',
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: {} }],
      persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete', whenDeleted: 'Delete' },
      updateStrategy: { type: 'ReCreate', maxUnavailable: 2 },
    });
    w.edit((s) => {
      s.template.spec.containers[0].image = 'nginx:v2';
      s.replicas = 2;
    });
    expect(await everyPrefixEndsTheSame(w)).toBeGreaterThan(5);
    w.edit((s) => void (s.replicas = 4));
    expect(await everyPrefixEndsTheSame(w)).toBeGreaterThan(5);
  });

  it('a rollback of a stuck rollout, with history pruned', async () => {
    const w = await settled({ replicas: 3, revisionHistoryLimit: 0 });
    w.setImage('nginx:crash');
    await w.run(6, 0);
    w.rollbackTo(1);
    expect(await everyPrefixEndsTheSame(w)).toBeGreaterThan(5);
  });
});
