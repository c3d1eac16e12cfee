// The hook owner as a small function (hono, the shape of NeoSet's own): it takes NeoSet's lifecycle
// CloudEvents (type io.neo.neoset.lifecycle.<state>, the pod's name as subject, its identity and state
// as data: name, namespace, uid, NeoSet and handler labels — never its env, annotations or spec) and
// answers an empty 2xx. The event is a hint: only the pod's name is taken from it — not the data, not
// the state as the last word — and owner.ts acts on the pod as it reads it. An event whose
// pod does not carry the state it claims (forged, or stale) is answered 2xx too and logged: a
// redelivery would not change the pod.
import { HTTP } from 'cloudevents';
import { Hono } from 'hono';
import type { Owner } from './owner.ts';

const PREFIX = 'io.neo.neoset.lifecycle.';

export function createHookApp(owner: Owner, log: (line: string) => void = () => {}): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => c.text('ok'));
  app.post('/', async (c) => {
    let type: string;
    let pod: string;
    try {
      const event = HTTP.toEvent({ headers: Object.fromEntries(c.req.raw.headers.entries()), body: await c.req.text() });
      const single = Array.isArray(event) ? event[0] : event;
      type = single.type;
      pod = single.subject ?? '';
    } catch (err) {
      return c.json({ error: `not a CloudEvent: ${(err as Error).message}` }, 400);
    }
    if (!type.startsWith(PREFIX) || !pod) return c.json({ error: `not a NeoSet lifecycle event: ${type}` }, 400);
    try {
      log(await owner.onLifecycle(type.slice(PREFIX.length), pod));
    } catch (err) {
      // A lost race (409) or a hiccup: answered 500, the sender logs it; the guard loop and the next
      // event retry, and NeoSet's timeoutSeconds is the safety net.
      log(`${pod}: ${(err as Error).message}`);
      return c.json({ error: (err as Error).message }, 500);
    }
    return c.body(null, 200);
  });
  return app;
}
