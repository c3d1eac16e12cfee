// The admission hono app through app.request (no port): AdmissionReview in, AdmissionReview out.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NeoSetSpec } from '../../shared/api/neoset.ts';
import { applyAdds, INVALID_CASES, validNeoSet } from './admission-cases.ts';
import { post, review, stubDryRun, testApp } from './admission-review.ts';
import type { DryRunPod } from '../../functions/admission/app.ts';
import { apiDryRunPod } from '../../functions/admission/dry-run.ts';
import { ApiError, type KubeClient } from '../../shared/k8s/client.ts';

const app = testApp();

describe('POST /mutate', () => {
  it('answers a base64 JSONPatch that fills the missing defaults', async () => {
    const n = validNeoSet();
    delete n.spec.replicas;
    const body = review('CREATE', n);
    const { status, json } = await post(app, '/mutate', body);
    expect(status).toBe(200);
    expect(json.apiVersion).toBe('admission.k8s.io/v1');
    expect(json.kind).toBe('AdmissionReview');
    expect(json.response.uid).toBe(body.request.uid);
    expect(json.response.allowed).toBe(true);
    expect(json.response.patchType).toBe('JSONPatch');
    const patch = JSON.parse(Buffer.from(json.response.patch, 'base64').toString());
    const patched = applyAdds(n, patch);
    expect(patched.spec).toEqual(NeoSetSpec.parse(n.spec));
    // Second pass, as after reinvocation: nothing left to add.
    const again = await post(app, '/mutate', review('UPDATE', patched, patched));
    expect(again.json.response).toEqual({ uid: expect.any(String), allowed: true });
  });

  it('lets an invalid spec through untouched, for the schema and /validate to refuse', async () => {
    const n = validNeoSet();
    n.spec.replicas = -1;
    const { json } = await post(app, '/mutate', review('CREATE', n));
    expect(json.response.allowed).toBe(true);
    expect(json.response.patch).toBeUndefined();
  });
});

describe('POST /validate', () => {
  it('allows a valid NeoSet', async () => {
    const body = review('CREATE', validNeoSet());
    const { status, json } = await post(app, '/validate', body);
    expect(status).toBe(200);
    expect(json.response).toEqual({ uid: body.request.uid, allowed: true });
  });

  for (const c of INVALID_CASES.filter((c) => c.by !== 'dry-run' || c.mentions === 'Bad_Name')) {
    it(`refuses: ${c.name}, naming ${c.field}`, async () => {
      const n = validNeoSet();
      c.change(n);
      const { json } = await post(app, '/validate', review('CREATE', n));
      expect(json.response.allowed).toBe(false);
      expect(json.response.status.message).toContain(c.field);
      if (c.mentions && c.by !== 'schema') expect(json.response.status.message).toContain(c.mentions);
      expect([403, 422]).toContain(json.response.status.code);
    });
  }

  it('answers quota and caps 403 Forbidden, invalid values 422 Invalid', async () => {
    const over = validNeoSet();
    over.spec.replicas = 2000;
    expect((await post(app, '/validate', review('CREATE', over))).json.response.status).toMatchObject({ code: 403, reason: 'Forbidden' });
    const bad = validNeoSet();
    bad.spec.updateStrategy = { maxUnavailable: 0 };
    expect((await post(app, '/validate', review('CREATE', bad))).json.response.status).toMatchObject({ code: 422, reason: 'Invalid' });
  });

  it('returns warnings beside allowed=true', async () => {
    const n = validNeoSet();
    n.spec.updateStrategy = { partition: 7 };
    const { json } = await post(app, '/validate', review('CREATE', n));
    expect(json.response.allowed).toBe(true);
    expect(json.response.warnings).toEqual(['spec.updateStrategy.partition (7) > spec.replicas (3): no pod will be updated']);
  });

  it('refuses a change of an immutable field on UPDATE', async () => {
    const old = validNeoSet();
    const n = validNeoSet();
    n.spec.serviceName = 'elsewhere';
    const { json } = await post(app, '/validate', review('UPDATE', n, old));
    expect(json.response.allowed).toBe(false);
    expect(json.response.status.message).toBe('spec.serviceName: field is immutable (was "web", now "elsewhere")');
  });

  it('refuses with the field and reason of the API server when the dry-run Pod is refused', async () => {
    const n = validNeoSet();
    n.spec.template.spec.containers[0].name = 'Bad_Name';
    const { json } = await post(app, '/validate', review('CREATE', n));
    expect(json.response.status.message).toMatch(/^the API server refuses ordinal 0's pod: spec\.template\.spec\.containers\[0\]\.name: Invalid value: "Bad_Name"/);
  });

  it('a dry-run that cannot reach the API server refuses with a reason (failurePolicy Fail), not a 5xx, and no address', async () => {
    const client: KubeClient = { request: async (verb, path) => { throw new ApiError(verb, path, 0, 'ConnectionFailed', 'connect ECONNREFUSED 10.0.0.1:443'); } };
    const { status, json } = await post(testApp(apiDryRunPod(client)), '/validate', review('CREATE', validNeoSet()));
    expect(status).toBe(200);
    expect(json.response.allowed).toBe(false);
    expect(json.response.status.reason).toBe('ServiceUnavailable');
    expect(json.response.status.message).toBe('spec.template: cannot check the pod template now (the API server is unreachable); retry');
  });

  it('allows with a warning when another pod webhook makes the API server refuse dry-runs (sideEffects Unknown or Some)', async () => {
    // What kube-apiserver answers (webhookerrors.NewDryRunUnsupportedErr: 400 BadRequest) when a pod
    // webhook stored with sideEffects Unknown matches the dry-run; admissionregistration/v1 no longer
    // accepts that value, but configurations stored through v1beta1 keep it.
    const client: KubeClient = {
      request: async (verb, path) => {
        throw new ApiError(verb, path, 400, 'BadRequest', 'admission webhook "pods.unrelated.example.com" does not support dry run');
      },
    };
    const { status, json } = await post(testApp(apiDryRunPod(client)), '/validate', review('CREATE', validNeoSet()));
    expect(status).toBe(200);
    expect(json.response.allowed).toBe(true);
    expect(json.response.warnings).toEqual([
      'spec.template: not checked by a dry-run pod create (admission webhook "pods.unrelated.example.com" does not support dry run: it declares sideEffects Unknown or Some); the pods may still be refused when they are created',
    ]);
    // Any other 400 is still the template's fault.
    const other: KubeClient = { request: async (verb, path) => { throw new ApiError(verb, path, 400, 'BadRequest', 'something else'); } };
    const refused = await post(testApp(apiDryRunPod(other)), '/validate', review('CREATE', validNeoSet()));
    expect(refused.json.response.allowed).toBe(false);
  });

  it('a dry-run that throws is still an answer', async () => {
    const broken: DryRunPod = async () => {
      throw new Error('boom');
    };
    const { status, json } = await post(testApp(broken), '/validate', review('CREATE', validNeoSet()));
    expect(status).toBe(200);
    expect(json.response).toMatchObject({ allowed: false, status: { message: 'admission failed: boom' } });
  });

  it('UPDATE without a template change does not dry-run', async () => {
    let calls = 0;
    const counting: DryRunPod = async (pod) => {
      calls++;
      return stubDryRun(pod, AbortSignal.timeout(1000));
    };
    const old = validNeoSet();
    const n = validNeoSet();
    n.spec.updateStrategy = { pause: true };
    const { json } = await post(testApp(counting), '/validate', review('UPDATE', n, old));
    expect(json.response.allowed).toBe(true);
    expect(calls).toBe(0);
  });

  it('holds the replicas quota on the scale subresource', async () => {
    const scale = (replicas: number) => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web' }, spec: { replicas } });
    const body = (replicas: number) =>
      review('UPDATE', scale(replicas), scale(3), {
        kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
        subResource: 'scale',
      });
    expect((await post(app, '/validate', body(5000))).json.response).toMatchObject({ allowed: false, status: { message: 'spec.replicas: 5000 is over the quota of 1000 (NEOSET_MAX_REPLICAS)' } });
    expect((await post(app, '/validate', body(10))).json.response.allowed).toBe(true);
  });

  it('allows DELETE (nothing to refuse)', async () => {
    const { json } = await post(app, '/validate', review('DELETE', null, validNeoSet()));
    expect(json.response.allowed).toBe(true);
  });
});

describe('input it cannot judge', () => {
  it.each([
    ['not JSON', '{"apiVersion":'],
    ['JSON but not an AdmissionReview', { hello: 'world' }],
    ['an AdmissionReview without a uid', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }],
    ['admission.k8s.io/v1beta1', { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'x' } }],
    ['an empty body', ''],
  ])('%s: 400 with a message', async (_, body) => {
    for (const path of ['/mutate', '/validate']) {
      const { status, json } = await post(app, path, body);
      expect(status).toBe(400);
      expect(typeof json.error).toBe('string');
    }
  });

  it('a request of another kind: allowed=false with the reason', async () => {
    const body = review('CREATE', { apiVersion: 'v1', kind: 'Pod' }, undefined, { kind: { group: '', version: 'v1', kind: 'Pod' } });
    const { status, json } = await post(app, '/validate', body);
    expect(status).toBe(200);
    expect(json.response).toMatchObject({ uid: body.request.uid, allowed: false });
    expect(json.response.status.message).toContain('expected neo.io/v1alpha1 NeoSet, got core/v1 Pod');
  });

  it('a request with a missing operation: allowed=false naming request.operation', async () => {
    const body = review('CREATE', validNeoSet());
    delete (body.request as any).operation;
    const { json } = await post(app, '/mutate', body);
    expect(json.response.allowed).toBe(false);
    expect(json.response.status.message).toContain('request.operation');
  });

  it('a NeoSet of the wrong shape: allowed=false naming the field', async () => {
    const n = validNeoSet();
    n.spec.template.spec.containers = 'nginx';
    const { json } = await post(app, '/validate', review('CREATE', n));
    expect(json.response.allowed).toBe(false);
    expect(json.response.status.message).toContain('spec.template.spec.containers');
  });

  it('very deep nesting is refused, not walked', async () => {
    const n = validNeoSet();
    n.spec.template.spec.containers[0].args = 'DEEP';
    const depth = 100_000;
    const body = JSON.stringify(review('CREATE', n)).replace('"DEEP"', `${'['.repeat(depth)}1${']'.repeat(depth)}`);
    const { status, json } = await post(app, '/validate', body);
    expect(status).toBe(200);
    expect(json.response.status.message).toContain('nested deeper');
  });

  it('a body over the limit: 413', async () => {
    const { status } = await post(app, '/validate', 'x'.repeat(9 * 1024 * 1024));
    expect(status).toBe(413);
  });
});

describe('platform routes', () => {
  it('GET /healthz', async () => {
    const res = await app.request('/healthz');
    expect(res.status).toBe(200);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(await res.json()).toEqual({ status: 'ok', function: 'admission', version });
    expect(await (await app.request('/metrics')).text()).toContain(`neoset_build_info{version="${version}",function="admission",node="${process.versions.node}"} 1`);
  });
  it('GET /metrics counts reviews by operation and allowed', async () => {
    const res = await app.request('/metrics');
    const text = await res.text();
    expect(text).toMatch(/neoset_admission_requests_total\{webhook="validate",operation="CREATE",allowed="false"\} \d+/);
    expect(text).toMatch(/neoset_admission_requests_total\{webhook="mutate",operation="CREATE",allowed="true"\} \d+/);
  });
});
