// The event functions' caller check (SPEC §2.3, shared/http/oidc.ts) through the hono app, with a
// client that answers TokenReviews as the API server would for the tokens it was told about. The
// same check against the real API server, with tokens from `kubectl create token`, is in
// test/integration/oidc.test.ts.
import { Hono } from 'hono';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../shared/config-error.ts';
import { guardEvents } from '../../shared/http/event-app.ts';
import { DEFAULT_SUBJECTS, REVIEW_CACHE_MAX, REVIEW_TTL_MS, REVIEWS_IN_FLIGHT_MAX, oidcFromEnv, type OidcConfig } from '../../shared/http/oidc.ts';
import { ApiError, type KubeClient } from '../../shared/k8s/client.ts';
import { silent } from './admission-review.ts';

const AUDIENCE = 'neoset-readiness';
const SENDER = 'system:serviceaccount:neoset-system:neoset-pods-trigger-oidc';
const CONFIG: OidcConfig = { audience: AUDIENCE, subjects: DEFAULT_SUBJECTS };
const T0 = Date.parse('2025-01-01T00:00:00Z');

/** An unsigned JWT with these claims: the fake API server below decides whether it is genuine. */
const jwt = (claims: Record<string, unknown>) =>
  ['{"alg":"RS256"}', JSON.stringify({ aud: [AUDIENCE], sub: SENDER, exp: T0 / 1000 + 3600, ...claims })].map((p) => Buffer.from(p).toString('base64url')).join('.') + '.c2ln';

// The clock alone is faked (the check reads Date.now); timers run for real.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
});
afterEach(() => vi.useRealTimers());

function world(opts: { genuine?: Set<string>; fail?: () => Error | null; hold?: Promise<void> } = {}) {
  let now = T0;
  const reviews: string[] = [];
  let handled = 0;
  const client: KubeClient = {
    async request<T>(verb: string, path: string, o?: { body?: unknown }): Promise<T> {
      expect([verb, path]).toEqual(['POST', '/apis/authentication.k8s.io/v1/tokenreviews']);
      const spec = (o?.body as { spec: { token: string; audiences: string[] } }).spec;
      reviews.push(spec.token);
      await opts.hold;
      const failure = opts.fail?.();
      if (failure) throw failure;
      const claims = JSON.parse(Buffer.from(spec.token.split('.')[1], 'base64url').toString()) as { aud: string[]; sub: string };
      const ok = (opts.genuine?.has(spec.token) ?? true) && claims.aud.some((a) => spec.audiences.includes(a));
      return { status: ok ? { authenticated: true, user: { username: claims.sub }, audiences: spec.audiences } : { authenticated: false, error: 'invalid bearer token' } } as T;
    },
  };
  const inner = new Hono();
  inner.post('/', (c) => {
    handled++;
    return c.body(null, 200);
  });
  inner.get('/healthz', (c) => c.json({ status: 'ok' }));
  const app = guardEvents(inner, CONFIG, client, silent);
  const post = (token?: string, body?: BodyInit) =>
    app.request('/', { method: 'POST', headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, body: body ?? '{}', duplex: 'half' } as RequestInit);
  return { app, post, reviews, handled: () => handled, advance: (ms: number) => vi.setSystemTime((now += ms)) };
}

describe('caller check (NEOSET_OIDC=required)', () => {
  it('answers 401 with WWW-Authenticate: Bearer to a request without a token, without reading its body or asking the API server', async () => {
    const w = world();
    let pulled = 0;
    const body = new ReadableStream({ pull: (c) => void (pulled++, c.enqueue(new Uint8Array(1024))) }, { highWaterMark: 0 });
    for (const res of [await w.post(undefined, body), await w.post('')]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(`Bearer realm="${AUDIENCE}"`);
      expect(await res.json()).toEqual({ error: `a bearer token for audience ${AUDIENCE} is required (Knative's authentication-oidc)` });
    }
    expect([pulled, w.reviews.length, w.handled()]).toEqual([0, 0, 0]);
    expect((await w.app.request('/healthz')).status).toBe(200); // the platform's probes are not events
  });

  it('refuses without a TokenReview what cannot pass: not a JWT, another audience, expired, a ServiceAccount not allowed', async () => {
    const w = world();
    const cases: [string, number][] = [
      ['not-a-jwt', 401],
      [jwt({ aud: ['other'] }), 401],
      [jwt({ exp: T0 / 1000 - 1 }), 401],
      [jwt({ sub: 'system:serviceaccount:tenant:default' }), 403],
      [jwt({ sub: 'system:serviceaccount:neoset-system-evil:x' }), 403],
    ];
    for (const [token, status] of cases) expect((await w.post(token)).status, token).toBe(status);
    expect(w.reviews).toEqual([]);
  });

  it('answers 401 when the TokenReview does not authenticate the token, and asks again next time (failures are not kept)', async () => {
    const w = world({ genuine: new Set() });
    const forged = jwt({});
    const first = await w.post(forged);
    expect(first.status).toBe(401);
    expect(first.headers.get('www-authenticate')).toBe(`Bearer realm="${AUDIENCE}", error="invalid_token"`);
    expect((await w.post(forged)).status).toBe(401);
    expect(w.reviews).toHaveLength(2);
    expect(w.handled()).toBe(0);
  });

  it('handles a genuine token, remembers the review for at most REVIEW_TTL_MS and never past the token exp', async () => {
    const w = world();
    const token = jwt({});
    expect((await w.post(token)).status).toBe(200);
    expect((await w.post(token)).status).toBe(200);
    expect(w.reviews).toHaveLength(1);
    w.advance(REVIEW_TTL_MS + 1);
    expect((await w.post(token)).status).toBe(200);
    expect(w.reviews).toHaveLength(2);

    const shortLived = jwt({ exp: T0 / 1000 + 70 }); // 10 s left after the minute above
    expect((await w.post(shortLived)).status).toBe(200);
    w.advance(11_000);
    expect((await w.post(shortLived)).status).toBe(401); // expired: refused from its claims, unreviewed
    expect(w.reviews).toHaveLength(3);
    expect(w.handled()).toBe(4);
  });

  it('answers 503 with Retry-After when the API server cannot review (unreachable, 429, 5xx, our RBAC), and retries the review next time', async () => {
    let failure: Error | null = null;
    const w = world({ fail: () => failure });
    const token = jwt({});
    for (const err of [
      new ApiError('POST', '/apis/authentication.k8s.io/v1/tokenreviews', 0, 'ConnectionFailed', 'connect ECONNREFUSED 127.0.0.1:6443'),
      new ApiError('POST', '/apis/authentication.k8s.io/v1/tokenreviews', 429, 'TooManyRequests', 'slow down'),
      new ApiError('POST', '/apis/authentication.k8s.io/v1/tokenreviews', 403, 'Forbidden', 'cannot create tokenreviews'),
    ]) {
      failure = err;
      const res = await w.post(token);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
    }
    failure = null;
    expect((await w.post(token)).status).toBe(200);
    expect(w.reviews).toHaveLength(4);
  });

  it('reviews a token once for concurrent requests, and bounds the distinct tokens under review (503 past it)', async () => {
    let release!: () => void;
    const w = world({ hold: new Promise((r) => (release = r)) });
    const shared = Array.from({ length: 10 }, () => w.post(jwt({})));
    const distinct = Array.from({ length: REVIEWS_IN_FLIGHT_MAX - 1 }, (_, i) => w.post(jwt({ jti: String(i) })));
    await new Promise((r) => setTimeout(r, 50));
    const over = await w.post(jwt({ jti: 'one too many' }));
    expect(over.status).toBe(503);
    release();
    expect((await Promise.all([...shared, ...distinct])).map((r) => r.status)).toEqual(Array(10 + REVIEWS_IN_FLIGHT_MAX - 1).fill(200));
    expect(w.reviews).toHaveLength(REVIEWS_IN_FLIGHT_MAX);
  });

  it(`keeps at most REVIEW_CACHE_MAX (${REVIEW_CACHE_MAX}) reviews, the oldest going first`, async () => {
    const w = world();
    const tokens = Array.from({ length: REVIEW_CACHE_MAX + 1 }, (_, i) => jwt({ jti: String(i) }));
    for (const t of tokens) expect((await w.post(t)).status).toBe(200);
    expect((await w.post(tokens.at(-1)!)).status).toBe(200);
    expect(w.reviews).toHaveLength(REVIEW_CACHE_MAX + 1);
    expect((await w.post(tokens[0])).status).toBe(200);
    expect(w.reviews).toHaveLength(REVIEW_CACHE_MAX + 2);
  });
});

describe('oidcFromEnv', () => {
  it('is off by default, and required needs an audience; the subjects default to Knative\'s and NeoSet\'s namespaces', () => {
    expect(oidcFromEnv({})).toBeNull();
    expect(oidcFromEnv({ NEOSET_OIDC: 'off', NEOSET_OIDC_AUDIENCE: 'x' })).toBeNull();
    expect(oidcFromEnv({ NEOSET_OIDC: 'required', NEOSET_OIDC_AUDIENCE: AUDIENCE })).toEqual({ audience: AUDIENCE, subjects: DEFAULT_SUBJECTS });
    expect(
      oidcFromEnv({ NEOSET_OIDC: 'required', NEOSET_OIDC_AUDIENCE: AUDIENCE, NEOSET_OIDC_SUBJECTS: 'system:serviceaccount:ops:*, system:serviceaccount:knative-eventing:pingsource-mt-adapter' }),
    ).toEqual({ audience: AUDIENCE, subjects: ['system:serviceaccount:ops:*', 'system:serviceaccount:knative-eventing:pingsource-mt-adapter'] });
  });

  it('refuses a bad setting with a ConfigError naming the variable (the process exits 2)', () => {
    const bad: [NodeJS.ProcessEnv, RegExp][] = [
      [{ NEOSET_OIDC: 'on' }, /^NEOSET_OIDC="on": expected off or required/],
      [{ NEOSET_OIDC: 'required' }, /^NEOSET_OIDC_AUDIENCE=""/],
      [{ NEOSET_OIDC: 'required', NEOSET_OIDC_AUDIENCE: 'a b' }, /^NEOSET_OIDC_AUDIENCE="a b"/],
      [{ NEOSET_OIDC: 'required', NEOSET_OIDC_AUDIENCE: AUDIENCE, NEOSET_OIDC_SUBJECTS: 'alice' }, /^NEOSET_OIDC_SUBJECTS: \["alice"\]/],
      [{ NEOSET_OIDC: 'required', NEOSET_OIDC_AUDIENCE: AUDIENCE, NEOSET_OIDC_SUBJECTS: 'system:serviceaccount:*:*' }, /^NEOSET_OIDC_SUBJECTS/],
    ];
    for (const [env, message] of bad) {
      expect(() => oidcFromEnv(env)).toThrow(ConfigError);
      expect(() => oidcFromEnv(env)).toThrow(message);
    }
  });
});
