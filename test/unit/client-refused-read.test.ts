// A read refused while its answer arrives (read-budget.ts: ReadsBusy, TooLargeToDecide) fails that
// request and nothing else. Found by memory-bounded.test.ts's sweep (2026-12-07): reconcile exited on
// `uncaught exception` ReadsBusy. The client destroyed the request with the refusal as its error; when
// the whole answer had already arrived, the keep-alive socket was back in the agent's pool, where that
// error was emitted with no listener: an uncaught exception ends the process (shared/http/main.ts).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { InstanceBudget, ReadsBusy, runBudget, TooLargeToDecide } from '../../shared/k8s/read-budget.ts';
import { chargedInFlight } from '../../shared/k8s/reconcile.ts';

describe('a read refused by its budget', () => {
  it.each([100, 20_000, 200_000])('fails its own request only, with the refusal, and throws nothing uncaught (answers of %i bytes)', async (size) => {
    const body = JSON.stringify({ kind: 'Pod', metadata: { name: 'p' }, data: 'a'.repeat(size) });
    const server = createServer((_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const kc = new KubeConfig();
      kc.loadFromClusterAndUser({ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }, { name: 'u' });
      const client = createKubeClient(kc);
      const refusing = { charge: (bytes: number) => { if (bytes > 0) throw new ReadsBusy(bytes, 0); } };
      const results = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => client.request('GET', `/api/v1/namespaces/d/pods/p${i}`, i % 2 ? {} : { budget: refusing })));
      // The socket errors come a tick later: let them.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(uncaught).toEqual([]);
      results.forEach((r, i) => {
        if (i % 2) expect(r.status, `request ${i}`).toBe('fulfilled');
        else expect(r.status === 'rejected' && r.reason, `request ${i}`).toBeInstanceOf(ReadsBusy);
      });
    } finally {
      process.off('uncaughtException', onUncaught);
      server.close();
    }
  });

  it("holds nothing for a run's read that arrives after the run ended (a parallel read refused first)", async () => {
    const body = JSON.stringify({ kind: 'Pod', metadata: { name: 'p' }, data: 'a'.repeat(200_000) });
    let slowDone!: () => void;
    const slowAnswered = new Promise<void>((resolve) => (slowDone = resolve));
    const server = createServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url?.includes('slow')) setTimeout(() => res.end(body, slowDone), 300);
      else res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const kc = new KubeConfig();
      kc.loadFromClusterAndUser({ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }, { name: 'u' });
      const client = createKubeClient(kc);
      const instance = new InstanceBudget(1e9);
      // As a run reads its snapshot: its reads in parallel, the run over at the first failure.
      const run = runBudget(instance, 100_000);
      const slow = client.request('GET', '/api/v1/namespaces/d/pods/slow', { budget: run });
      await expect(Promise.all([client.request('GET', '/api/v1/namespaces/d/pods/fast', { budget: run }), slow])).rejects.toThrow(TooLargeToDecide);
      run.release();
      await slowAnswered;
      await slow.catch(() => undefined);
      expect(instance.held).toBe(0);
    } finally {
      server.close();
    }
  });

  it("charges a write's body and answer to the instance while in flight: refused before it is sent past the budget, all given back once answered", async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ kind: 'Pod', metadata: { name: 'p', resourceVersion: '9' } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const kc = new KubeConfig();
      kc.loadFromClusterAndUser({ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }, { name: 'u' });
      const instance = new InstanceBudget(1024 * 1024);
      const writer = chargedInFlight(createKubeClient(kc), instance);
      const pod = (bytes: number) => ({ kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', env: [{ name: 'BLOB', value: 'e'.repeat(bytes) }] }] } });
      await expect(writer.request('POST', '/api/v1/namespaces/d/pods', { body: pod(2 * 1024 * 1024) })).rejects.toThrow(ReadsBusy);
      expect(seen).toEqual([]);
      instance.take(100);
      expect(await writer.request<{ metadata: { resourceVersion: string } }>('POST', '/api/v1/namespaces/d/pods', { body: pod(512 * 1024) })).toMatchObject({ metadata: { resourceVersion: '9' } });
      expect(seen).toEqual(['POST /api/v1/namespaces/d/pods']);
      expect(instance.held).toBe(100);
    } finally {
      server.close();
    }
  });
});
