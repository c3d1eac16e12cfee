// `npm run dev`'s $K_SINK (SPEC §4.10): a local receiver of the lifecycle CloudEvents the reconcile
// function sends, as Knative's SinkBinding would point it at a Broker. It prints one line per event
// and, with --hook-owner URL, hands the event on unchanged to a hook owner (examples/hooks/). The
// rollout notifications of §4.12 come to the same K_SINK: printed as `notification: …`, not handed on.
import { serve, type ServerType } from '@hono/node-server';
import { HTTP } from 'cloudevents';
import { Hono } from 'hono';
import { NOTIFICATION_TYPE_PREFIX, NotificationData, NotificationKind, notificationText } from '../shared/api/notification.ts';

export interface HookReceiver {
  url: string;
  stop(): Promise<void>;
}

export async function startHookReceiver(opts: { port: number; forwardTo?: string; log: (line: string) => void }): Promise<HookReceiver> {
  const app = new Hono();
  app.post('/', async (c) => {
    const body = await c.req.text();
    const headers = Object.fromEntries(c.req.raw.headers.entries());
    let line: string;
    try {
      const event = HTTP.toEvent({ headers, body });
      const single = Array.isArray(event) ? event[0] : event;
      // §4.12: the rollout notifications come to the same K_SINK; printed, not handed to the hook owner.
      if (single.type.startsWith(NOTIFICATION_TYPE_PREFIX)) {
        const data = NotificationData.safeParse(single.data);
        const kind = NotificationKind.safeParse(single.type.slice(NOTIFICATION_TYPE_PREFIX.length));
        opts.log(`notification: ${data.success && kind.success ? notificationText(kind.data, data.data) : single.type} (id ${single.id})`);
        return c.body(null, 202);
      }
      const pod = single.data as { metadata?: { labels?: Record<string, string> } } | undefined;
      const labels = Object.entries(pod?.metadata?.labels ?? {})
        .filter(([k]) => !k.startsWith('neoset.neo.io/') && k !== 'controller-revision-hash' && k !== 'apps.kubernetes.io/pod-index')
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      line = `hook event: ${single.type} ${single.subject} (${single.source}) labels ${labels || '-'}`;
    } catch (err) {
      return c.json({ error: `not a CloudEvent: ${(err as Error).message}` }, 400);
    }
    opts.log(line);
    if (opts.forwardTo) {
      const res = await fetch(opts.forwardTo, { method: 'POST', headers, body }).catch((err: Error) => err);
      if (res instanceof Error || !res.ok) opts.log(`hook event not taken by ${opts.forwardTo}: ${res instanceof Error ? res.message : res.status}`);
    }
    return c.body(null, 202);
  });
  let server: ServerType;
  const port = await new Promise<number>((resolve) => {
    server = serve({ fetch: app.fetch, port: opts.port, hostname: '127.0.0.1' }, (info) => resolve(info.port));
  });
  return {
    url: `http://127.0.0.1:${port}/`,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
