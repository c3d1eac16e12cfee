// GET /api/stream: the page's live feed, as Server-Sent Events. Each change the watches report is
// sent as a whole new state, coalesced over COALESCE_MS (a rollout step changes several objects at
// once) and skipped when the page's state did not change (a pod's resourceVersion is not shown).
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Store } from './store.ts';

const COALESCE_MS = 100;
/** A comment line now and then, so that a proxy or the browser does not time the stream out. */
const KEEP_ALIVE_MS = 15_000;

/** `ended` is called once, when the stream is over (the client went away, or the server stops). */
export function stateStream(c: Context, store: Store, state: () => unknown, closing: AbortSignal, ended: () => void): Response {
  return streamSSE(c, async (stream) => {
    let last = '';
    let timer: NodeJS.Timeout | undefined;
    const send = async () => {
      // Called with `void` from the store's listener: nothing here may reject (SPEC §2.3).
      let data: string;
      try {
        data = JSON.stringify(state());
      } catch {
        return;
      }
      if (data === last || stream.aborted || stream.closed) return;
      last = data;
      await stream.writeSSE({ event: 'state', data }).catch(() => {});
    };
    const unsubscribe = store.subscribe(() => {
      timer ??= setTimeout(() => {
        timer = undefined;
        void send();
      }, COALESCE_MS);
    });
    const keepAlive = setInterval(() => void stream.write(': keep-alive\n\n').catch(() => {}), KEEP_ALIVE_MS);
    // Listening before the first write: a client gone during it would otherwise hold its slot forever.
    let stop = () => {};
    const over = new Promise<void>((resolve) => {
      stop = resolve;
      stream.onAbort(resolve);
      closing.addEventListener('abort', stop, { once: true });
      if (stream.aborted || closing.aborted) resolve();
    });
    try {
      await send();
      await over;
    } finally {
      closing.removeEventListener('abort', stop);
      unsubscribe();
      clearTimeout(timer);
      clearInterval(keepAlive);
      ended();
    }
  });
}
