// The functions' HTTP listener: keep-alive outlasting queue-proxy's idle connections, and the
// plain-http METRICS_PORT listener (issue 14).
import http from 'node:http';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { metricsOnly, metricsPortFromEnv, timeoutsFromEnv } from '../../shared/http/main.ts';
import { DEFAULT_TIMEOUTS, KEEP_ALIVE_TIMEOUT_MS, startServer, type RunningServer } from '../../shared/http/serve.ts';
import { silent } from './admission-review.ts';

const app = new Hono();
app.get('/healthz', (c) => c.json({ status: 'ok' }));
app.get('/metrics', (c) => c.text('neoset_up 1\n'));
app.post('/validate', (c) => c.json({}));

let running: RunningServer | undefined;
afterEach(async () => {
  await running?.close(100);
  running = undefined;
});

function get(agent: http.Agent, port: number, path: string): Promise<{ status: number; socketPort: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      const socketPort = res.socket.localPort ?? 0;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, socketPort }));
    });
    req.on('error', reject);
  });
}

describe('startServer', () => {
  it("keeps an idle keep-alive connection past queue-proxy's 90 s (Go's IdleConnTimeout), not Node's 5 s", async () => {
    running = await startServer({ app, port: 0, hostname: '127.0.0.1', logger: silent });
    const server = running.server as http.Server;
    expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(90_000);
    expect(server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
    expect([server.headersTimeout, server.requestTimeout]).toEqual([DEFAULT_TIMEOUTS.headersMs, DEFAULT_TIMEOUTS.requestMs]);
    // The same socket answers again after 6 s idle: with Node's default (5 s) the server would have
    // closed it, and a client sending at that moment gets a reset. headersTimeout (5 s) counts from
    // a request's first byte, not from the idle connection's: it does not cut it either.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await get(agent, running.port, '/healthz');
      await new Promise((r) => setTimeout(r, 6000));
      const second = await get(agent, running.port, '/healthz');
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.socketPort).toBe(first.socketPort);
    } finally {
      agent.destroy();
    }
  }, 15_000);
});

describe('close', () => {
  it('ends a keep-alive connection with the answer in flight, not keepAliveTimeout or graceMs later', async () => {
    const slow = new Hono();
    slow.get('/slow', async (c) => {
      await new Promise((r) => setTimeout(r, 300));
      return c.text('done');
    });
    const server = await startServer({ app: slow, port: 0, hostname: '127.0.0.1', logger: silent });
    const agent = new http.Agent({ keepAlive: true });
    try {
      const answered = new Promise<{ body: string; connection: string | undefined }>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port: server.port, path: '/slow', agent }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d));
          res.on('end', () => resolve({ body, connection: res.headers.connection }));
        });
        req.on('error', reject);
      });
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      await server.close(3000);
      const ms = Date.now() - started;
      expect(await answered).toEqual({ body: 'done', connection: 'close' });
      expect(ms).toBeLessThan(2000);
    } finally {
      agent.destroy();
    }
  }, 10_000);
});

describe('NEOSET_HEADERS_TIMEOUT_MS / NEOSET_REQUEST_TIMEOUT_MS', () => {
  it('are read from the environment, within bounds, the headers no longer than the request', () => {
    expect(timeoutsFromEnv({})).toEqual(DEFAULT_TIMEOUTS);
    expect(timeoutsFromEnv({ NEOSET_HEADERS_TIMEOUT_MS: '2000', NEOSET_REQUEST_TIMEOUT_MS: '3000' })).toEqual({ headersMs: 2000, requestMs: 3000 });
    // A longer headers' deadline alone takes the request's along.
    expect(timeoutsFromEnv({ NEOSET_HEADERS_TIMEOUT_MS: '20000' })).toEqual({ headersMs: 20000, requestMs: 20000 });
    expect(() => timeoutsFromEnv({ NEOSET_REQUEST_TIMEOUT_MS: '0' })).toThrow('NEOSET_REQUEST_TIMEOUT_MS="0": expected milliseconds from 1000 to 300000');
    expect(() => timeoutsFromEnv({ NEOSET_HEADERS_TIMEOUT_MS: '5s' })).toThrow('NEOSET_HEADERS_TIMEOUT_MS="5s"');
    expect(() => timeoutsFromEnv({ NEOSET_HEADERS_TIMEOUT_MS: '8000', NEOSET_REQUEST_TIMEOUT_MS: '4000' })).toThrow('NEOSET_HEADERS_TIMEOUT_MS=8000 is over NEOSET_REQUEST_TIMEOUT_MS=4000');
  });
});

describe('METRICS_PORT', () => {
  it('serves GET /metrics alone, over plain http', async () => {
    running = await startServer({ app: metricsOnly(app), port: 0, hostname: '127.0.0.1', logger: silent });
    expect(running.protocol).toBe('http');
    const res = await fetch(`http://127.0.0.1:${running.port}/metrics`);
    expect(await res.text()).toBe('neoset_up 1\n');
    expect((await fetch(`http://127.0.0.1:${running.port}/validate`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${running.port}/healthz`)).status).toBe(404);
  });

  it('is read from the environment (unset: no second listener; a bad value names the variable)', () => {
    expect(metricsPortFromEnv({})).toBeNull();
    expect(metricsPortFromEnv({ METRICS_PORT: '9090' })).toBe(9090);
    expect(() => metricsPortFromEnv({ METRICS_PORT: 'x' })).toThrow('METRICS_PORT="x" is not a TCP port');
  });
});
