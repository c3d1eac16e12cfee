// Who may talk to the dashboard. It reads and writes the cluster with the user's credentials, so
// every request must prove it comes from whoever ran the command (SPEC §2.3):
// * a per-run secret: the token in the URL the command prints, swapped on the first page load for an
//   HttpOnly, SameSite=Strict cookie (the page then drops it from the address bar and history; no
//   Referer is ever sent), or sent as `Authorization: Bearer` by a script; without it, nothing — not
//   the page, not the state;
// * a request whose Host is not this server's is refused — a page of another site that rebinds its
//   DNS name to 127.0.0.1 (DNS rebinding) sends its own name as Host;
// * a write must come from this server's own page: an Origin naming this server and equal to the Host,
//   and a JSON body (a cross-origin page cannot send one without a CORS preflight, which is never
//   answered). The cookie alone would not do: every port of 127.0.0.1 is the same *site*, so a page on
//   another local port gets SameSite=Strict cookies sent along. Browsers send Origin with every POST;
//   a write without one (curl) is refused too — the CLI is there.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARDS = ['0.0.0.0', '::'];

/** A new run's secret: 256 random bits, URL-safe. */
export const newToken = () => randomBytes(32).toString('base64url');

/** Cookies are not scoped by port: the name carries it, so two dashboards on one host keep their own. */
export const cookieName = (port: number) => `neoset-dashboard-${port}`;

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

export const isLoopback = (address: string) => address === 'localhost' || address === '::1' || address.startsWith('127.');

export interface GuardOptions {
  isOwnHost: (host: string | undefined) => boolean;
  /** This run's secret (newToken). */
  token: string;
  /** The port listened on (known once listening, with --port 0). */
  port: () => number;
}

// Hashed first: timingSafeEqual wants equal lengths, and the length of a guess must not leak either.
const digest = (s: string) => createHash('sha256').update(s).digest();

/** The Origin of this server's own page: `http://` and a Host that names this server, as sent with it. */
function isOwnOrigin(origin: string | undefined, host: string, isOwnHost: GuardOptions['isOwnHost']): boolean {
  if (origin === undefined || !URL.canParse(origin)) return false;
  const url = new URL(origin);
  return url.protocol === 'http:' && url.origin === origin && isOwnHost(url.host) && origin === `http://${host}`;
}

export function guard({ isOwnHost, token, port }: GuardOptions): MiddlewareHandler {
  const secret = digest(token);
  const isToken = (given: string | undefined) => given !== undefined && timingSafeEqual(digest(given), secret);
  return async (c, next) => {
    const host = c.req.header('host');
    if (host === undefined || !isOwnHost(host)) return c.json({ error: `refused: Host ${JSON.stringify(host ?? '')} is not this dashboard` }, 403);
    const reading = c.req.method === 'GET' || c.req.method === 'HEAD';
    const inQuery = c.req.query('token');
    if (reading && inQuery !== undefined) {
      // Answered here, not redirected: a redirect reached by a link on another site (a chat, a ticket)
      // is a cross-site navigation, which a SameSite=Strict cookie is not sent with — the page would
      // be refused. The page's script takes the token out of the address bar (app.js).
      if (!isToken(inQuery)) return refuse(c);
      setCookie(c, cookieName(port()), token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      await next();
      c.res.headers.set('cache-control', 'no-store');
      return;
    }
    // Either will do (a stale cookie of an earlier run on this port does not spoil a good header).
    const bearer = /^Bearer (\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    if (!isToken(getCookie(c, cookieName(port()))) && !isToken(bearer)) return refuse(c);
    if (!reading) {
      const origin = c.req.header('origin');
      if (!isOwnOrigin(origin, host, isOwnHost)) return c.json({ error: `refused: a write from origin ${JSON.stringify(origin ?? '')}, not this dashboard's page` }, 403);
      if (!/^application\/json\b/i.test(c.req.header('content-type') ?? '')) return c.json({ error: 'refused: a write must send application/json' }, 415);
    }
    await next();
  };
}

const NO_TOKEN = "this dashboard's token is missing or wrong: open the URL `kubectl neoset dashboard` printed (it ends in ?token=...; every run prints a new one)";

/** 401: JSON for the API, a short page for anything a browser shows. */
function refuse(c: Context): Response {
  c.header('www-authenticate', 'Bearer realm="neoset-dashboard"');
  if (c.req.path.startsWith('/api/')) return c.json({ error: `refused: ${NO_TOKEN}` }, 401);
  return c.text(`NeoSet dashboard: ${NO_TOKEN}.\n`, 401);
}
