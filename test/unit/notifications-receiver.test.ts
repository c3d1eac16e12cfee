// examples/notifications/receiver.ts through its hono app: a notification posted once per id as a chat
// line, redeliveries dropped, a failed webhook answered 502 (the Broker delivers again) and posted on
// the redelivery, anything else refused 4xx.
import { HTTP } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import type { Notification } from '../../shared/api/notification.ts';
import { notificationCloudEvent } from '../../shared/events/notify.ts';
import { createReceiver } from '../../examples/notifications/receiver.ts';

const completed: Notification = {
  kind: 'completed',
  type: 'io.neo.neoset.rollout.completed',
  id: 'uid-1/db-7c9f/4/completed',
  source: '/apis/neo.io/v1alpha1/namespaces/default/neosets/db',
  subject: 'db',
  data: {
    neoset: { name: 'db', namespace: 'default', uid: 'uid-1' },
    currentRevision: { name: 'db-7c9f', number: 4 },
    updateRevision: { name: 'db-7c9f', number: 4 },
    images: { current: 'mysql:8.4', update: 'mysql:8.4' },
    counts: { replicas: 5, updated: 5, ready: 5, available: 5 },
    phase: 'Completed',
  },
};

function request(n: Notification, structured = false): RequestInit {
  const m = structured ? HTTP.structured(notificationCloudEvent(n)) : HTTP.binary(notificationCloudEvent(n));
  return { method: 'POST', headers: m.headers as Record<string, string>, body: m.body as string };
}

function webhook(answers: number[] = []) {
  const posted: unknown[] = [];
  const fetchFn = (async (_url: string, init: RequestInit) => {
    posted.push(JSON.parse(init.body as string));
    return new Response(null, { status: answers.shift() ?? 200 });
  }) as typeof fetch;
  return { posted, fetchFn };
}

describe('examples/notifications/receiver.ts', () => {
  it('posts {"text": "db: rollout to mysql:8.4 completed (5/5)"} once, whatever the redeliveries (binary or structured)', async () => {
    const hook = webhook();
    const app = createReceiver({ webhookUrl: 'http://chat/hook', fetch: hook.fetchFn });
    const answers = await Promise.all([app.request('/', request(completed)), app.request('/', request(completed)), app.request('/', request(completed, true))]);
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202]);
    expect((await app.request('/', request(completed))).status).toBe(202);
    expect(hook.posted).toEqual([{ text: 'db: rollout to mysql:8.4 completed (5/5)' }]);
    const failed: Notification = { ...completed, kind: 'failed', type: 'io.neo.neoset.rollout.failed', id: 'uid-1/db-7c9f/4/failed/t', data: { ...completed.data, images: { current: 'mysql:8.0', update: 'mysql:9-crash' }, reason: 'ProgressDeadlineExceeded', message: 'pod db-4 not done in 30s' } };
    await app.request('/', request(failed));
    expect(hook.posted.at(-1)).toEqual({ text: 'db: rollout to mysql:9-crash failed: ProgressDeadlineExceeded (pod db-4 not done in 30s)' });
  });

  it('a webhook that fails: 502 (the Broker delivers again), posted on the redelivery, then dropped', async () => {
    const hook = webhook([500]);
    const app = createReceiver({ webhookUrl: 'http://chat/hook', fetch: hook.fetchFn });
    expect((await app.request('/', request(completed))).status).toBe(502);
    expect((await app.request('/', request(completed))).status).toBe(202);
    expect((await app.request('/', request(completed))).status).toBe(202);
    expect(hook.posted).toHaveLength(2);
  });

  it('refuses with 4xx what is not a rollout notification: another type, data off the schema, not a CloudEvent, too large', async () => {
    const hook = webhook();
    const app = createReceiver({ webhookUrl: 'http://chat/hook', fetch: hook.fetchFn });
    const other = { ...completed, type: 'io.neo.neoset.lifecycle.Updated' };
    expect((await app.request('/', request(other))).status).toBe(400);
    const bad = { ...completed, data: { ...completed.data, counts: { replicas: -1 } } } as unknown as Notification;
    expect((await app.request('/', request(bad))).status).toBe(400);
    expect((await app.request('/', { method: 'POST', body: 'hello' })).status).toBe(400);
    const huge = { ...completed, data: { ...completed.data, message: 'x'.repeat(70_000) } };
    expect((await app.request('/', request(huge))).status).toBe(413);
    expect(hook.posted).toEqual([]);
  });
});

describe("npm run dev's K_SINK (dev/hook-receiver.ts)", () => {
  it('prints a notification as its one line and does not hand it to the hook owner', async () => {
    const { startHookReceiver } = await import('../../dev/hook-receiver.ts');
    const lines: string[] = [];
    // A hook owner that is not there: a notification handed on would log 'not taken'.
    const r = await startHookReceiver({ port: 0, forwardTo: 'http://127.0.0.1:9/', log: (l) => void lines.push(l) });
    try {
      const res = await fetch(r.url, request(completed));
      expect(res.status).toBe(202);
      expect(lines).toEqual([`notification: db: rollout to mysql:8.4 completed (5/5) (id ${completed.id})`]);
    } finally {
      await r.stop();
    }
  });
});
