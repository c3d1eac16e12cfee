// The admission server over HTTPS: it serves the certificate from TLS_CERT_FILE / TLS_KEY_FILE and
// picks up a rotated certificate without a restart (and keeps the old one while a rotation is half done).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../shared/http/serve.ts';
import { createCa, issueServingCert, type CertKeyPair } from '../../dev/cluster/certs.ts';
import { silent, testApp } from './admission-review.ts';

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
