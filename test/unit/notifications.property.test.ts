// §4.12 property: over random rollouts (images, rollbacks, pause, partition, canary commands, scale,
// crashes part-way through a plan, a kubelet that crashloops a bad image, time), every decision's
// status write yields at most one notification per kind; replaying the same transition yields the
// same ids; a decision whose status write did not land sends nothing; no id is sent twice; a
// revision (name and number) starts, rolls back and completes at most once; every data parses.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NotificationData } from '../../shared/api/notification.ts';
import { canaryCommand } from '../../shared/core/canary/commands.ts';
import { decide } from '../../shared/core/decide.ts';
import { notifications } from '../../shared/core/notifications.ts';
import { readSnapshot } from '../../shared/k8s/snapshot-reader.ts';
import { NAMESPACE, World } from './world.ts';

const STEPS = [{ partition: 2 }, { pause: {} }, { partition: '50%' }, { pause: { duration: '5s' } }, { partition: 0 }];

const command = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ k: 'tick' as const }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('crash' as const), after: fc.nat(3) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('image' as const), image: fc.constantFrom('app:v1', 'app:v2', 'app:v3', 'app:crash') }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('rollback' as const), to: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('pause' as const), on: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('partition' as const), n: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('scale' as const), n: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('canary' as const), c: fc.constantFrom('promote' as const, 'promote-full' as const, 'abort' as const, 'retry' as const) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('time' as const), s: fc.integer({ min: 1, max: 40 }) }) },
);

type Command = typeof command extends fc.Arbitrary<infer C> ? C : never;

/** One random rollout, checked at every decision and over the run (the header's properties). */
async function rollout(canary: boolean, commands: Command[]): Promise<void> {
  const w = new World({ replicas: 3, image: 'app:v1', updateStrategy: { maxUnavailable: 2, inPlaceUpdateStrategy: { timeoutSeconds: 20 }, ...(canary ? { canary: { steps: STEPS } } : {}) } });
  const reconcile = async (crashAfter?: number) => {
    const snapshot = (await readSnapshot(w.api.client, NAMESPACE, w.name))!;
    const sent = w.notifications.length;
    await w.reconcile({ snapshot, ...(crashAfter !== undefined ? { crashAfter } : {}) });
    const batch = w.notifications.slice(sent);
    // The NeoSet written since the read: only the status write of this decision can have done it.
    const statusWritten = w.neoset.metadata.resourceVersion !== snapshot.neoset.metadata.resourceVersion;
    if (!statusWritten) expect(batch).toEqual([]);
    const byKind = batch.map((n) => n.kind);
    expect(new Set(byKind).size, byKind.join(',')).toBe(byKind.length);
    // The same transition decided again (a replay, another instance with the same read): the same ids.
    const again = notifications(structuredClone(snapshot), decide(structuredClone(snapshot), new Date(w.now)));
    if (statusWritten) expect(batch.map((n) => n.id)).toEqual(again.map((n) => n.id));
    for (const n of batch) expect(NotificationData.safeParse(n.data).success).toBe(true);
  };
  for (const c of commands) {
    switch (c.k) {
      case 'tick':
        await reconcile();
        w.kubeletSettle(1);
        w.advance(1);
        break;
      case 'crash':
        await reconcile(c.after);
        break;
      case 'image':
        w.setImage(c.image);
        break;
      case 'rollback':
        w.rollbackTo(c.to);
        break;
      case 'pause':
        w.edit((s) => void (s.updateStrategy.pause = c.on));
        break;
      case 'partition':
        if (!canary) w.edit((s) => void (s.updateStrategy.partition = c.n));
        break;
      case 'scale':
        w.edit((s) => void (s.replicas = c.n));
        break;
      case 'canary': {
        if (!w.neoset.status) break;
        const r = canaryCommand(w.neoset, c.c, w.now);
        if (!('refused' in r)) w.mutateNeoSet((n) => void (n.status!.canary = r.canary));
        break;
      }
      case 'time':
        w.advance(c.s);
        break;
    }
  }
  // One decider at a time here: an occurrence is sent once, by the write that made it true (a
  // later write that still shows it sends nothing again).
  const ids = w.notifications.map((n) => n.id);
  expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  const seen = new Map<string, string>();
  for (const n of w.notifications) if (!seen.has(n.id)) seen.set(n.id, n.kind);
  for (const kind of ['started', 'rolledback', 'completed']) {
    const revisions = [...seen.entries()].filter(([, k]) => k === kind).map(([id]) => id.split('/').slice(1, 3).join('/'));
    expect(new Set(revisions).size, `${kind}: ${revisions.join(' ')}`).toBe(revisions.length);
  }
}

describe('rollout notifications, property (§4.12)', () => {
  it('at most one per kind per status write, same ids on replay, none without the write, once per revision after dedup', async () => {
    await fc.assert(fc.asyncProperty(fc.boolean(), fc.array(command, { minLength: 5, maxLength: 60 }), rollout), { numRuns: 150 });
  }, 120_000);

  // Counter-examples the random run found (~1 run in 3,000), kept as fixed cases: the first is CI's
  // (seed 1950923131, path 76:7:7:11:25:24:22:22:22:23), the second a 3,000-run search's. Paused, then
  // Failed (an in-place deadline passed / an abort), then Paused again (the late pod finished / a
  // retry), the Paused condition True throughout: the second pause was sent under the first one's id
  // (taken from the Paused condition's transition time alone), a duplicate a subscriber would drop.
  it('paused -> failed (in-place deadline) -> paused again: a new id, not the first pause repeated', async () => {
    const tick = { k: 'tick' } as const;
    await rollout(true, [tick, tick, tick, tick, { k: 'image', image: 'app:v2' }, tick, { k: 'canary', c: 'promote' }, tick, tick, { k: 'time', s: 19 }, { k: 'crash', after: 0 }, tick, tick]);
  });

  it('paused -> failed (abort) -> paused again (retry, still spec.pause): a new id', async () => {
    const tick = { k: 'tick' } as const;
    await rollout(true, [{ k: 'pause', on: true }, tick, { k: 'image', image: 'app:v2' }, tick, { k: 'canary', c: 'abort' }, tick, { k: 'canary', c: 'promote' }, { k: 'canary', c: 'retry' }, tick, tick, tick]);
  });
});
