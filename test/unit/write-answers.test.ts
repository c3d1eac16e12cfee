// A write's answer is read for its metadata (shared/k8s/apply.ts answeredForMetadata): a created pod
// comes back with its template's env values, up to a MiB each, which would be parsed into the run's
// memory for nothing (memory-bounded.test.ts's sweep of NeoSets with 1 MiB env values). Checked on the
// client's real parsing of an answer over HTTP.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { answeredForMetadata } from '../../shared/k8s/apply.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';

type PodAnswer = { metadata: { name: string; resourceVersion: string; annotations: Record<string, string> }; spec: { containers: { env: { value: string }[] }[] } };

describe('answeredForMetadata', () => {
  it("cuts a write's long strings, but NeoSet's own annotations; a GET's answer is whole", async () => {
    const blob = 'e'.repeat(1024 * 1024);
    const state = JSON.stringify({ step: 'x'.repeat(20 * 1024) });
    const server = createServer((_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ kind: 'Pod', metadata: { name: 'p-0', resourceVersion: '42', annotations: { 'neoset.neo.io/inplace-state': state } }, spec: { containers: [{ name: 'main', env: [{ name: 'BLOB', value: blob }] }] } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const kc = new KubeConfig();
      kc.loadFromClusterAndUser({ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }, { name: 'u' });
      const writer = answeredForMetadata(createKubeClient(kc));
      for (const verb of ['POST', 'PATCH'] as const) {
        const written = await writer.request<PodAnswer>(verb, '/api/v1/namespaces/d/pods', { body: {}, ...(verb === 'PATCH' ? { patch: 'merge' as const } : {}) });
        expect(written.metadata.resourceVersion, verb).toBe('42');
        expect(written.metadata.annotations['neoset.neo.io/inplace-state'], verb).toBe(state);
        expect(written.spec.containers[0].env[0].value.length, verb).toBeLessThan(1024);
      }
      const read = await writer.request<PodAnswer>('GET', '/api/v1/namespaces/d/pods/p-0');
      expect(read.spec.containers[0].env[0].value).toBe(blob);
    } finally {
      server.close();
    }
  });
});
