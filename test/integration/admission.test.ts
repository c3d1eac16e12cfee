// The admission webhooks against a real kube-apiserver (SPEC §5, §7): the API server calls the
// admission server at https://127.0.0.1:<port> through Mutating/ValidatingWebhookConfigurations
// carrying a generated CA, and every case goes through the real `kubectl apply`.
// The server runs as a child process from its real entry point (functions/admission/server.ts),
// configured by environment variables like in production, with the real dry-run against this cluster.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NeoSetSpec } from '../../shared/api/neoset.ts';
import { createCa, issueServingCert } from '../../dev/cluster/certs.ts';
import { createTestNamespace, kubectl, type TestNamespace } from '../cluster/harness.ts';
import { startAdmissionProcess } from '../cluster/admission-process.ts';
import { CASE_ENV, DEFAULT_UPDATE_STRATEGY, INVALID_CASES, validNeoSet } from '../unit/admission-cases.ts';

const VALIDATE = 'validate.neosets.neo.io';

let ns: TestNamespace;
let dir: string;
let server: ChildProcess;
let port: number;
let configName: string;
const logLines: string[] = [];

const MANIFEST = new URL('../../knative/admission-webhooks.yaml', import.meta.url).pathname;

/**
 * The webhook configurations of knative/admission-webhooks.yaml (so their failurePolicy, rules,
 * timeouts... are the ones tested), pointed at this test's server by url with the test CA, and
 * scoped to this test's namespace (other test files share the cluster).
 */
async function webhookConfigurations(caPem: string): Promise<string> {
  const docs = parseAllDocuments(await readFile(MANIFEST, 'utf8')).map((d) => d.toJS());
  return docs
    .filter((doc) => doc.kind === 'MutatingWebhookConfiguration' || doc.kind === 'ValidatingWebhookConfiguration')
    .map((doc) => {
      doc.metadata = { name: configName };
      for (const webhook of doc.webhooks) {
        webhook.clientConfig = { url: `https://127.0.0.1:${port}${webhook.clientConfig.service.path}`, caBundle: Buffer.from(caPem).toString('base64') };
        webhook.namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': ns.name } };
      }
      return stringify(doc);
    })
    .join('---\n');
}

async function startServer(certFile: string, keyFile: string): Promise<number> {
  const started = await startAdmissionProcess({ ...CASE_ENV, TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile }, logLines);
  server = started.child;
  return started.port;
}

const apply = (object: unknown) => kubectl(['apply', '-n', ns.name, '-f', '-'], { input: JSON.stringify(object) });

async function getNeoSet(name: string): Promise<any> {
  const { code, stdout, stderr } = await kubectl(['get', 'neoset', name, '-n', ns.name, '-o', 'json']);
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout);
}

beforeAll(async () => {
  ns = await createTestNamespace('admission');
  configName = `neoset-admission-test-${ns.name}`;
  dir = await mkdtemp(join(tmpdir(), 'neoset-admission-it-'));
  const ca = await createCa('neoset-admission-test-ca');
  const serving = await issueServingCert(ca, ['127.0.0.1']);
  await writeFile(join(dir, 'tls.crt'), serving.certPem);
  await writeFile(join(dir, 'tls.key'), serving.keyPem, { mode: 0o600 });
  port = await startServer(join(dir, 'tls.crt'), join(dir, 'tls.key'));
  const registered = await kubectl(['apply', '-f', '-'], { input: await webhookConfigurations(ca.certPem) });
  expect(registered.code, registered.stderr).toBe(0);
  // The API server picks webhook configurations up asynchronously: wait until a quota breach is refused.
  const probe = validNeoSet('probe');
  probe.spec.replicas = 1001;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { code, stderr } = await kubectl(['apply', '--dry-run=server', '-n', ns.name, '-f', '-'], { input: JSON.stringify(probe) });
    if (code !== 0 && stderr.includes(VALIDATE)) break;
    if (Date.now() > deadline) throw new Error(`webhooks not active after 30 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}, 120_000);

afterAll(async () => {
  await kubectl(['delete', 'mutatingwebhookconfiguration,validatingwebhookconfiguration', configName, '--ignore-not-found']);
  if (server && server.exitCode === null) {
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    expect(await exited, 'graceful SIGTERM exit code').toBe(0);
  }
  await ns?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('admission webhooks behind a real kube-apiserver', () => {
  it('the manifest\'s cluster-scoped objects (webhook configurations, RBAC, the dry-run-only policy) pass server-side validation as written', async () => {
    const docs = parseAllDocuments(await readFile(MANIFEST, 'utf8')).map((d) => d.toJS());
    const clusterScoped = docs.filter((d) => !d.metadata.namespace);
    expect(clusterScoped.map((d) => d.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'MutatingWebhookConfiguration',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
      'ValidatingWebhookConfiguration',
    ]);
    const { code, stdout, stderr } = await kubectl(['apply', '--dry-run=server', '-f', '-'], { input: clusterScoped.map((d) => stringify(d)).join('---\n') });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('validatingwebhookconfiguration.admissionregistration.k8s.io/neoset-admission created (server dry run)');
  });

  it('stores a NeoSet applied without updateStrategy (or any other default) with every default filled in', async () => {
    const n = validNeoSet('defaults');
    delete n.spec.replicas;
    const input = structuredClone(n.spec);
    const { code, stdout, stderr } = await apply(n);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('neoset.neo.io/defaults created');
    const stored = await getNeoSet('defaults');
    expect(stored.spec.updateStrategy).toEqual(DEFAULT_UPDATE_STRATEGY);
    expect(stored.spec).toEqual(NeoSetSpec.parse(input));
    // /mutate was called for it (the CRD's structural defaults had filled everything first, so its patch was empty).
    // pino writes a line asynchronously: it may come after the review's answer (ci25, under load).
    await vi.waitFor(() => {
      const mutateLog = logLines.map((l) => { try { return JSON.parse(l); } catch { return {}; } }).filter((e) => e.webhook === 'mutate' && e.name === 'defaults');
      expect(mutateLog.length).toBeGreaterThan(0);
    }, { timeout: 5000, interval: 50 });
  });

  describe(`refuses each of ${INVALID_CASES.length} invalid NeoSets, naming the field`, () => {
    const refusals: string[] = [];
    afterAll(() => console.log(`${refusals.length} refusals as kubectl printed them:\n${refusals.join('\n')}`));
    INVALID_CASES.forEach((c, i) => {
      it(`${c.name} → ${c.field}`, async () => {
        const n = validNeoSet(`bad-${i}`);
        c.change(n);
        const { code, stderr } = await apply(n);
        expect(code, stderr).not.toBe(0);
        refusals.push(`[${c.by}] ${stderr.trim().replace(/\s+/g, ' ').slice(0, 260)}`);
        expect(stderr).toContain(c.field);
        // The CRD's CEL answers before the validating webhook is called: its words, not admission's.
        if (c.by === 'both') expect(stderr).toContain('must be an integer >= 1 or a percentage from 1% to 100%');
        else if (c.mentions) expect(stderr).toContain(c.mentions);
        if (c.by === 'rules' || c.by === 'dry-run') expect(stderr).toContain(`admission webhook "${VALIDATE}" denied the request`);
        const stored = await kubectl(['get', 'neoset', n.metadata.name, '-n', ns.name]);
        expect(stored.code).not.toBe(0);
      });
    });
  });

  it('refuses a pod template the API server would refuse, with the field and reason the API server gives', async () => {
    const n = validNeoSet('badname');
    n.spec.template.spec.containers[0].name = 'Bad_Name';
    const { code, stderr } = await apply(n);
    expect(code).not.toBe(0);
    expect(stderr).toContain(`admission webhook "${VALIDATE}" denied the request: the API server refuses ordinal 0's pod: spec.template.spec.containers[0].name: Invalid value: "Bad_Name"`);
    console.log(`Bad_Name refusal as kubectl prints it:\n${stderr.trim()}`);
  });

  it('makes kubectl print Warning: lines for doubtful but legal settings', async () => {
    const n = validNeoSet('warned');
    n.spec.minReadySeconds = 30;
    n.spec.updateStrategy = { partition: 5, maxUnavailable: '100%', inPlaceUpdateStrategy: { timeoutSeconds: 30 } };
    const { code, stdout, stderr } = await apply(n);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('neoset.neo.io/warned created');
    expect(stderr).toContain('Warning: spec.updateStrategy.partition (5) > spec.replicas (3): no pod will be updated');
    expect(stderr).toContain('Warning: spec.updateStrategy.maxUnavailable (100%) >= spec.replicas (3)');
    expect(stderr).toContain('Warning: spec.minReadySeconds (30) >= inPlaceUpdateStrategy.timeoutSeconds (30)');
    console.log(`kubectl apply printed:\n${stderr.trim()}\n${stdout.trim()}`);
  });

  describe('UPDATE', () => {
    beforeAll(async () => {
      const { code, stderr } = await apply(validNeoSet('stable'));
      expect(code, stderr).toBe(0);
    });

    it.each([
      ['spec.serviceName', (n: any) => (n.spec.serviceName = 'elsewhere')],
      ['spec.selector', (n: any) => (n.spec.selector.matchExpressions = [{ key: 'app', operator: 'Exists' }])],
      ['spec.podManagementPolicy', (n: any) => (n.spec.podManagementPolicy = 'Parallel')],
      ['spec.volumeClaimTemplates', (n: any) => (n.spec.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }])],
    ])('refuses a change of the immutable %s', async (field, change) => {
      const n = validNeoSet('stable');
      change(n);
      const { code, stderr } = await apply(n);
      expect(code).not.toBe(0);
      expect(stderr).toContain(`${field}: field is immutable`);
    });

    it('allows a change of mutable fields (partition, image)', async () => {
      const n = validNeoSet('stable');
      n.spec.updateStrategy = { partition: 1 };
      n.spec.template.spec.containers[0].image = 'nginx:1.28';
      const { code, stderr } = await apply(n);
      expect(code, stderr).toBe(0);
      expect((await getNeoSet('stable')).spec.updateStrategy.partition).toBe(1);
    });

    it('under InPlaceOnly, refuses a template change that cannot be done in place and allows an image change', async () => {
      const n = validNeoSet('inplace');
      n.spec.updateStrategy = { type: 'InPlaceOnly' };
      expect((await apply(n)).code).toBe(0);
      const env = structuredClone(n);
      env.spec.template.spec.containers[0].env = [{ name: 'MODE', value: 'fast' }];
      const refused = await apply(env);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('spec.template.spec.containers[0].env: cannot change in place and spec.updateStrategy.type is InPlaceOnly');
      const image = structuredClone(n);
      image.spec.template.spec.containers[0].image = 'nginx:1.28';
      const allowed = await apply(image);
      expect(allowed.code, allowed.stderr).toBe(0);
    });

    it('under InPlaceOnly, refuses a QoS class change naming the field and allows a pure cpu change (SPEC §4.9)', async () => {
      const n = validNeoSet('resize');
      n.spec.updateStrategy = { type: 'InPlaceOnly' };
      n.spec.template.spec.containers[0].resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '128Mi' } };
      expect((await apply(n)).code).toBe(0);
      const guaranteed = structuredClone(n);
      guaranteed.spec.template.spec.containers[0].resources = { requests: { cpu: '500m', memory: '128Mi' }, limits: { cpu: '500m', memory: '128Mi' } };
      const refused = await apply(guaranteed);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('spec.template.spec.containers[0].resources: QoS class Burstable -> Guaranteed: cannot change in place and spec.updateStrategy.type is InPlaceOnly');
      const cpu = structuredClone(n);
      cpu.spec.template.spec.containers[0].resources = { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '500m', memory: '128Mi' } };
      const allowed = await apply(cpu);
      expect(allowed.code, allowed.stderr).toBe(0);
      console.log(`refused: ${refused.stderr.trim()}`);
    });

    it('holds the replicas quota on kubectl scale (the scale subresource)', async () => {
      const refused = await kubectl(['scale', 'neoset/stable', '-n', ns.name, '--replicas=1001']);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('spec.replicas: 1001 is over the quota of 1000 (NEOSET_MAX_REPLICAS)');
      const allowed = await kubectl(['scale', 'neoset/stable', '-n', ns.name, '--replicas=5']);
      expect(allowed.code, allowed.stderr).toBe(0);
    });
  });
});
