// The admission endpoint against hostile or heavy input (SPEC §2.3, issue 19 point 5): the caller
// checked, bodies bounded before they are read, reviews in flight bounded, dry-runs bounded and
// aborted at their deadline (the HTTP request itself), and refusals that repeat no more of the API
// server's answer than the field and a short reason.
import { KubeConfig } from '@kubernetes/client-node';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, MAX_BODY_BYTES, type DryRunPod } from '../../functions/admission/app.ts';
import { apiDryRunPod } from '../../functions/admission/dry-run.ts';
import { createDryRunSlots } from '../../functions/admission/dry-run-slots.ts';
import { classifyDryRunError, MAX_REFUSAL_CHARS } from '../../shared/admission/dry-run-refusal.ts';
import { limitsFromEnv } from '../../shared/admission/limits.ts';
import type { ClientCertEnv } from '../../shared/http/client-cert.ts';
import { ApiError, createKubeClient, type StatusCause } from '../../shared/k8s/client.ts';
import { CASE_ENV, validNeoSet } from './admission-cases.ts';
import { post, review, silent, stubDryRun, testApp } from './admission-review.ts';

const VALIDATE = '/validate';
const json = (body: unknown) => JSON.stringify(body);

/** As the API server sends a review: with its Content-Length (which is what the body budget reserves). */
async function postSized(app: ReturnType<typeof createApp>, body: unknown) {
  const text = json(body);
  const res = await app.request(VALIDATE, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) }, body: text });
  return { status: res.status, json: await res.json() };
}

describe('the caller: a client certificate of the configured CA', () => {
  const app = testApp();
  const request = (env: ClientCertEnv, path = VALIDATE) =>
    app.request(path, path === '/healthz' ? {} : { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: json(review('CREATE', validNeoSet())) }, env);

  it('without one (or with one that did not verify), /mutate and /validate answer 401 and read nothing', async () => {
    for (const path of ['/mutate', VALIDATE]) {
      for (const error of ['no client certificate', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']) {
        const res = await request({ clientCert: { required: true, verified: false, error } }, path);
        expect(res.status).toBe(401);
        expect((await res.json()).error).toBe(`a client certificate of the configured CA is required (${error})`);
      }
    }
  });

  it('with one, the review is answered; /healthz never needs one (kubelet probes present none)', async () => {
    const res = await request({ clientCert: { required: true, verified: true, subject: 'kube-apiserver-webhook-client' } });
    expect(res.status).toBe(200);
    expect((await res.json()).response.allowed).toBe(true);
    expect((await request({ clientCert: { required: true, verified: false } }, '/healthz')).status).toBe(200);
  });

  it('with no client CA configured (nothing asked for), reviews are answered as before', async () => {
    expect((await request({})).status).toBe(200);
  });
});

describe('bodies: bounded before they are parsed', () => {
  const app = testApp();
  const notJson = 'x'.repeat(MAX_BODY_BYTES + 1);

  it(`the limit is ${MAX_BODY_BYTES} bytes: room for object + oldObject at etcd's 1.5 MiB each`, () => {
    expect(MAX_BODY_BYTES).toBeGreaterThanOrEqual(2 * 1.5 * 1024 * 1024 + 256 * 1024);
    expect(MAX_BODY_BYTES).toBeLessThan(8 * 1024 * 1024);
  });

  it('declared over the limit (Content-Length): 413, unread — not the 400 a parse of this non-JSON body would give', async () => {
    let pulled = 0;
    const body = new ReadableStream({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new TextEncoder().encode(notJson));
        controller.close();
      },
    }, { highWaterMark: 0 });
    const res = await app.request(VALIDATE, { method: 'POST', headers: { 'Content-Length': String(notJson.length) }, body, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    expect(pulled).toBe(0);
  });

  it('chunked (no Content-Length), over the limit: 413 once the limit is passed, the rest not read', async () => {
    let sent = 0;
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    const body = new ReadableStream({
      pull(controller) {
        sent += chunk.length;
        controller.enqueue(chunk);
        if (sent > 64 * 1024 * 1024) controller.close(); // never reached: the limit stops the reading first
      },
    });
    const res = await app.request(VALIDATE, { method: 'POST', headers: { 'Transfer-Encoding': 'chunked' }, body, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    expect(sent).toBeLessThan(MAX_BODY_BYTES + 4 * chunk.length);
  });

  it('a real AdmissionReview near the limit (object and oldObject of ~1.4 MiB each) is judged', async () => {
    const big = validNeoSet();
    big.metadata.annotations = { note: 'n'.repeat(1.4 * 1024 * 1024) };
    const text = json(review('UPDATE', big, big));
    expect(text.length).toBeLessThan(MAX_BODY_BYTES);
    const { status, json: answer } = await post(app, VALIDATE, text);
    expect(status).toBe(200);
    expect(answer.response.allowed).toBe(true);
  });

  it('reviews in flight are bounded: past the budget, 429 with Retry-After, the rest of the body unread', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const hanging: DryRunPod = async () => (await held, { ok: true });
    const busyApp = createApp({ dryRunPod: hanging, limits: limitsFromEnv(CASE_ENV), logger: silent, slots: createDryRunSlots(64, 64) });
    // Reviews of ~3 MiB each (a large annotation), streamed without a Content-Length: each is charged
    // as its chunks arrive; two fit the 8 MiB budget, the third runs past it and is answered busy.
    const chunked = () => {
      const neoset = validNeoSet() as { metadata: { annotations?: Record<string, string> } };
      neoset.metadata.annotations = { pad: 'x'.repeat(3 * 1024 * 1024) };
      const text = new TextEncoder().encode(json(review('CREATE', neoset)));
      const body = new ReadableStream({ start: (c) => (c.enqueue(text), c.close()) });
      return busyApp.request(VALIDATE, { method: 'POST', headers: { 'Transfer-Encoding': 'chunked' }, body, duplex: 'half' } as RequestInit);
    };
    const first = [chunked(), chunked()];
    await new Promise((r) => setTimeout(r, 50));
    const third = await chunked();
    expect(third.status).toBe(429);
    expect(third.headers.get('Retry-After')).toBe('1');
    release();
    for (const res of await Promise.all(first)) expect(res.status).toBe(200);
    expect((await chunked()).status).toBe(200);
  });
});

describe('dry-runs: bounded in number, aborted at the deadline', () => {
  it('past the slots and their queue, a review is refused at once: allowed=false, 429 "busy, retry"', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let calls = 0;
    const hanging: DryRunPod = async () => {
      calls += 1;
      await held;
      return { ok: true };
    };
    const app = createApp({ dryRunPod: hanging, limits: limitsFromEnv(CASE_ENV), logger: silent, slots: createDryRunSlots(2, 1) });
    const inFlight = [0, 1, 2].map(() => postSized(app, review('CREATE', validNeoSet())));
    await new Promise((r) => setTimeout(r, 50));
    const started = performance.now();
    const refused = await postSized(app, review('CREATE', validNeoSet()));
    expect(performance.now() - started).toBeLessThan(200);
    expect(refused.json.response).toMatchObject({
      allowed: false,
      status: { code: 429, reason: 'TooManyRequests', message: 'spec.template: cannot check the pod template now (admission is busy checking others); retry' },
    });
    expect(calls).toBe(2); // the third waits in the queue
    release();
    for (const r of await Promise.all(inFlight)) expect(r.json.response.allowed).toBe(true);
    expect(calls).toBe(3);
  });

  it('a review waiting for a slot past its deadline is refused, and its dry-run never runs', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let calls = 0;
    const hanging: DryRunPod = async () => (calls++, await held, { ok: true });
    const app = createApp({ dryRunPod: hanging, limits: limitsFromEnv(CASE_ENV), logger: silent, slots: createDryRunSlots(1, 4), dryRunTimeoutMs: 100 });
    const first = postSized(app, review('CREATE', validNeoSet()));
    const second = await postSized(app, review('CREATE', validNeoSet()));
    expect(second.json.response).toMatchObject({ allowed: false, status: { code: 429 } });
    release();
    await first;
    expect(calls).toBe(1);
  });

  describe('against an API server that never answers', () => {
    let server: http.Server | undefined;
    afterEach(() => new Promise<void>((r) => (server ? (server.closeAllConnections(), server.close(() => r())) : r())));

    it('the dry-run\'s HTTP request is aborted at the deadline: the server sees its socket closed', async () => {
      const seen: { at: number; closed?: number }[] = [];
      server = http.createServer((req) => {
        const entry: { at: number; closed?: number } = { at: Date.now() };
        seen.push(entry);
        req.socket.on('close', () => (entry.closed = Date.now()));
        // never answers
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'silent', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
        users: [{ name: 'nobody' }],
        contexts: [{ name: 'silent', cluster: 'silent', user: 'nobody' }],
        currentContext: 'silent',
      });
      const app = createApp({ dryRunPod: apiDryRunPod(createKubeClient(kc)), limits: limitsFromEnv(CASE_ENV), logger: silent, dryRunTimeoutMs: 200 });
      const started = Date.now();
      const { json: answer } = await post(app, VALIDATE, review('CREATE', validNeoSet()));
      expect(answer.response).toMatchObject({
        allowed: false,
        status: { code: 503, message: 'spec.template: cannot check the pod template now (the API server did not answer in time); retry' },
      });
      expect(Date.now() - started).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 100));
      expect(seen).toHaveLength(1);
      expect(seen[0].closed, 'the dry-run request\'s socket was closed by the client').toBeDefined();
      expect(seen[0].closed! - seen[0].at).toBeLessThan(600);
    });
  });
});

describe('the namespace dry-run into is the review\'s, never the object\'s claim', () => {
  it('an object claiming kube-system is dry-run in request.namespace', async () => {
    const namespaces: (string | undefined)[] = [];
    const recording: DryRunPod = async (pod, signal) => (namespaces.push(pod.metadata.namespace), stubDryRun(pod, signal));
    const n = validNeoSet('web', 'kube-system');
    const { json: answer } = await post(testApp(recording), VALIDATE, review('CREATE', n, undefined, { namespace: 'team-a' }));
    expect(answer.response.allowed).toBe(true);
    expect(namespaces).toEqual(['team-a']);
  });

  it('a review without request.namespace is not judged', async () => {
    const body = review('CREATE', validNeoSet('web', 'kube-system'));
    delete (body.request as { namespace?: string }).namespace;
    const { json: answer } = await post(testApp(), VALIDATE, body);
    expect(answer.response).toMatchObject({ allowed: false, status: { code: 400 } });
    expect(answer.response.status.message).toContain('request.namespace');
  });
});

describe("refusals repeat the field and a short reason, not the API server's message", () => {
  const refusal = (status: number, reason: string, message: string, causes: StatusCause[] = []) => {
    const result = classifyDryRunError(new ApiError('POST', '/api/v1/namespaces/team-a/pods', status, reason, message, causes));
    return result.ok ? { warnings: result.warnings } : { message: result.message, transient: result.transient ?? false };
  };

  it('422 Invalid: each cause\'s field (as the NeoSet\'s) and reason', () => {
    const r = refusal(422, 'Invalid', 'Pod "web-0" is invalid: spec.containers[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters', [
      { reason: 'FieldValueInvalid', field: 'spec.containers[0].name', message: 'Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters' },
      { reason: 'FieldValueNotFound', field: 'spec.containers[0].volumeMounts[0].name', message: 'Not found: "nowhere"' },
    ]);
    expect(r.message).toBe('spec.template.spec.containers[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters; spec.template.spec.containers[0].volumeMounts[0].name: Not found: "nowhere"');
  });

  it('PodSecurity: the level and the violations (both from the template)', () => {
    const r = refusal(403, 'Forbidden', 'pods "web-0" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)');
    expect(r.message).toBe('spec.template: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)');
  });

  it.each([
    ['a ServiceAccount lookup', 'pods "web-0" is forbidden: error looking up service account team-a/deployer: serviceaccount "deployer" not found', 'deployer'],
    ['another webhook', 'admission webhook "images.corp.example" denied the request: registry.internal.corp:5000 is the only allowed registry (ask #infra)', 'registry.internal'],
    ['a ValidatingAdmissionPolicy', "ValidatingAdmissionPolicy 'no-hostpath' with binding 'all' denied request: hostPath volumes are limited to /var/log on nodes of pool gpu-a", '/var/log'],
    ['a LimitRange', 'pods "web-0" is forbidden: maximum cpu usage per Container is 2, but limit is 4', 'but limit is'],
  ])('403 from %s: a fixed phrase naming whose refusal it is, nothing of its text', (_, message, secret) => {
    const r = refusal(403, 'Forbidden', message);
    expect(r.message).not.toContain(secret);
    expect(r.message).toMatch(/^spec\.template/);
    expect(r.message).toContain('kubectl create --dry-run=server');
  });

  it('a full ResourceQuota: allowed with a warning that quotes none of its usage', () => {
    const r = refusal(403, 'Forbidden', 'pods "web-0" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=40, limited: pods=40');
    expect(r.warnings).toEqual(["pods of this NeoSet do not fit the namespace's ResourceQuota now"]);
  });

  it('strict field validation: the unknown fields, as the NeoSet\'s', () => {
    const r = refusal(400, 'BadRequest', 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].imagePullPolicyy"');
    expect(r.message).toBe('spec.template.spec.containers[0].imagePullPolicyy: unknown field');
  });

  it('an API server that cannot be reached: transient, and no address', () => {
    expect(refusal(0, 'ConnectionFailed', 'connect ECONNREFUSED 10.96.0.1:443')).toEqual({ transient: true, message: 'the API server is unreachable' });
    expect(refusal(503, 'ServiceUnavailable', 'etcdserver: leader changed on member etcd-2.internal')).toEqual({ transient: true, message: 'the API server answered 503 ServiceUnavailable' });
  });

  it(`at most ${MAX_REFUSAL_CHARS} characters, whatever the API server sends`, () => {
    const causes = Array.from({ length: 1000 }, (_, i) => ({ field: `spec.containers[${i}].name`, message: 'v'.repeat(10_000) }));
    const r = refusal(422, 'Invalid', 'x'.repeat(100_000), causes);
    expect(r.message!.length).toBeLessThanOrEqual(MAX_REFUSAL_CHARS);
    expect(r.message).toContain('spec.template.spec.containers[0].name');
  });
});
