// The API server's Warning headers (admission's warnings, deprecations) as the client reports them:
// RFC 7234 warn-values, several per header, quoted text unescaped, bounded.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createKubeClient, warningTexts } from '../../shared/k8s/client.ts';

describe('warningTexts', () => {
  it('reads each warn-value of a header, unescaping its text', () => {
    expect(warningTexts('299 - "data format downgrade 3->2 accepted"')).toEqual(['data format downgrade 3->2 accepted']);
    expect(warningTexts('299 - "one, with a comma", 299 - "two \\"quoted\\""')).toEqual(['one, with a comma', 'two "quoted"']);
  });
  it('ignores what is not a warn-value and bounds what is', () => {
    expect(warningTexts('garbage')).toEqual([]);
    expect(warningTexts(Array.from({ length: 30 }, (_, i) => `299 - "w${i}"`).join(', '))).toHaveLength(20);
    expect(warningTexts(`299 - "${'x'.repeat(5000)}"`)[0]).toHaveLength(1024);
  });
});

describe('KubeClient warning option', () => {
  it('tells each Warning header of a response, also of an error answer', async () => {
    const server = createServer((req, res) => {
      res.setHeader('Warning', ['299 - "first"', '299 - "second"']);
      res.setHeader('Content-Type', 'application/json');
      res.statusCode = req.method === 'PATCH' ? 200 : 422;
      res.end(req.method === 'PATCH' ? '{}' : '{"kind":"Status","reason":"Invalid","message":"no"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const kc = new KubeConfig();
      kc.loadFromClusterAndUser({ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }, { name: 'u' });
      const client = createKubeClient(kc);
      const seen: string[] = [];
      await client.request('PATCH', '/apis/neo.io/v1alpha1/namespaces/d/neosets/a', { body: {}, patch: 'merge', warning: (w) => seen.push(w) });
      await expect(client.request('GET', '/api/v1/pods', { warning: (w) => seen.push(w) })).rejects.toThrow('no');
      expect(seen).toEqual(['first', 'second', 'first', 'second']);
    } finally {
      server.close();
    }
  });
});
