// The admission server over HTTPS: it serves the certificate from TLS_CERT_FILE / TLS_KEY_FILE and
// picks up a rotated certificate without a restart (and keeps the old one while a rotation is half done);
// with TLS_CLIENT_CA_FILE, it takes reviews only over connections that presented a certificate of that CA.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../shared/http/serve.ts';
import { createCa, issueClientCert, issueServingCert, type CertKeyPair } from '../../dev/cluster/certs.ts';
import { review, silent, testApp } from './admission-review.ts';
import { validNeoSet } from './admission-cases.ts';

function get(port: number, ca: string): Promise<{ status: number; serial: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port, path: '/healthz', ca, agent: false }, (res) => {
      const serial = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().serialNumber;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, serial }));
    });
    req.on('error', reject);
  });
}

async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('admission server TLS', () => {
  let dir: string;
  let server: RunningServer;
  let caA: CertKeyPair;
  let caB: CertKeyPair;
  let certB: CertKeyPair;
  const files = () => ({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'neoset-admission-tls-'));
    [caA, caB] = await Promise.all([createCa('ca-a'), createCa('ca-b')]);
    const certA = await issueServingCert(caA, ['127.0.0.1']);
    certB = await issueServingCert(caB, ['127.0.0.1']);
    await writeFile(files().certFile, certA.certPem);
    await writeFile(files().keyFile, certA.keyPem);
    server = await startServer({ app: testApp(), port: 0, hostname: '127.0.0.1', tls: files(), logger: silent, pollMs: 50 });
  }, 30_000);

  afterAll(async () => {
    await server?.close(1000);
    await rm(dir, { recursive: true, force: true });
  });

  it('serves https with the configured certificate', async () => {
    expect(server.protocol).toBe('https');
    expect((await get(server.port, caA.certPem)).status).toBe(200);
  });

  it('keeps the old certificate while the key does not match the new one yet', async () => {
    await writeFile(files().certFile, certB.certPem);
    expect(await server.reloadTls()).toBe(false);
    expect((await get(server.port, caA.certPem)).status).toBe(200);
  });

  it('serves the rotated certificate once both files changed, without a restart', async () => {
    await writeFile(files().keyFile, certB.keyPem);
    const after = await eventually(() => get(server.port, caB.certPem));
    expect(after.status).toBe(200);
    await expect(get(server.port, caA.certPem)).rejects.toThrow();
  });
});

describe('admission server with a client CA (TLS_CLIENT_CA_FILE)', () => {
  let dir: string;
  let server: RunningServer;
  let serving: CertKeyPair;
  let servingCa: CertKeyPair;
  let clientCaA: CertKeyPair;
  let clientCaB: CertKeyPair;
  let clientA: CertKeyPair;
  let clientB: CertKeyPair;
  const caFile = () => join(dir, 'client-ca.crt');

  function postValidate(port: number, client?: CertKeyPair): Promise<number> {
    const body = JSON.stringify(review('CREATE', validNeoSet()));
    return new Promise((resolve, reject) => {
      const req = https.request(
        { host: '127.0.0.1', port, path: '/validate', method: 'POST', ca: servingCa.certPem, agent: false, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }, ...(client ? { cert: client.certPem, key: client.keyPem } : {}) },
        (res) => (res.resume(), res.on('end', () => resolve(res.statusCode ?? 0))),
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'neoset-admission-client-ca-'));
    [servingCa, clientCaA, clientCaB] = await Promise.all([createCa('serving'), createCa('client-a'), createCa('client-b')]);
    [serving, clientA, clientB] = await Promise.all([
      issueServingCert(servingCa, ['127.0.0.1']),
      issueClientCert(clientCaA, { commonName: 'kube-apiserver-webhook-client' }),
      issueClientCert(clientCaB, { commonName: 'kube-apiserver-webhook-client' }),
    ]);
    await writeFile(join(dir, 'tls.crt'), serving.certPem);
    await writeFile(join(dir, 'tls.key'), serving.keyPem);
    await writeFile(caFile(), clientCaA.certPem);
    server = await startServer({ app: testApp(), port: 0, hostname: '127.0.0.1', tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), clientCaFile: caFile() }, logger: silent, pollMs: 50 });
  }, 30_000);

  afterAll(async () => {
    await server?.close(1000);
    await rm(dir, { recursive: true, force: true });
  });

  it('answers a review over a connection with a certificate of the CA; 401 without one or with another CA\'s; /healthz open', async () => {
    expect(await postValidate(server.port, clientA)).toBe(200);
    expect(await postValidate(server.port)).toBe(401);
    expect(await postValidate(server.port, clientB)).toBe(401);
    expect((await get(server.port, servingCa.certPem)).status).toBe(200);
  });

  it('reloads a rotated client CA without a restart', async () => {
    await writeFile(caFile(), clientCaB.certPem);
    await eventually(async () => expect(await postValidate(server.port, clientB)).toBe(200));
    expect(await postValidate(server.port, clientA)).toBe(401);
  });
});
