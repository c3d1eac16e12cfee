// §4.12 rollout notifications on the in-memory world: what the applier sends after each status write
// (shared/core/notifications.ts decides, shared/events/notify.ts sends), for canary → pause → promote →
// complete, a failed rollout → undo, pause/resume, a pause interrupted by a failure, a scale, and a crash
// before the status write.
import { describe, expect, it } from 'vitest';
import { NotificationData, type Notification } from '../../shared/api/notification.ts';
import { canaryCommand, type CanaryCommand } from '../../shared/core/canary/commands.ts';
import { decide } from '../../shared/core/decide.ts';
import { notifications } from '../../shared/core/notifications.ts';
import { notificationSink } from '../../shared/events/notify.ts';
import { registry } from '../../shared/metrics/registry.ts';
import { settled } from './helpers.ts';
import type { World } from './world.ts';

const STEPS = [{ partition: 3 }, { pause: {} }, { partition: 0 }];

async function tick(w: World, n = 1): Promise<void> {
  for (let i = 0; i < n; i++) {
    await w.reconcile();
    w.kubeletSettle(1);
    w.advance(1);
  }
}

async function until(w: World, done: (w: World) => boolean, max = 80): Promise<void> {
  for (let i = 0; i < max && !done(w); i++) await tick(w);
  if (!done(w)) throw new Error(`not reached: ${JSON.stringify(w.neoset.status?.phase)}`);
}

function command(w: World, c: CanaryCommand): void {
  const r = canaryCommand(w.neoset, c, w.now);
  if ('refused' in r) throw new Error(r.refused);
  w.mutateNeoSet((n) => void (n.status!.canary = r.canary));
}

/** What a subscriber keeps: one per id, in order of arrival. */
function deduplicated(sent: Notification[]): Notification[] {
  const seen = new Map<string, Notification>();
  for (const n of sent) if (!seen.has(n.id)) seen.set(n.id, n);
  return [...seen.values()];
}

const kinds = (ns: Notification[]) => ns.map((n) => (n.kind === 'step' ? `step ${n.data.step!.index}/${n.data.step!.total}` : n.kind));

/** A canary rolled out to its pause step, then aborted by hand, and its abort taken. */
async function abortedAtThePause(): Promise<World> {
  const w = await settled({ replicas: 5, image: 'app:v1', updateStrategy: { canary: { steps: STEPS } } });
  w.setImage('app:v2');
  await until(w, (x) => x.neoset.status!.phase === 'Paused');
  command(w, 'abort');
  await tick(w, 10);
  return w;
}

describe('rollout notifications (§4.12)', () => {
  it('canary → pause → promote → complete: each kind once, in order; ids and data as the contract says', async () => {
    const w = await settled({ replicas: 5, image: 'mysql:8.0', updateStrategy: { canary: { steps: STEPS } } });
    expect(w.notifications).toEqual([]); // creating a NeoSet is no rollout
    w.setImage('mysql:8.4');
    await until(w, (x) => x.neoset.status!.phase === 'Paused');
    await tick(w, 5);
    command(w, 'promote');
    await until(w, (x) => x.neoset.status!.phase === 'Completed');
    await tick(w, 5);
    expect(kinds(w.notifications)).toEqual(['started', 'step 0/3', 'step 1/3', 'paused', 'step 2/3', 'promoted', 'resumed', 'step 3/3', 'completed']);
    expect(deduplicated(w.notifications)).toHaveLength(w.notifications.length);
    for (const n of w.notifications) {
      expect(NotificationData.parse(n.data)).toEqual(n.data);
      expect(n).toMatchObject({ type: `io.neo.neoset.rollout.${n.kind}`, source: '/apis/neo.io/v1alpha1/namespaces/default/neosets/web', subject: 'web' });
      expect(n.id.startsWith('neoset-uid/')).toBe(true);
    }
    const uid = w.neoset.metadata.uid;
    const rev = w.neoset.status!.updateRevision!;
    const completed = w.notifications.at(-1)!;
    expect(completed.id).toBe(`${uid}/${rev}/2/completed`);
    expect(completed.data).toMatchObject({
      neoset: { name: 'web', namespace: 'default', uid },
      currentRevision: { name: rev, number: 2 },
      updateRevision: { name: rev, number: 2 },
      images: { current: 'mysql:8.4', update: 'mysql:8.4' },
      step: { index: 3, total: 3 },
      counts: { replicas: 5, updated: 5, ready: 5, available: 5 },
      phase: 'Completed',
    });
    expect(w.notifications[0].data).toMatchObject({ images: { current: 'mysql:8.0', update: 'mysql:8.4' }, updateRevision: { number: 2 }, currentRevision: { number: 1 } });
    // Mirrored as Events on the NeoSet, once per id (the dashboard and kubectl describe show them).
    const mirrored = w.eventReasons().filter((r) => r.startsWith('io.neo.neoset.rollout.'));
    expect(mirrored).toEqual(w.notifications.map((n) => n.type));
  });

  it('a failed rollout (bad image, short timeout) → undo: started, failed with the reason, rolledback, completed', async () => {
    const w = await settled({ replicas: 3, image: 'mysql:8.0', updateStrategy: { inPlaceUpdateStrategy: { timeoutSeconds: 30 } } });
    w.setImage('mysql:crash');
    await until(w, (x) => x.neoset.status!.phase === 'Failed', 120);
    await tick(w, 3);
    expect(w.rollbackTo(1)).toBe(true);
    await until(w, (x) => x.neoset.status!.phase === 'Completed');
    await tick(w, 3);
    expect(kinds(w.notifications)).toEqual(['started', 'failed', 'rolledback', 'completed']);
    const [started, failed, rolledback, completed] = w.notifications;
    expect(failed.data).toMatchObject({ reason: 'ProgressDeadlineExceeded', message: expect.stringContaining('web-2'), phase: 'Failed' });
    // The undo reuses revision 1 under the number 3: its completion is not revision 1's first one.
    expect(rolledback.data.updateRevision).toMatchObject({ name: started.data.currentRevision!.name, number: 3 });
    expect(completed.id).toMatch(/\/3\/completed$/);
  });

  it('spec.pause and back: paused, resumed; a scale: scaled once when every replica is Ready', async () => {
    const w = await settled({ replicas: 3, image: 'app:v1', updateStrategy: { maxUnavailable: 1 } });
    w.edit((s) => void (s.updateStrategy.pause = true));
    w.setImage('app:v2');
    await tick(w, 5);
    w.edit((s) => void (s.updateStrategy.pause = false));
    await until(w, (x) => x.neoset.status!.phase === 'Completed');
    w.edit((s) => void (s.replicas = 5));
    await tick(w, 10);
    w.edit((s) => void (s.replicas = 2));
    await tick(w, 10);
    expect(kinds(w.notifications)).toEqual(['started', 'paused', 'resumed', 'completed', 'scaled', 'scaled']);
    expect(w.notifications.slice(-2).map((n) => n.data.counts)).toEqual([
      { replicas: 5, updated: 5, ready: 5, available: 5 },
      { replicas: 2, updated: 2, ready: 2, available: 2 },
    ]);
  });

  it('an abort by hand: aborted (and failed, reason Aborted) once', async () => {
    const w = await abortedAtThePause();
    expect(kinds(w.notifications)).toEqual(['started', 'step 0/3', 'step 1/3', 'paused', 'failed', 'aborted']);
    expect(w.notifications.at(-1)!.data).toMatchObject({ reason: 'Aborted', message: expect.stringContaining('kubectl neoset rollout abort') });
  });

  it('an abort, then a retry: the canary is told to start again at step 0, with an id of its own', async () => {
    const w = await abortedAtThePause();
    command(w, 'retry');
    await until(w, (x) => x.neoset.status!.phase === 'Paused');
    const told = deduplicated(w.notifications);
    expect(kinds(told)).toEqual(['started', 'step 0/3', 'step 1/3', 'paused', 'failed', 'aborted', 'step 0/3', 'step 1/3', 'paused']);
    expect(new Set(told.map((n) => n.id)).size).toBe(told.length);
  });

  it('a pause interrupted by a failure: paused, failed, paused again when the late pod finishes — two pauses, two ids', async () => {
    const w = await settled({ replicas: 5, image: 'app:v1', updateStrategy: { inPlaceUpdateStrategy: { timeoutSeconds: 20 }, canary: { steps: STEPS } } });
    w.setImage('app:v2');
    await w.reconcile(); // step 0: pods 3 and 4 to update
    command(w, 'promote'); // step 1, the pause, with their updates still to finish
    await w.reconcile();
    await w.reconcile();
    expect(w.neoset.status!.phase).toBe('Paused');
    w.advance(21); // the kubelet is slow: the in-place deadline passes
    await w.reconcile();
    expect(w.neoset.status!.phase).toBe('Failed');
    w.kubeletSettle(4);
    await tick(w, 3);
    expect(w.neoset.status!.phase).toBe('Paused');
    const told = w.notifications.filter((n) => n.kind === 'paused' || n.kind === 'failed');
    expect(told.map((n) => n.id.split('/').slice(3).join('/'))).toEqual(['paused/2025-01-01T00:00:00Z', 'failed/2025-01-01T00:00:21Z', 'paused/2025-01-01T00:00:21Z']);
  });

  it('nothing is sent by a decider whose status write did not land (a crash before it, a lost race); the next one sends it, with the same id', async () => {
    const w = await settled({ replicas: 3, image: 'app:v1' });
    w.setImage('app:v2');
    const snapshot = w.snapshot();
    const first = await w.reconcile({ crashAfter: 0 });
    expect(first.statusWritten).toBe(false);
    expect(w.notifications).toEqual([]);
    // The same transition decided twice (a replay, a second instance): the same ids.
    const replayed = notifications(snapshot, decide(structuredClone(snapshot), new Date(w.now)));
    expect(replayed.map((n) => n.id)).toEqual(notifications(snapshot, decide(snapshot, new Date(w.now))).map((n) => n.id));
    await w.reconcile();
    expect(w.notifications.map((n) => n.id)).toEqual(replayed.map((n) => n.id));
  });
});

describe('the sender (shared/events/notify.ts)', () => {
  const n: Notification = {
    kind: 'completed',
    type: 'io.neo.neoset.rollout.completed',
    id: 'u/web-1/2/completed',
    source: '/apis/neo.io/v1alpha1/namespaces/default/neosets/web',
    subject: 'web',
    data: { neoset: { name: 'web', namespace: 'default', uid: 'u' }, images: {}, counts: { replicas: 1, updated: 1, ready: 1, available: 1 } },
  };
  const metric = async (result: string) => {
    const m = (await registry.getSingleMetric('neoset_notifications_total')!.get()).values.find((v) => v.labels.type === n.type && v.labels.result === result);
    return m?.value ?? 0;
  };

  it('binary mode: ce-* headers with the deterministic id, the data as JSON; counted sent', async () => {
    const got: { headers: Record<string, string>; body: string }[] = [];
    const before = await metric('sent');
    await notificationSink('http://sink', undefined, (async (_url: string, init: RequestInit) => {
      got.push({ headers: init.headers as Record<string, string>, body: init.body as string });
      return new Response(null, { status: 202 });
    }) as typeof fetch)([n]);
    expect(got[0].headers).toMatchObject({ 'ce-id': n.id, 'ce-type': n.type, 'ce-source': n.source, 'ce-subject': 'web', 'ce-specversion': '1.0' });
    expect(JSON.parse(got[0].body)).toEqual(n.data);
    expect((await metric('sent')) - before).toBe(1);
  });

  it('a sink that refuses, hangs or is unreachable: counted failed, reported, never thrown', async () => {
    const errors: string[] = [];
    const before = await metric('failed');
    const onError = (e: Error) => void errors.push(e.message);
    await notificationSink('http://sink', onError, (async () => new Response('no', { status: 503 })) as unknown as typeof fetch)([n]);
    await notificationSink('http://sink', onError, ((_u: string, init: RequestInit) => new Promise((_, reject) => init.signal!.addEventListener('abort', () => reject(new Error('timed out'))))) as unknown as typeof fetch, 50)([n]);
    await notificationSink('http://127.0.0.1:9', onError)([n]);
    expect(errors).toHaveLength(3);
    expect(errors[0]).toBe('http://sink answered 503');
    expect(errors[1]).toBe('timed out');
    expect((await metric('failed')) - before).toBe(3);
  });
});

describe('the dashboard shows them (bin/neoset/dashboard/view.ts)', () => {
  it('a notification mirrored as an Event of the NeoSet is marked with its kind among the Events', async () => {
    const { detail } = await import('../../bin/neoset/dashboard/view.ts');
    const { neoset } = await import('./plugin-fixtures.ts');
    const n = neoset({ status: { phase: 'Completed', currentRevision: 'mysql-rev1', updateRevision: 'mysql-rev1', replicas: 5, readyReplicas: 5, updatedReplicas: 5 } });
    const at = (reason: string, time: string, type = 'Normal') => ({
      metadata: { name: reason, namespace: n.metadata.namespace },
      involvedObject: { kind: 'NeoSet', name: n.metadata.name, namespace: n.metadata.namespace },
      type,
      reason,
      message: `${reason} message`,
      lastTimestamp: time,
    });
    const events = [at('io.neo.neoset.rollout.completed', '2025-01-02T00:00:03Z'), at('RolloutCompleted', '2025-01-02T00:00:02Z'), at('io.neo.neoset.rollout.failed', '2025-01-02T00:00:01Z', 'Warning')];
    const d = detail({ neosets: [n], pods: [], revisions: [], events }, n.metadata.namespace!, n.metadata.name)!;
    expect(d.events.map((e) => [e.reason, e.notification])).toEqual([
      ['io.neo.neoset.rollout.completed', 'completed'],
      ['RolloutCompleted', undefined],
      ['io.neo.neoset.rollout.failed', 'failed'],
    ]);
  });
});
