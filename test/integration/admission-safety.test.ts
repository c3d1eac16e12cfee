// Who may call admission, and what never waits on it (SPEC §2.3, issue 19 points 5, 9, 10), on the
// real kube-apiserver of the integration run, which presents a client certificate to webhooks (its
// --admission-control-config-file, dev/cluster/control-plane.ts):
//  - the admission server, started from its real entry point with TLS_CLIENT_CA_FILE, takes the API
//    server's reviews (writes pass) and refuses, with 401, a review from anyone else — no certificate,
//    or a certificate of the cluster CA (the admin's) that is not the API server's;
//  - an over-quota NeoSet comes down step by step, on the NeoSet and on its scale subresource;
//  - with the webhooks registered (failurePolicy Fail) and nothing answering them, a NeoSet with pods
//    is deleted with --cascade=orphan and --cascade=foreground, while an ordinary spec update is refused.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCa, issueServingCert, WEBHOOK_CLIENT_CN } from '../../dev/cluster/certs.ts';
import { filesIn } from '../../dev/cluster/control-plane.ts';
import { freePorts } from '../../dev/cluster/ports.ts';
import { startFunction, type RunningFunction } from '../../dev/functions.ts';
import { createTestNamespace, kubeconfigPath, kubectl, type TestNamespace } from '../cluster/harness.ts';
import { testWebhookConfigurations } from '../cluster/webhooks.ts';
import { review } from '../unit/admission-review.ts';
import { validNeoSet } from '../unit/admission-cases.ts';

const VALIDATE = 'validate.neosets.neo.io';
const QUOTA = 100;

let dir: string;
let ns: TestNamespace;
let down: TestNamespace;
let admission: RunningFunction | undefined;
let servingCaPem: string;
const configs: string[] = [];

const apply = (namespace: string, object: unknown) => kubectl(['apply', '-n', namespace, '-f', '-'], { input: JSON.stringify(object) });
const replicasOf = async (namespace: string, name: string) => Number((await kubectl(['get', 'neoset', name, '-n', namespace, '-o', 'jsonpath={.spec.replicas}'])).stdout);

async function register(name: string, baseUrl: string, caPem: string, namespace: string): Promise<void> {
  configs.push(name);
  const registered = await kubectl(['apply', '-f', '-'], { input: await testWebhookConfigurations({ name, baseUrl, caPem, namespace }) });
  expect(registered.code, registered.stderr).toBe(0);
}

/** The API server picks webhook configurations up asynchronously: wait until a write in `namespace` meets them. */
async function untilActive(namespace: string, refusedWith: string): Promise<void> {
  const probe = validNeoSet('probe');
  probe.spec.replicas = QUOTA + 1;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { code, stderr } = await kubectl(['apply', '--dry-run=server', '-n', namespace, '-f', '-'], { input: JSON.stringify(probe) });
    if (code !== 0 && stderr.includes(refusedWith)) return;
    if (Date.now() > deadline) throw new Error(`webhooks not active after 30 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** POST an AdmissionReview to the admission server as a stranger would: trusting its CA, with or without a client certificate. */
function postReview(port: number, client?: { cert: string; key: string }): Promise<{ status: number; body: string }> {
  const body = JSON.stringify(review('CREATE', validNeoSet('stranger')));
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: '/validate', method: 'POST', ca: servingCaPem, agent: false, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }, ...client },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The first user's client certificate in a kubeconfig file (the admin's, or the API server's webhook credentials). */
function clientOf(kubeconfig: string): { cert: string; key: string } {
  const user = parse(readFileSync(kubeconfig, 'utf8')).users[0].user;
  return { cert: Buffer.from(user['client-certificate-data'], 'base64').toString(), key: Buffer.from(user['client-key-data'], 'base64').toString() };
}

beforeAll(async () => {
  [ns, down] = await Promise.all([createTestNamespace('admission-safety'), createTestNamespace('admission-down')]);
  dir = await mkdtemp(join(tmpdir(), 'neoset-admission-safety-'));
  const ca = await createCa('neoset-admission-safety-ca');
  servingCaPem = ca.certPem;
  const serving = await issueServingCert(ca, ['127.0.0.1']);
  await writeFile(join(dir, 'tls.crt'), serving.certPem);
  await writeFile(join(dir, 'tls.key'), serving.keyPem, { mode: 0o600 });
  // Stored while the quota was higher (no webhook yet): 500 replicas under a quota of 100.
  const big = validNeoSet('big');
  big.spec.replicas = 500;
  expect((await apply(ns.name, big)).code).toBe(0);
  admission = await startFunction({
    name: 'admission',
    port: 0,
    kubeconfig: kubeconfigPath(),
    logPath: join(dir, 'admission.log'),
    tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), caPem: ca.certPem, clientCaFile: filesIn(dirname(kubeconfigPath())).webhookClientCa },
    env: { NEOSET_MAX_REPLICAS: String(QUOTA) },
  });
  await register(`neoset-admission-safety-${ns.name}`, admission.url, ca.certPem, ns.name);
  await untilActive(ns.name, `admission webhook "${VALIDATE}" denied the request`);
}, 120_000);

afterAll(async () => {
  for (const name of configs) await kubectl(['delete', 'mutatingwebhookconfiguration,validatingwebhookconfiguration', name, '--ignore-not-found']);
  await admission?.process.stop();
  await Promise.all([ns?.cleanup(), down?.cleanup()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('admission takes reviews from the API server only (client certificate)', () => {
  it('the API server calls it with its client certificate: writes pass, and the log names the caller', async () => {
    const { code, stderr } = await apply(ns.name, validNeoSet('written'));
    expect(code, stderr).toBe(0);
    // pino writes a line asynchronously: it may reach the file after the review's answer (ci25, under load).
    const reviews = await vi.waitFor(
      () => {
        const lines = readFileSync(join(dir, 'admission.log'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
        const found = lines.filter((l) => l.msg === 'admission' && l.name === 'written');
        expect(found.map((l) => l.webhook).sort()).toEqual(['mutate', 'validate']);
        return found;
      },
      { timeout: 5000, interval: 50 },
    );
    for (const l of reviews) expect(l.caller).toBe(WEBHOOK_CLIENT_CN);
  });

  it('a review without a client certificate is refused with 401; /healthz stays open to probes', async () => {
    const port = Number(new URL(admission!.url).port);
    const stranger = await postReview(port);
    console.log(`no client certificate: ${stranger.status} ${stranger.body}`);
    expect(stranger.status).toBe(401);
    expect(JSON.parse(stranger.body).error).toContain('client certificate');
    const admin = await postReview(port, clientOf(kubeconfigPath()));
    console.log(`the cluster admin's certificate (cluster CA): ${admin.status} ${admin.body}`);
    expect(admin.status).toBe(401);
    const apiserver = await postReview(port, clientOf(filesIn(dirname(kubeconfigPath())).webhookKubeconfig));
    expect(apiserver.status).toBe(200);
    expect(JSON.parse(apiserver.body).response.allowed).toBe(true);
    const health = await new Promise<number>((resolve, reject) => https.get({ host: '127.0.0.1', port, path: '/healthz', ca: servingCaPem, agent: false }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject));
    expect(health).toBe(200);
  });
});

describe('an over-quota NeoSet comes down step by step', () => {
  it(`500 -> 400 -> 300 -> 100 under a quota of ${QUOTA}, on the NeoSet and the scale subresource; raising is refused`, async () => {
    const patch = (replicas: number) => kubectl(['patch', 'neoset', 'big', '-n', ns.name, '--type', 'merge', '-p', JSON.stringify({ spec: { replicas } })]);
    const scale = (replicas: number) => kubectl(['scale', 'neoset/big', '-n', ns.name, `--replicas=${replicas}`]);
    const down400 = await patch(400);
    expect(down400.code, down400.stderr).toBe(0);
    expect(await replicasOf(ns.name, 'big')).toBe(400);
    for (const raise of [patch(450), scale(450)]) {
      const refused = await raise;
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(`spec.replicas: 450 is over the quota of ${QUOTA} (NEOSET_MAX_REPLICAS)`);
    }
    const down300 = await scale(300);
    expect(down300.code, down300.stderr).toBe(0);
    const down100 = await patch(100);
    expect(down100.code, down100.stderr).toBe(0);
    expect(await replicasOf(ns.name, 'big')).toBe(100);
    const over = await scale(101);
    expect(over.code).not.toBe(0);
    expect(over.stderr).toContain(`spec.replicas: 101 is over the quota of ${QUOTA}`);
  });
});

describe('deletion does not wait on admission', () => {
  const podOf = (name: string, uid: string, ordinal: number) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${name}-${ordinal}`,
      labels: { app: name },
      ownerReferences: [{ apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name, uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
  });

  beforeAll(async () => {
    for (const name of ['orphaned', 'foreground', 'edited']) {
      expect((await apply(down.name, validNeoSet(name))).code).toBe(0);
      const uid = (await kubectl(['get', 'neoset', name, '-n', down.name, '-o', 'jsonpath={.metadata.uid}'])).stdout;
      for (const ordinal of [0, 1]) expect((await apply(down.name, podOf(name, uid, ordinal))).code).toBe(0);
    }
    // The webhooks registered as the manifest has them, failurePolicy Fail, and nothing listening.
    const [closed] = await freePorts(1);
    await register(`neoset-admission-down-${down.name}`, `https://127.0.0.1:${closed}`, servingCaPem, down.name);
    await untilActive(down.name, 'failed calling webhook');
  }, 120_000);

  // A raise of replicas (the quota's); a scale-down, a pause or a partition would pass: brake.test.ts.
  it('an ordinary spec update is refused while admission is down (failurePolicy Fail)', async () => {
    const refused = await kubectl(['patch', 'neoset', 'edited', '-n', down.name, '--type', 'merge', '-p', '{"spec":{"replicas":4}}']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('failed calling webhook');
    // Claiming a deletion does not skip the webhooks: the API server keeps the stored deletionTimestamp.
    const claimed = await kubectl(['patch', 'neoset', 'edited', '-n', down.name, '--type', 'merge', '-p', '{"metadata":{"deletionTimestamp":"2020-01-01T00:00:00Z"},"spec":{"replicas":4}}']);
    console.log(`a spec update claiming a deletionTimestamp: ${claimed.stderr.trim()}`);
    expect(claimed.code).not.toBe(0);
    expect(await replicasOf(down.name, 'edited')).toBe(3);
  });

  it('kubectl delete --cascade=orphan completes; the pods stay, without their owner', async () => {
    const started = Date.now();
    const deleted = await kubectl(['delete', 'neoset', 'orphaned', '-n', down.name, '--cascade=orphan', '--timeout=60s']);
    console.log(`--cascade=orphan: ${deleted.code} in ${Date.now() - started} ms: ${deleted.stdout.trim()} ${deleted.stderr.trim()}`);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await kubectl(['get', 'neoset', 'orphaned', '-n', down.name])).code).not.toBe(0);
    const pods = JSON.parse((await kubectl(['get', 'pods', '-n', down.name, '-l', 'app=orphaned', '-o', 'json'])).stdout).items;
    expect(pods.map((p: any) => p.metadata.name).sort()).toEqual(['orphaned-0', 'orphaned-1']);
    for (const p of pods) expect(p.metadata.ownerReferences ?? []).toEqual([]);
  });

  it('kubectl delete --cascade=foreground completes; the pods are gone first', async () => {
    const started = Date.now();
    const deleted = await kubectl(['delete', 'neoset', 'foreground', '-n', down.name, '--cascade=foreground', '--timeout=60s']);
    console.log(`--cascade=foreground: ${deleted.code} in ${Date.now() - started} ms: ${deleted.stdout.trim()} ${deleted.stderr.trim()}`);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await kubectl(['get', 'neoset', 'foreground', '-n', down.name])).code).not.toBe(0);
    const pods = JSON.parse((await kubectl(['get', 'pods', '-n', down.name, '-l', 'app=foreground', '-o', 'json'])).stdout).items;
    expect(pods).toEqual([]);
  });
});
