// `npm run admission:cert`: the admission webhook's TLS without cert-manager. Keeps one CA (the Secret
// neoset-admission-ca: ca.crt, ca.key; never mounted by a pod) and issues from it a serving certificate
// for neoset-admission.neoset-system.svc, stored as the Secret neoset-admission-tls (tls.crt, tls.key,
// ca.crt) that knative/admission.yaml mounts; the webhooks' caBundle is the CA. Run it after
// `kubectl apply -k knative/` (against the current kubectl context, or KUBECONFIG).
//
// Run it again to rotate: only the serving certificate changes, the CA and so caBundle stay. That is
// what makes a rotation safe: a pod sees a changed Secret only when kubelet next syncs its volume
// (about a minute), and until then it still serves the old certificate, which the unchanged caBundle
// still trusts. A new CA (first run, `--new-ca`, or the CA ending before the new certificate would)
// is published next to the previous one (caBundle = new + previous) before any certificate signed by
// it is served, so both the old and the new serving certificate verify during the switch.
//   --days N    serving certificate validity (default 365)
//   --new-ca    make a new CA now (the previous one stays trusted until it expires or the next --new-ca)
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { createCa, issueServingCert, type CertificateAuthority } from '../dev/cluster/certs.ts';

export const NAMESPACE = 'neoset-system';
export const SERVICE = 'neoset-admission';
export const TLS_SECRET = 'neoset-admission-tls';
export const CA_SECRET = 'neoset-admission-ca';
export const WEBHOOK_CONFIGURATIONS = [
  ['mutatingwebhookconfiguration', 'neoset-admission'],
  ['validatingwebhookconfiguration', 'neoset-admission'],
] as const;
/** A CA outlives many serving certificates: it is what the webhooks trust. */
export const CA_DAYS = 3650;

export type Kubectl = (args: string[], input?: string) => Promise<{ code: number; stdout: string; stderr: string }>;

export interface RotateOptions {
  kubectl: Kubectl;
  /** Where both Secrets live (default neoset-system). */
  namespace?: string;
  /** The serving certificate's names (default: the Service's DNS names). */
  hosts?: string[];
  days?: number;
  newCa?: boolean;
  now?: Date;
}

export interface Rotation {
  /** The CA that signed the new serving certificate. */
  ca: CertificateAuthority;
  /** What caBundle now holds, PEM: the CA, then the previous one during a switch. */
  bundlePem: string;
  caChanged: boolean;
  servingCertPem: string;
}

const b64 = (pem: string) => Buffer.from(pem).toString('base64');
const unb64 = (text: string | undefined) => (text ? Buffer.from(text, 'base64').toString('utf8') : '');
const expires = (pem: string) => new Date(new X509Certificate(pem).validTo);

async function must(kubectl: Kubectl, args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** The stored CA (and the one before it, if still valid), or null when there is none yet. */
async function readCa(kubectl: Kubectl, namespace: string): Promise<{ ca: CertificateAuthority; previousPem: string } | null> {
  const r = await kubectl(['-n', namespace, 'get', 'secret', CA_SECRET, '-o', 'json']);
  if (r.code !== 0) {
    if (/NotFound/.test(r.stderr)) return null;
    throw new Error(`cannot read Secret ${namespace}/${CA_SECRET}: ${r.stderr}`);
  }
  const data = JSON.parse(r.stdout).data ?? {};
  const certPem = unb64(data['ca.crt']);
  const keyPem = unb64(data['ca.key']);
  if (!certPem || !keyPem) throw new Error(`Secret ${namespace}/${CA_SECRET} lacks ca.crt or ca.key`);
  return { ca: { certPem, keyPem }, previousPem: unb64(data['previous-ca.crt']) };
}

/** The CA Secret, then caBundle, then the serving certificate: in that order (see the top of the file). */
export async function rotate(opts: RotateOptions): Promise<Rotation> {
  const { kubectl } = opts;
  const namespace = opts.namespace ?? NAMESPACE;
  const days = opts.days ?? 365;
  const now = opts.now ?? new Date();
  const hosts = opts.hosts ?? [`${SERVICE}.${namespace}.svc`, `${SERVICE}.${namespace}.svc.cluster.local`, `${SERVICE}.${namespace}`, SERVICE];

  const stored = await readCa(kubectl, namespace);
  const servingEnds = new Date(now.getTime() + days * 86_400_000);
  const renew = stored === null || opts.newCa === true || expires(stored.ca.certPem) <= servingEnds;
  const ca = renew ? await createCa('neoset-admission-ca', Math.max(CA_DAYS, days + 1)) : stored.ca;
  // The CA replaced stays trusted until it expires: pods may serve a certificate it signed for
  // another minute or so. Only the one CA before the current is kept.
  const previousPem = renew ? (stored?.ca.certPem ?? '') : stored.previousPem;
  const previous = previousPem && expires(previousPem) > now ? previousPem : '';
  const bundlePem = ca.certPem + previous;

  // 1. The CA first: a run that stops after this step is finished by the next one.
  const caData: Record<string, string> = { 'ca.crt': b64(ca.certPem), 'ca.key': b64(ca.keyPem) };
  if (previous) caData['previous-ca.crt'] = b64(previous);
  await must(kubectl, ['apply', '-f', '-'], stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: { name: CA_SECRET, namespace, labels: { 'app.kubernetes.io/part-of': 'neoset' } },
    data: caData,
  }));
  // 2. caBundle before any certificate signed by a new CA is served. Unchanged CA: the same bytes.
  for (const [kind, name] of WEBHOOK_CONFIGURATIONS) {
    const count = (await must(kubectl, ['get', kind, name, '-o', 'jsonpath={.webhooks[*].name}'])).split(' ').filter(Boolean).length;
    const patch = Array.from({ length: count }, (_, i) => ({ op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: b64(bundlePem) }));
    await must(kubectl, ['patch', kind, name, '--type=json', '-p', JSON.stringify(patch)]);
  }
  // 3. The serving certificate, which pods pick up when kubelet syncs the Secret.
  const serving = await issueServingCert(ca, hosts, days);
  await must(kubectl, ['apply', '-f', '-'], stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: TLS_SECRET, namespace, labels: { 'app.kubernetes.io/part-of': 'neoset' } },
    data: { 'tls.crt': b64(serving.certPem), 'tls.key': b64(serving.keyPem), 'ca.crt': b64(bundlePem) },
  }));
  return { ca, bundlePem, caChanged: renew, servingCertPem: serving.certPem };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { days: { type: 'string', default: '365' }, 'new-ca': { type: 'boolean', default: false } } });
  const days = Number(values.days);
  if (!Number.isInteger(days) || days < 1) {
    process.stderr.write(`--days must be a positive integer, got ${values.days}\n`);
    process.exit(2);
  }
  const kubectl: Kubectl = (args, input) =>
    new Promise((resolve) => {
      const child = spawn('kubectl', args, { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      child.on('error', (e) => resolve({ code: -1, stdout, stderr: e.message }));
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      child.stdin.end(input ?? '');
    });
  try {
    const r = await rotate({ kubectl, days, newCa: values['new-ca'] });
    const caEnds = expires(r.ca.certPem).toISOString().slice(0, 10);
    process.stdout.write(
      r.caChanged
        ? `new CA (valid until ${caEnds}) in Secret ${NAMESPACE}/${CA_SECRET}; caBundle holds it${r.bundlePem !== r.ca.certPem ? ' and the previous CA' : ''}\n`
        : `kept the CA (valid until ${caEnds}); caBundle unchanged\n`,
    );
    process.stdout.write(`serving certificate for ${SERVICE}.${NAMESPACE}.svc valid ${days} days in Secret ${NAMESPACE}/${TLS_SECRET}; the admission pods pick it up when kubelet syncs the Secret\n`);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
}
