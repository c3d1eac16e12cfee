// `npm run admission:cert` (scripts/admission-cert.ts) rotating the webhook's certificate while a client
// writes a NeoSet every 100 ms through the real API server and the real admission server (issue 14).
// As in a cluster, the admission process sees a rotated Secret only when "kubelet" syncs it into its
// files, SYNC_DELAY_MS after the write; the API server sees the new caBundle at once. A rotation that
// changed the CA together with the certificate would refuse every write in between (x509: certificate
// signed by unknown authority, with failurePolicy Fail). Then the webhook configurations are applied
// again as knative/admission-webhooks.yaml has them (no caBundle): the CA stays, writes still pass.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { rotate, type Kubectl } from '../../scripts/admission-cert.ts';
import { LOOPBACK_HOSTS } from '../../dev/cluster/certs.ts';
import { freePorts } from '../../dev/cluster/ports.ts';
import { startFunction, type RunningFunction } from '../../dev/functions.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { createTestNamespace, kubeConfig, kubeconfigPath, kubectl, type TestNamespace } from '../cluster/harness.ts';
import { validNeoSet } from '../unit/admission-cases.ts';

const MANIFEST = new URL('../../knative/admission-webhooks.yaml', import.meta.url).pathname;
/** How long after a Secret changes the pod's files change (kubelet's sync: about a minute in a cluster). */
const SYNC_DELAY_MS = 3000;
const WRITE_EVERY_MS = 100;

let ns: TestNamespace;
let dir: string;
let port: number;
let admission: RunningFunction | undefined;
const timers: NodeJS.Timeout[] = [];

const k: Kubectl = (args, input) => kubectl(args, { input });
const certFile = () => join(dir, 'tls.crt');
const keyFile = () => join(dir, 'tls.key');

/** The webhook configurations exactly as the manifest has them, but called by url and scoped to this namespace. */
async function manifestWebhooks(): Promise<string> {
  const docs = parseAllDocuments(await readFile(MANIFEST, 'utf8')).map((d) => d.toJS());
  return docs
    .filter((doc) => doc.kind === 'MutatingWebhookConfiguration' || doc.kind === 'ValidatingWebhookConfiguration')
    .map((doc) => {
      for (const webhook of doc.webhooks) {
        const { service, ...rest } = webhook.clientConfig;
        webhook.clientConfig = { ...rest, url: `https://127.0.0.1:${port}${service.path}` };
        webhook.namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': ns.name } };
      }
      return stringify(doc);
    })
    .join('---\n');
}

/** kubelet's part: copy the TLS Secret into the pod's files, after `delayMs`. */
async function syncSecret(delayMs: number): Promise<void> {
  const { stdout } = await kubectl(['-n', ns.name, 'get', 'secret', 'neoset-admission-tls', '-o', 'json']);
  const data = JSON.parse(stdout).data;
  const write = () => {
    writeFileSync(keyFile(), Buffer.from(data['tls.key'], 'base64'), { mode: 0o600 });
    writeFileSync(certFile(), Buffer.from(data['tls.crt'], 'base64'));
  };
  if (delayMs === 0) write();
  else timers.push(setTimeout(write, delayMs));
}

const caBundles = async () =>
  (await Promise.all(['mutatingwebhookconfiguration', 'validatingwebhookconfiguration'].map((kind) => kubectl(['get', kind, 'neoset-admission', '-o', 'jsonpath={.webhooks[*].clientConfig.caBundle}'])))).map((r) => r.stdout);

/** Writes the NeoSet every WRITE_EVERY_MS until stopped; every answer is kept. */
function startWriter() {
  const client = createKubeClient(kubeConfig());
  const path = paths.neoset(ns.name, 'rotating');
  const results: { ok: boolean; message?: string }[] = [];
  let n = 0;
  const inFlight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const write = client
      .request('PATCH', path, { body: { metadata: { annotations: { 'test.neo.io/write': String(++n) } } }, patch: 'merge' })
      .then(() => void results.push({ ok: true }))
      .catch((error: Error) => void results.push({ ok: false, message: error.message }))
      .finally(() => inFlight.delete(write));
    inFlight.add(write);
  }, WRITE_EVERY_MS);
  return {
    results,
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      return results;
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  ns = await createTestNamespace('admission-cert');
  dir = mkdtempSync(join(tmpdir(), 'neoset-admission-cert-'));
  [port] = await freePorts(1);
  const registered = await kubectl(['apply', '-f', '-'], { input: await manifestWebhooks() });
  expect(registered.code, registered.stderr).toBe(0);
  // The first run: a CA, caBundle, the serving certificate; the pod starts with the Secret's files.
  const first = await rotate({ kubectl: k, namespace: ns.name, hosts: LOOPBACK_HOSTS });
  expect(first.caChanged).toBe(true);
  await syncSecret(0);
  admission = await startFunction({
    name: 'admission',
    port,
    kubeconfig: kubeconfigPath(),
    logPath: join(dir, 'admission.log'),
    tls: { certFile: certFile(), keyFile: keyFile(), caPem: first.ca.certPem },
  });
  const created = await kubectl(['-n', ns.name, 'apply', '-f', '-'], { input: JSON.stringify(validNeoSet('rotating')) });
  expect(created.code, created.stderr).toBe(0);
}, 120_000);

afterAll(async () => {
  for (const t of timers) clearTimeout(t);
  await kubectl(['delete', 'mutatingwebhookconfiguration,validatingwebhookconfiguration', 'neoset-admission', '--ignore-not-found']);
  await admission?.process.stop();
  await ns?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('npm run admission:cert', () => {
  it('rotates the serving certificate (and, with --new-ca, the CA) while a NeoSet is written every 100 ms: no write refused', async () => {
    const bundleBefore = await caBundles();
    const writer = startWriter();
    await sleep(1000);

    // A plain rotation: the CA and caBundle stay, only the certificate changes.
    const plain = await rotate({ kubectl: k, namespace: ns.name, hosts: LOOPBACK_HOSTS });
    const bundleAfterPlain = await caBundles();
    await syncSecret(SYNC_DELAY_MS);
    await sleep(SYNC_DELAY_MS + 2000);

    // A new CA: published next to the previous one before the pod serves a certificate it signed.
    const renewed = await rotate({ kubectl: k, namespace: ns.name, hosts: LOOPBACK_HOSTS, newCa: true });
    await syncSecret(SYNC_DELAY_MS);
    await sleep(SYNC_DELAY_MS + 2000);

    const results = await writer.stop();
    const refused = results.filter((r) => !r.ok).map((r) => r.message);
    console.log(`${results.length} NeoSet writes through two rotations, ${refused.length} refused${refused.length ? `; first: ${refused[0]}` : ''}`);
    expect(refused).toEqual([]);
    expect(plain.caChanged).toBe(false);
    expect(bundleAfterPlain).toEqual(bundleBefore);
    expect(renewed.caChanged).toBe(true);
    expect(renewed.bundlePem.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    // Every 100 ms for ~11 s: the writes really ran through both switches.
    expect(results.length).toBeGreaterThan(80);
    // The pod really serves the last certificate (the server reloaded it).
    const log = await readFile(join(dir, 'admission.log'), 'utf8');
    expect(log.split('\n').filter((l) => l.includes('tls certificate reloaded')).length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('keeps the CA when the webhook configurations are applied again as the manifest has them (a NeoSet write still passes)', async () => {
    const before = await caBundles();
    expect(before.every((b) => b.length > 0)).toBe(true);
    const reapplied = await kubectl(['apply', '-f', '-'], { input: await manifestWebhooks() });
    expect(reapplied.code, reapplied.stderr).toBe(0);
    expect(await caBundles()).toEqual(before);
    const write = await kubectl(['-n', ns.name, 'annotate', '--overwrite', 'neoset', 'rotating', 'test.neo.io/after-apply=1']);
    expect(write.code, write.stderr).toBe(0);
  });
});
