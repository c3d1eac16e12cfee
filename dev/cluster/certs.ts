// Test PKI: a CA, the certificates a local control plane needs, and serving certificates for
// anything the API server must call over https (the admission webhook, SPEC §5).
//
// Keys are ECDSA P-256 from node:crypto (fast, and accepted by every Kubernetes component); the
// certificates are made by the `openssl` CLI, because node:crypto can parse X.509 but not issue it.
// Every call gets its own openssl config, so the host's openssl.cnf plays no part.
import { execFile } from 'node:child_process';
import { generateKeyPair, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** A certificate and its private key, both PEM. */
export interface CertKeyPair {
  certPem: string;
  keyPem: string;
}

export type CertificateAuthority = CertKeyPair;

export interface Subject {
  commonName: string;
  /** X.509 O values; Kubernetes reads them as the client's groups. */
  organizations?: string[];
}

export interface ServiceAccountKeys {
  privateKeyPem: string;
  publicKeyPem: string;
}

export interface ClusterPki {
  ca: CertificateAuthority;
  /** kube-apiserver's serving certificate: 127.0.0.1, localhost, ::1. */
  apiserver: CertKeyPair;
  /** CN=admin, O=system:masters: the kubeconfig tests and kubectl use. */
  admin: CertKeyPair;
  /** CN=system:kube-controller-manager: bound by RBAC's bootstrap policy. */
  controllerManager: CertKeyPair;
  serviceAccount: ServiceAccountKeys;
  /**
   * A CA of its own for the certificate kube-apiserver presents to admission webhooks (SPEC §2.3),
   * and that certificate. Not the cluster CA: a webhook trusting that would take any user's client
   * certificate (admin's included) for the API server's.
   */
  webhookClientCa: CertificateAuthority;
  webhookClient: CertKeyPair;
}

export const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '::1'];

const run = promisify(execFile);

function newKeyPair(): Promise<{ privateKey: string; publicKey: string }> {
  return new Promise((resolve, reject) =>
    generateKeyPair(
      'ec',
      {
        namedCurve: 'prime256v1',
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      },
      (error, publicKey, privateKey) => (error ? reject(error) : resolve({ privateKey, publicKey })),
    ),
  );
}

/** An openssl config with the subject in [dn] and the certificate extensions in [ext]. */
function opensslConfig(subject: Subject, extensions: string[], hosts: string[] = []): string {
  const organizations = (subject.organizations ?? []).map((o, i) => `${i}.O = ${o}`);
  const altNames = hosts.map((host, i) => (isIP(host) ? `IP.${i} = ${host}` : `DNS.${i} = ${host}`));
  return [
    '[req]',
    'distinguished_name = dn',
    'prompt = no',
    '[dn]',
    ...organizations,
    `CN = ${subject.commonName}`,
    '[ext]',
    ...extensions,
    ...(hosts.length > 0 ? ['subjectAltName = @alt', '[alt]', ...altNames] : []),
    '',
  ].join('\n');
}

/** Runs `work(dir)` in a fresh private temporary directory, always removed afterwards. */
async function inTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'neoset-pki-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function createCa(commonName = 'neoset-test-ca', days = 3650): Promise<CertificateAuthority> {
  return inTempDir(async (dir) => {
    const { privateKey } = await newKeyPair();
    const config = opensslConfig({ commonName }, [
      'basicConstraints = critical, CA:TRUE',
      'keyUsage = critical, keyCertSign, cRLSign, digitalSignature',
      'subjectKeyIdentifier = hash',
    ]);
    await writeFile(join(dir, 'ca.key'), privateKey, { mode: 0o600 });
    await writeFile(join(dir, 'openssl.cnf'), config);
    await run('openssl', [
      'req', '-x509', '-new', '-sha256', '-days', String(days),
      '-config', join(dir, 'openssl.cnf'), '-extensions', 'ext',
      '-key', join(dir, 'ca.key'), '-out', join(dir, 'ca.crt'),
    ]);
    return { certPem: await readFile(join(dir, 'ca.crt'), 'utf8'), keyPem: privateKey };
  });
}

async function issue(
  ca: CertificateAuthority,
  subject: Subject,
  usage: 'serverAuth' | 'clientAuth',
  hosts: string[],
  days: number,
): Promise<CertKeyPair> {
  return inTempDir(async (dir) => {
    const { privateKey } = await newKeyPair();
    const config = opensslConfig(
      subject,
      [
        'basicConstraints = critical, CA:FALSE',
        'keyUsage = critical, digitalSignature, keyEncipherment',
        `extendedKeyUsage = ${usage}`,
        'authorityKeyIdentifier = keyid',
      ],
      hosts,
    );
    const path = (name: string) => join(dir, name);
    await writeFile(path('leaf.key'), privateKey, { mode: 0o600 });
    await writeFile(path('ca.key'), ca.keyPem, { mode: 0o600 });
    await writeFile(path('ca.crt'), ca.certPem);
    await writeFile(path('openssl.cnf'), config);
    await run('openssl', ['req', '-new', '-config', path('openssl.cnf'), '-key', path('leaf.key'), '-out', path('leaf.csr')]);
    await run('openssl', [
      'x509', '-req', '-sha256', '-days', String(days),
      '-in', path('leaf.csr'), '-CA', path('ca.crt'), '-CAkey', path('ca.key'),
      '-set_serial', `0x${randomBytes(16).toString('hex')}`,
      '-extfile', path('openssl.cnf'), '-extensions', 'ext', '-out', path('leaf.crt'),
    ]);
    return { certPem: await readFile(path('leaf.crt'), 'utf8'), keyPem: privateKey };
  });
}

/** A serving certificate for `hosts` (IPs and DNS names), e.g. an admission webhook on 127.0.0.1. */
export function issueServingCert(ca: CertificateAuthority, hosts: string[] = LOOPBACK_HOSTS, days = 365): Promise<CertKeyPair> {
  if (hosts.length === 0) throw new Error('issueServingCert: at least one host is needed');
  return issue(ca, { commonName: hosts[0] }, 'serverAuth', hosts, days);
}

/** A client certificate: Kubernetes authenticates it as user CN in groups O. */
export function issueClientCert(ca: CertificateAuthority, subject: Subject, days = 365): Promise<CertKeyPair> {
  return issue(ca, subject, 'clientAuth', [], days);
}

/** The key pair kube-apiserver signs ServiceAccount tokens with (and kube-controller-manager too). */
export async function createServiceAccountKeys(): Promise<ServiceAccountKeys> {
  const { privateKey, publicKey } = await newKeyPair();
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/** The subject of the certificate kube-apiserver presents to admission webhooks. */
export const WEBHOOK_CLIENT_CN = 'kube-apiserver-webhook-client';

export async function createClusterPki(): Promise<ClusterPki> {
  const [ca, webhookClientCa] = await Promise.all([createCa(), createCa('neoset-webhook-client-ca')]);
  const [apiserver, admin, controllerManager, serviceAccount, webhookClient] = await Promise.all([
    issueServingCert(ca, LOOPBACK_HOSTS),
    issueClientCert(ca, { commonName: 'admin', organizations: ['system:masters'] }),
    issueClientCert(ca, { commonName: 'system:kube-controller-manager' }),
    createServiceAccountKeys(),
    issueClientCert(webhookClientCa, { commonName: WEBHOOK_CLIENT_CN }),
  ]);
  return { ca, apiserver, admin, controllerManager, serviceAccount, webhookClientCa, webhookClient };
}
