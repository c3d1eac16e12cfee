// Who may send events to reconcile and readiness (SPEC §2.3): with Knative Eventing's
// `authentication-oidc` feature, each delivery carries `Authorization: Bearer <JWT>`, a ServiceAccount
// token the sender (the Broker filter, for a Trigger's subscriber; a source, for its sink) requested
// by TokenRequest for its own OIDC ServiceAccount, with the subscriber's audience. The check asks the
// API server (a TokenReview with that audience: issuer, signature, expiry and audience, the API
// server's way) and then whether the ServiceAccount is one of Knative's senders: any pod can mount a
// token of its own ServiceAccount for any audience, so the audience alone proves nothing.
//
// Two modes, no "validate when present": a forger would simply send no token. To move over, turn on
// Knative's feature first (tokens are sent, and ignored here), then NEOSET_OIDC=required.
import { createHash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import { ConfigError } from '../config-error.ts';
import type { KubeClient } from '../k8s/client.ts';
import { paths } from '../k8s/paths.ts';
import { registry } from '../metrics/registry.ts';

/** Knative's senders: the Broker's data plane, and the Triggers' and sources' OIDC ServiceAccounts (created in their namespace). */
export const DEFAULT_SUBJECTS = ['system:serviceaccount:knative-eventing:*', 'system:serviceaccount:neoset-system:*'];

export interface OidcConfig {
  /** The function's audience: what its Triggers name in spec.subscriber.audience. */
  audience: string;
  /** ServiceAccount usernames allowed to call, `system:serviceaccount:<namespace>:<name>` or `...:<namespace>:*`. */
  subjects: string[];
}

const SUBJECT = /^system:serviceaccount:[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?:(\*|[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?)$/;

/**
 * NEOSET_OIDC = off (default) | required; NEOSET_OIDC_AUDIENCE (required with it);
 * NEOSET_OIDC_SUBJECTS, comma-separated (default DEFAULT_SUBJECTS). Null when off. Throws ConfigError.
 */
export function oidcFromEnv(env: NodeJS.ProcessEnv): OidcConfig | null {
  const mode = env.NEOSET_OIDC?.trim() || 'off';
  if (mode !== 'off' && mode !== 'required') throw new ConfigError(`NEOSET_OIDC=${JSON.stringify(mode)}: expected off or required`);
  if (mode === 'off') return null;
  const audience = env.NEOSET_OIDC_AUDIENCE?.trim() ?? '';
  if (!audience || audience.length > 1024 || /[\s,]/.test(audience)) {
    throw new ConfigError(`NEOSET_OIDC_AUDIENCE=${JSON.stringify(audience)}: NEOSET_OIDC=required needs the function's audience (its Triggers' spec.subscriber.audience)`);
  }
  const raw = env.NEOSET_OIDC_SUBJECTS?.trim();
  const subjects = raw ? raw.split(',').map((s) => s.trim()).filter(Boolean) : DEFAULT_SUBJECTS;
  const bad = subjects.filter((s) => !SUBJECT.test(s));
  if (bad.length > 0 || subjects.length === 0) {
    throw new ConfigError(`NEOSET_OIDC_SUBJECTS: ${JSON.stringify(bad.length ? bad : raw)} — expected system:serviceaccount:<namespace>:<name> or system:serviceaccount:<namespace>:*, comma-separated`);
  }
  return { audience, subjects };
}

export const callerChecks = new Counter({
  name: 'neoset_caller_checks_total',
  help: 'Event requests checked for a Knative OIDC token, by result (accepted, cached, missing, invalid, forbidden, unavailable).',
  labelNames: ['result'] as const,
  registers: [registry],
});

/** A reviewed token is trusted this long at most (and never past its exp): a revoked ServiceAccount is refused within a minute. */
export const REVIEW_TTL_MS = 60_000;
/** Tokens remembered: each entry is a 64-character hash and a username. */
export const REVIEW_CACHE_MAX = 1024;
/** Distinct tokens under review at once; past it, 503 (the Broker redelivers), so forged tokens cannot flood the API server. */
export const REVIEWS_IN_FLIGHT_MAX = 16;
/** Longer than any ServiceAccount token (about 1 KiB): refused unread. */
const TOKEN_MAX = 16 * 1024;

interface Reviewed {
  username: string;
  expiresAt: number;
}

type Review = { ok: true; reviewed: Reviewed } | { ok: false; status: 401 | 503; reason: string };

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string };
  audiences?: string[];
  error?: string;
}

const allowed = (subjects: string[], username: string) =>
  subjects.some((s) => (s.endsWith(':*') ? username.startsWith(s.slice(0, -1)) && !username.slice(s.length - 1).includes(':') : s === username));

/** The token's claims, unverified: only to refuse, without asking the API server, what cannot pass. */
function claimsOf(token: string): { aud: string[]; exp?: number; sub?: string } | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const c = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as { aud?: unknown; exp?: unknown; sub?: unknown };
    const aud = typeof c.aud === 'string' ? [c.aud] : Array.isArray(c.aud) ? c.aud.filter((a): a is string => typeof a === 'string') : [];
    return { aud, exp: typeof c.exp === 'number' ? c.exp : undefined, sub: typeof c.sub === 'string' ? c.sub : undefined };
  } catch {
    return null;
  }
}

export interface CallerCheckOptions {
  logger: Logger;
  now?: () => number;
}

/**
 * The middleware for POST /: 401 (WWW-Authenticate: Bearer) without a valid token for the audience,
 * 403 for a valid one of another ServiceAccount, 503 when the API server cannot review it.
 */
export function callerCheck(client: KubeClient, config: OidcConfig, opts: CallerCheckOptions): MiddlewareHandler {
  const now = opts.now ?? (() => Date.now());
  const log = opts.logger;
  // Positive reviews by token hash: a pure cache (a miss costs one TokenReview, nothing else), per app
  // instance, bounded in entries; failures are never kept. Concurrent requests with one token share
  // one review (a burst of deliveries from a Trigger carries the same token).
  const reviewed = new Map<string, Reviewed>();
  const pending = new Map<string, Promise<Review>>();

  const refuse = (c: Context, status: 401 | 403 | 503, result: string, error: string) => {
    callerChecks.inc({ result });
    log.warn({ outcome: 'refused', status, caller: result, error }, 'event');
    if (status === 401) c.header('WWW-Authenticate', `Bearer realm="${config.audience}"${result === 'invalid' ? ', error="invalid_token"' : ''}`);
    if (status === 503) c.header('Retry-After', '1');
    return c.json({ error }, status);
  };

  async function review(token: string, exp: number | undefined): Promise<Review> {
    let status: TokenReviewStatus | undefined;
    try {
      const answer = await client.request<{ status?: TokenReviewStatus }>('POST', paths.tokenReviews, {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: [config.audience] } },
      });
      status = answer?.status;
    } catch (err) {
      // Unreachable, overloaded, or our own credentials refused (no `create tokenreviews`): nothing is
      // known of the caller, and a redelivery may find the API server back.
      log.error({ err: (err as Error).message }, 'TokenReview failed');
      return { ok: false, status: 503, reason: 'the token cannot be reviewed now: retry' };
    }
    if (status?.authenticated !== true || !status.audiences?.includes(config.audience) || !status.user?.username) {
      log.info({ error: status?.error?.slice(0, 300) }, 'token refused by TokenReview');
      return { ok: false, status: 401, reason: `not a valid token for audience ${config.audience}` };
    }
    const expiresAt = Math.min(now() + REVIEW_TTL_MS, exp === undefined ? Infinity : exp * 1000);
    return { ok: true, reviewed: { username: status.user.username, expiresAt } };
  }

  return async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const m = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i.exec(header);
    if (!m || m[1].length > TOKEN_MAX) {
      return refuse(c, 401, 'missing', `a bearer token for audience ${config.audience} is required (Knative's authentication-oidc)`);
    }
    const token = m[1];
    const key = createHash('sha256').update(token).digest('hex');
    let entry = reviewed.get(key);
    if (entry && entry.expiresAt <= now()) {
      reviewed.delete(key);
      entry = undefined;
    }
    let result = 'cached';
    if (!entry) {
      const claims = claimsOf(token);
      if (!claims || !claims.aud.includes(config.audience) || (claims.exp !== undefined && claims.exp * 1000 <= now())) {
        return refuse(c, 401, 'invalid', `not a valid token for audience ${config.audience}`);
      }
      if (claims.sub !== undefined && !allowed(config.subjects, claims.sub)) {
        return refuse(c, 403, 'forbidden', `${claims.sub} may not send events here (NEOSET_OIDC_SUBJECTS)`);
      }
      let answer = pending.get(key);
      if (!answer) {
        if (pending.size >= REVIEWS_IN_FLIGHT_MAX) return refuse(c, 503, 'unavailable', 'too many tokens under review: retry');
        answer = review(token, claims.exp).finally(() => pending.delete(key));
        pending.set(key, answer);
      }
      const r = await answer;
      if (!r.ok) return refuse(c, r.status, r.status === 401 ? 'invalid' : 'unavailable', r.reason);
      entry = r.reviewed;
      if (!reviewed.has(key)) {
        if (reviewed.size >= REVIEW_CACHE_MAX) reviewed.delete(reviewed.keys().next().value!);
        reviewed.set(key, entry);
      }
      result = 'accepted';
    }
    if (!allowed(config.subjects, entry.username)) {
      return refuse(c, 403, 'forbidden', `${entry.username} may not send events here (NEOSET_OIDC_SUBJECTS)`);
    }
    callerChecks.inc({ result });
    await next();
  };
}
