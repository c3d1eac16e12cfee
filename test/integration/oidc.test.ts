// The event functions' caller check (SPEC §2.3) on the real API server: tokens minted by
// `kubectl create token` (a TokenRequest, what Knative's senders do for their OIDC ServiceAccounts),
// reviewed by a TokenReview made with a function ServiceAccount that holds only `create tokenreviews`.
// The reconcile and readiness apps run in-process behind guardEvents, as their server.ts mounts them.
import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp as createReadiness } from '../../functions/readiness/app.ts';
import { createApp as createReconcile } from '../../functions/reconcile/app.ts';
import { guardEvents } from '../../shared/http/event-app.ts';
import type { OidcConfig } from '../../shared/http/oidc.ts';
import { createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { apiRequests } from '../../shared/metrics/registry.ts';
import { createTestNamespace, kubeConfig, kubectl, type TestNamespace } from '../cluster/harness.ts';

const silent = pino({ level: process.env.OIDC_DEBUG ? 'debug' : 'silent' });
let ns: TestNamespace;
let config: OidcConfig;
/** The functions' client: the ServiceAccount `fn`, allowed `create tokenreviews` and nothing else. */
let fnClient: KubeClient;
/** The same without that permission. */
let bareClient: KubeClient;

async function run(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
  return r.stdout.trim();
}

/** `kubectl create token`; without an audience, one for the API server itself. */
const token = (sa: string, audience?: string) => run(['create', 'token', sa, '-n', ns.name, ...(audience ? ['--audience', audience] : []), '--duration', '10m']);

/** A client authenticated as a ServiceAccount of the test namespace, by its token. */
async function clientAs(sa: string): Promise<KubeClient> {
  const admin = kubeConfig();
  const cluster = admin.getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: sa, token: await token(sa) }],
    contexts: [{ name: sa, cluster: cluster.name, user: sa }],
    currentContext: sa,
  });
  return createKubeClient(kc);
}

const tokenReviews = async () => {
  const { values } = await apiRequests.get();
  return values.filter((v) => v.labels.resource === 'tokenreviews' && v.labels.code === '201').reduce((n, v) => n + v.value, 0);
};

/** A Resource-mode Pod event: a NeoSet pod with nothing to do for readiness; a pod of no NeoSet for reconcile. */
function podEvent(authorization?: string, labels: Record<string, string> = {}) {
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'ce-id': `e-${Math.random()}`,
      'ce-source': '/apis/v1/namespaces/default/pods',
      'ce-specversion': '1.0',
      'ce-type': 'dev.knative.apiserver.resource.update',
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: ns.name, labels }, spec: { containers: [] } }),
  };
}

beforeAll(async () => {
  ns = await createTestNamespace('oidc');
  config = { audience: `neoset-readiness.${ns.name}`, subjects: [`system:serviceaccount:${ns.name}:sender`] };
  for (const sa of ['sender', 'stranger', 'fn', 'bare']) await run(['create', 'serviceaccount', sa, '-n', ns.name]);
  // The rule knative/rbac.yaml gives the reconcile and readiness ServiceAccounts for this check.
  await run(['apply', '-f', '-'], [
    stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${ns.name}-tokenreviews` }, rules: [{ apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] }] }),
    stringify({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${ns.name}-tokenreviews` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns.name}-tokenreviews` },
      subjects: [{ kind: 'ServiceAccount', name: 'fn', namespace: ns.name }],
    }),
  ].join('---\n'));
  fnClient = await clientAs('fn');
  bareClient = await clientAs('bare');
}, 60_000);

afterAll(async () => {
  await kubectl(['delete', 'clusterrolebinding,clusterrole', `${ns.name}-tokenreviews`, '--ignore-not-found']);
  await ns?.cleanup();
});

describe('Knative OIDC tokens, NEOSET_OIDC=required (real API server)', () => {
  for (const fn of ['readiness', 'reconcile'] as const) {
    it(`${fn}: no token → 401, a token for another audience → 401, another ServiceAccount's → 403, the sender's for its audience → handled`, async () => {
      const inner = fn === 'readiness' ? createReadiness({ client: fnClient, logger: silent }) : createReconcile({ client: fnClient, logger: silent });
      const app = guardEvents(inner, config, fnClient, silent);
      const labels: Record<string, string> = fn === 'readiness' ? { 'neoset.neo.io/name': 'web' } : {};

      const none = await app.request('/', podEvent(undefined, labels));
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer /);

      // Another audience: refused by its claims alone; the same claims rewritten (signature broken) by the TokenReview.
      const other = await token('sender', 'some-other-service');
      expect((await app.request('/', podEvent(`Bearer ${other}`, labels))).status).toBe(401);
      const good = await token('sender', config.audience);
      const [h, , sig] = good.split('.');
      const tampered = [h, Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(good.split('.')[1], 'base64url').toString()), exp: 9_999_999_999 })).toString('base64url'), sig].join('.');
      const before = await tokenReviews();
      const forged = await app.request('/', podEvent(`Bearer ${tampered}`, labels));
      expect(forged.status).toBe(401);
      expect(await forged.json()).toEqual({ error: `not a valid token for audience ${config.audience}` });
      expect(await tokenReviews()).toBe(before + 1);

      const stranger = await token('stranger', config.audience);
      expect((await app.request('/', podEvent(`Bearer ${stranger}`, labels))).status).toBe(403);

      const handled = await app.request('/', podEvent(`Bearer ${good}`, labels));
      expect(handled.status, await handled.clone().text()).toBe(200);
    }, 30_000);
  }

  it('reviews a token once: a second delivery with it makes no TokenReview', async () => {
    const app = guardEvents(createReadiness({ client: fnClient, logger: silent }), config, fnClient, silent);
    const good = await token('sender', config.audience);
    const before = await tokenReviews();
    expect((await app.request('/', podEvent(`Bearer ${good}`))).status).toBe(200);
    expect(await tokenReviews()).toBe(before + 1);
    expect((await app.request('/', podEvent(`Bearer ${good}`))).status).toBe(200);
    expect(await tokenReviews()).toBe(before + 1);
  }, 30_000);

  it('answers 503 (retried), not 401, when the function may not create TokenReviews', async () => {
    const app = guardEvents(createReadiness({ client: bareClient, logger: silent }), config, bareClient, silent);
    const res = await app.request('/', podEvent(`Bearer ${await token('sender', config.audience)}`));
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
  }, 30_000);
});
