// Who may talk to the dashboard. It writes to the cluster with the user's credentials, so:
// * a request whose Host is not this server's is refused — a page of another site that rebinds its
//   DNS name to 127.0.0.1 (DNS rebinding) sends its own name as Host;
// * a write must come from this server's own page: an Origin equal to its own, and a JSON body
//   (a cross-site page cannot send one without a CORS preflight, which is never answered).
//   Browsers send Origin with every POST; a write without one (curl) is refused too — the CLI is there.
import { isIP } from 'node:net';
import type { MiddlewareHandler } from 'hono';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARDS = ['0.0.0.0', '::'];

/** Whether `host` (a Host header: name[:port]) names this server, listening on `address`:`port()`. */
export function ownHost(address: string, port: () => number): (host: string | undefined) => boolean {
  const bracket = (a: string) => (isIP(a) === 6 ? `[${a}]` : a);
  return (host) => {
    const m = host === undefined ? null : /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host.toLowerCase());
    if (!m || Number(m[2] ?? 80) !== port()) return false;
    const name = m[1];
    if (LOOPBACK_NAMES.includes(name)) return isLoopback(address) || WILDCARDS.includes(address);
    if (name === bracket(address)) return true;
    // Listening on every address: reached by any of the machine's IP addresses, never by a DNS name.
    return WILDCARDS.includes(address) && isIP(name.replace(/^\[|\]$/g, '')) !== 0;
  };
}

const isLoopback = (address: string) => address === 'localhost' || address === '::1' || address.startsWith('127.');

export function guard(isOwnHost: (host: string | undefined) => boolean): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header('host');
    if (!isOwnHost(host)) return c.json({ error: `refused: Host ${JSON.stringify(host ?? '')} is not this dashboard` }, 403);
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const origin = c.req.header('origin');
      if (origin !== `http://${host}`) return c.json({ error: `refused: a write from origin ${JSON.stringify(origin ?? '')}, not this dashboard's page` }, 403);
      if (!/^application\/json\b/i.test(c.req.header('content-type') ?? '')) return c.json({ error: 'refused: a write must send application/json' }, 415);
    }
    await next();
  };
}
