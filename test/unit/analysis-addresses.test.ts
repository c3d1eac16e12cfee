// SPEC §2.3 "Analysis addresses are the operator's": the allow-list (normal form, parsing), and the
// canary's Prometheus query at the edge (shared/k8s/prometheus-query.ts) against real local listeners
// on 127.0.0.1: an unlisted address is never contacted, a redirect is not followed, an answer over the
// cap is cut, and what reaches status is a fixed reason, never the server's text.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/config-error.ts';
import { analysisAddressesFromEnv, describeAllowed, isAllowedAddress, normaliseAddress } from '../../shared/core/canary/addresses.ts';
import { MAX_ANSWER_BYTES, measure } from '../../shared/k8s/prometheus-query.ts';

describe('analysis addresses', () => {
  it.each([
    ['http://prom:9090', 'http://prom:9090'],
    ['http://prom:9090/', 'http://prom:9090'],
    ['HTTP://Prom:9090//', 'http://prom:9090'],
    ['http://prom:80/', 'http://prom'],
    ['https://prom.example:443/prometheus/', 'https://prom.example/prometheus'],
    ['http://[::1]:9090', 'http://[::1]:9090'],
  ])('%s is %s in normal form', (address, normal) => {
    expect(normaliseAddress(address)).toBe(normal);
  });

  it.each(['prom:9090', 'ftp://prom/', 'http://user:pw@prom:9090', 'http://prom:9090/?x=1', 'http://prom:9090/#x', 'not a url'])('%s has no normal form', (address) => {
    expect(normaliseAddress(address)).toBeNull();
  });

  it('reads a comma- or whitespace-separated list, normalised, duplicates once; unset or empty: none', () => {
    expect(analysisAddressesFromEnv({})).toEqual([]);
    expect(analysisAddressesFromEnv({ NEOSET_ANALYSIS_ADDRESSES: ' ' })).toEqual([]);
    expect(analysisAddressesFromEnv({ NEOSET_ANALYSIS_ADDRESSES: 'http://prom:9090/, https://other:443\nhttp://PROM:9090' })).toEqual(['http://prom:9090', 'https://other']);
  });

  it.each(['prom:9090', 'http://a:1,ftp://b', 'http://u:p@prom:9090'])('refuses %j at startup, naming the variable', (value) => {
    expect(() => analysisAddressesFromEnv({ NEOSET_ANALYSIS_ADDRESSES: value })).toThrow(ConfigError);
    expect(() => analysisAddressesFromEnv({ NEOSET_ANALYSIS_ADDRESSES: value })).toThrow('NEOSET_ANALYSIS_ADDRESSES');
  });

  it('does not echo an entry with credentials into the startup error (it goes to the log)', () => {
    expect(() => analysisAddressesFromEnv({ NEOSET_ANALYSIS_ADDRESSES: 'http://prom:9090,http://user:s3cret@other:9090' })).toThrow(/^((?!s3cret).)*carries credentials((?!s3cret).)*$/);
  });

  it('matches in normal form, and says what is allowed or how to allow one', () => {
    const allowed = analysisAddressesFromEnv({ NEOSET_ANALYSIS_ADDRESSES: 'http://prom:9090' });
    expect(isAllowedAddress(allowed, 'http://prom:9090/')).toBe(true);
    expect(isAllowedAddress(allowed, 'http://prom:9091')).toBe(false);
    expect(isAllowedAddress(allowed, 'http://prom:9090/?query=x')).toBe(false);
    expect(isAllowedAddress([], 'http://prom:9090')).toBe(false);
    expect(describeAllowed(allowed)).toBe('allowed (NEOSET_ANALYSIS_ADDRESSES): http://prom:9090');
    expect(describeAllowed([])).toContain('the operator lists them in NEOSET_ANALYSIS_ADDRESSES (ConfigMap neoset-analysis, key addresses');
  });
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A listener on 127.0.0.1 that records every request it receives. */
interface Listener {
  url: string;
  requests: string[];
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise((r) => s.close(r));
    }),
  );
});

async function listen(handler: Handler): Promise<Listener> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const json = (body: unknown, status = 200): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const vector = (...values: string[]) => ({ status: 'success', data: { resultType: 'vector', result: values.map((v) => ({ metric: {}, value: [1700000000, v] })) } });
const analysis = (address: string) => ({ address, query: 'sum(rate(errors[1m]))', successCondition: 'result < 0.05' });

describe('measure (the Prometheus query at the edge)', () => {
  it('queries an allowed address, written in any of its forms, and reads the one number', async () => {
    const prom = await listen(json(vector('0.25')));
    expect(await measure(analysis(`${prom.url}/`), { allowed: [prom.url] })).toEqual({ value: 0.25 });
    expect(prom.requests.map((u) => new URL(u, prom.url)).map((u) => [u.pathname, u.searchParams.get('query')])).toEqual([['/api/v1/query', 'sum(rate(errors[1m]))']]);
  });

  it('never contacts an address the install does not allow (none allowed, or another one)', async () => {
    const target = await listen(json(vector('1')));
    for (const allowed of [[], ['http://127.0.0.1:1']]) {
      expect(await measure(analysis(target.url), { allowed })).toEqual({ error: `Prometheus at ${target.url}: address not allowed by this install` });
    }
    expect(target.requests).toEqual([]);
  });

  it('does not follow a redirect: the place it points to receives nothing', async () => {
    const elsewhere = await listen(json(vector('0')));
    const prom = await listen((_req, res) => {
      res.writeHead(302, { location: `${elsewhere.url}/api/v1/query?query=up` });
      res.end();
    });
    expect(await measure(analysis(prom.url), { allowed: [prom.url] })).toEqual({ error: `Prometheus at ${prom.url}: answered a redirect (HTTP 302), not followed` });
    expect(prom.requests.length).toBe(1);
    expect(elsewhere.requests).toEqual([]);
  });

  it.each([
    ['with a Content-Length', true],
    ['streamed (chunked, no length)', false],
  ])('cuts an answer over 64 KiB (%s)', async (_how, declared) => {
    const big = JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: { pad: 'x'.repeat(4 * MAX_ANSWER_BYTES) }, value: [1, '0'] }] } });
    const prom = await listen((_req, res) => {
      res.writeHead(200, declared ? { 'content-length': Buffer.byteLength(big) } : {});
      // Chunk by chunk: the reader must stop at the cap, not after the whole body.
      for (let i = 0; i < big.length; i += 8192) res.write(big.slice(i, i + 8192));
      res.end();
    });
    expect(await measure(analysis(prom.url), { allowed: [prom.url] })).toEqual({ error: `Prometheus at ${prom.url}: answer over 64 KiB` });
  });

  it.each<[string, Handler, string]>([
    ['an error answer', json({ status: 'error', errorType: 'bad_data', error: 'parse error: SECRET-TEXT' }, 400), 'answered an error (bad_data)'],
    ['an error answer of unknown type', json({ status: 'error', errorType: 'SECRET-TEXT', error: 'SECRET-TEXT' }, 422), 'answered an error'],
    ['an HTTP error with a text body', (_q, res) => res.writeHead(500).end('SECRET-TEXT internal details'), 'answered HTTP 500'],
    ['a 200 that is not Prometheus', (_q, res) => res.writeHead(200).end('<html>SECRET-TEXT</html>'), 'the answer is not a Prometheus query result'],
    ['several samples', json(vector('1', '2')), 'the query did not return one sample'],
    ['a matrix', json({ status: 'success', data: { resultType: 'SECRET-TEXT', result: [] } }), 'the query did not return one sample'],
    ['NaN', json(vector('NaN')), 'the sample is not a number'],
    ['a sample that is text', json(vector('SECRET-TEXT')), 'the sample is not a number'],
  ])('%s: a fixed reason, none of the answer’s text', async (_name, handler, reason) => {
    const prom = await listen(handler);
    const m = await measure(analysis(prom.url), { allowed: [prom.url] });
    expect(m).toEqual({ error: `Prometheus at ${prom.url}: ${reason}` });
  });

  it('unreachable: the socket error code; no answer in time: the timeout', async () => {
    const closed = await listen(() => {});
    await new Promise((r) => servers.pop()!.close(r));
    expect(await measure(analysis(closed.url), { allowed: [closed.url] })).toEqual({ error: `Prometheus at ${closed.url}: unreachable (ECONNREFUSED)` });
    const silent = await listen(() => {});
    expect(await measure(analysis(silent.url), { allowed: [silent.url], timeoutMs: 200 })).toEqual({ error: `Prometheus at ${silent.url}: unreachable (no answer within 0.2s)` });
  });
});
