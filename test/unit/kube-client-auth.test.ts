// The client's TLS and auth options (shared/k8s/client.ts): made by client-node at most every
// AUTH_OPTIONS_TTL_MS, not per request (each making builds an Agent and, in a pod, reads the CA and
// token files), so a refreshed token still reaches the API server within that time, and a failure to
// make them (an exec plugin that fails) is not kept.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { AUTH_OPTIONS_TTL_MS, createKubeClient } from '../../shared/k8s/client.ts';

describe('KubeClient auth options', () => {
  it('are made once per AUTH_OPTIONS_TTL_MS: a new token is sent after it, never per request; a failure is not kept', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.setHeader('Content-Type', 'application/json');
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const kc = new KubeConfig();
      kc.loadFromClusterAndUser({ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }, { name: 'u' });
      let token = 'one';
      let made = 0;
      let failing = false;
      const apply = kc.applyToHTTPSOptions.bind(kc);
      kc.applyToHTTPSOptions = async (opts) => {
        made++;
        if (failing) throw new Error('exec plugin failed');
        await apply(opts);
        opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` };
      };
      let now = 0;
      const client = createKubeClient(kc, { clock: () => now });
      for (let i = 0; i < 5; i++) await client.request('GET', '/version');
      token = 'two';
      now = AUTH_OPTIONS_TTL_MS - 1;
      await client.request('GET', '/version');
      now = AUTH_OPTIONS_TTL_MS;
      await client.request('GET', '/version');
      expect(seen).toEqual([...Array(6).fill('Bearer one'), 'Bearer two']);
      expect(made).toBe(2);
      failing = true;
      now = 2 * AUTH_OPTIONS_TTL_MS;
      await expect(client.request('GET', '/version')).rejects.toThrow('exec plugin failed');
      failing = false;
      await client.request('GET', '/version');
      expect(seen.at(-1)).toBe('Bearer two');
      expect(made).toBe(4);
    } finally {
      server.close();
    }
  });
});
