// A subscriber of NeoSet's rollout notifications (SPEC §4.12): it takes the CloudEvents a Trigger
// delivers (trigger.yaml: type prefix io.neo.neoset.rollout.), drops the redeliveries by id — the
// Broker delivers at least once, and a stateless sender cannot avoid sending an occurrence twice —
// and posts a chat-style webhook message, {"text": "db: rollout to mysql:8.4 completed (5/5)"}, to
// $WEBHOOK_URL (Slack's and Mattermost's incoming webhooks take that shape).
//
//   WEBHOOK_URL=https://hooks.example/T000/B000 PORT=8080 npx node examples/notifications/receiver.ts
//
// The ids seen are kept in memory (the last 10000): one replica of this receiver deduplicates; with
// several, keep them in a shared store. An id is kept only once its message is posted: a webhook that
// fails answers 502, so the Broker delivers the event again (its retry policy), and it is posted then.
import { serve } from '@hono/node-server';
import { HTTP } from 'cloudevents';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { NOTIFICATION_TYPE_PREFIX, NotificationData, NotificationKind, notificationText, type NotificationData as Data } from '../../shared/api/notification.ts';

const MAX_BODY = 64 * 1024;
const MAX_IDS = 10_000;

export interface ReceiverOptions {
  webhookUrl: string;
  fetch?: typeof fetch;
  log?: (line: string) => void;
}

export function createReceiver(opts: ReceiverOptions): Hono {
  const post = opts.fetch ?? fetch;
  const log = opts.log ?? (() => {});
  // Insertion-ordered: the oldest id goes first when the set is full.
  const seen = new Set<string>();
  const inFlight = new Map<string, Promise<boolean>>();
  const app = new Hono();
  app.get('/healthz', (c) => c.text('ok'));
  app.post('/', bodyLimit({ maxSize: MAX_BODY, onError: (c) => c.json({ error: 'body too large' }, 413) }), async (c) => {
    let id: string;
    let kind: NotificationKind;
    let data: Data;
    try {
      const event = HTTP.toEvent({ headers: Object.fromEntries(c.req.raw.headers.entries()), body: await c.req.text() });
      const single = Array.isArray(event) ? event[0] : event;
      if (!single.type.startsWith(NOTIFICATION_TYPE_PREFIX)) throw new Error(`type ${single.type} is not a NeoSet rollout notification`);
      kind = NotificationKind.parse(single.type.slice(NOTIFICATION_TYPE_PREFIX.length));
      const raw = typeof single.data === 'string' ? JSON.parse(single.data) : single.data;
      data = NotificationData.parse(raw);
      id = single.id;
    } catch (err) {
      // 4xx: not retried by the Broker (a malformed event stays malformed).
      return c.json({ error: `not a NeoSet rollout notification: ${(err as Error).message.slice(0, 200)}` }, 400);
    }
    if (seen.has(id)) return c.body(null, 202);
    // A redelivery while the first is being posted waits for it rather than posting again.
    let sending = inFlight.get(id);
    if (!sending) {
      const text = notificationText(kind, data);
      sending = post(opts.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text }), signal: AbortSignal.timeout(5000) })
        .then(async (res) => {
          await res.body?.cancel();
          if (!res.ok) throw new Error(`the webhook answered ${res.status}`);
          seen.add(id);
          if (seen.size > MAX_IDS) seen.delete(seen.values().next().value!);
          log(`posted ${id}: ${text}`);
          return true;
        })
        .catch((err: Error) => {
          log(`not posted ${id}: ${err.message}`);
          return false;
        })
        .finally(() => inFlight.delete(id));
      inFlight.set(id, sending);
    }
    return (await sending) ? c.body(null, 202) : c.json({ error: 'the webhook did not take the message; deliver again' }, 502);
  });
  return app;
}

if (import.meta.main) {
  const webhookUrl = process.env.WEBHOOK_URL;
  if (!webhookUrl) {
    process.stderr.write('WEBHOOK_URL is required (where the chat messages are posted)\n');
    process.exit(2);
  }
  const port = Number(process.env.PORT ?? 8080);
  const log = (line: string) => process.stdout.write(`[notifications] ${line}\n`);
  serve({ fetch: createReceiver({ webhookUrl, log }).fetch, port, hostname: process.env.HOST ?? '0.0.0.0' }, () => log(`listening on :${port}, posting to ${new URL(webhookUrl).host}`));
}
