// The simulated kubelet's /containerLogs request parsing (log-options.ts) and file streaming
// (log-stream.ts), without a cluster; the server itself is tested against the real API server in
// test/integration/kubectl-logs.test.ts.

import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { LogRequestError, parseLogRequest } from '../../dev/kubelet/log-options.ts';
import { streamLog } from '../../dev/kubelet/log-stream.ts';

const parse = (url: string) => {
  const u = new URL(url, 'https://kubelet');
  return parseLogRequest(u.pathname, u.searchParams, 1_000_000);
};
const refusal = (url: string) => {
  try {
    parse(url);
  } catch (err) {
    if (err instanceof LogRequestError) return `${err.status} ${err.message}`;
    throw err;
  }
  return 'accepted';
};

describe('containerLogs request', () => {
  it('reads the names and PodLogOptions as kubelet does', () => {
    expect(parse('/containerLogs/ns/web-0.x/app?follow=true&previous=1&tailLines=10&limitBytes=5&sinceSeconds=2&unknown=x')).toEqual({
      namespace: 'ns',
      pod: 'web-0.x',
      container: 'app',
      follow: true,
      previous: true,
      timestamps: false,
      tailLines: 10,
      limitBytes: 5,
      sinceMs: 998_000,
    });
    expect(parse('/containerLogs/ns/p/c?tail=all').tailLines).toBeUndefined();
    expect(parse('/containerLogs/ns/p/c?tail=3').tailLines).toBe(3);
  });

  it('refuses names that are not DNS names, and unbounded or ambiguous parameters', () => {
    expect(refusal('/containerLogs/ns/..%2F..%2Fetc/passwd')).toBe('400 pod: not a DNS subdomain');
    // A URL's dot segments are resolved before (the server's new URL): `..` reaches the parser only raw.
    expect(() => parseLogRequest('/containerLogs/ns/p/..', new URLSearchParams(), 0)).toThrow('container: not a DNS label');
    expect(() => parseLogRequest('/containerLogs/../p/c', new URLSearchParams(), 0)).toThrow('namespace: not a DNS label');
    expect(refusal('/containerLogs/NS/p/c')).toBe('400 namespace: not a DNS label');
    expect(refusal(`/containerLogs/ns/${'a'.repeat(254)}/c`)).toBe('400 pod: not a DNS subdomain');
    expect(refusal('/containerLogs/ns/p/c/extra')).toMatch(/^404 /);
    expect(refusal('/stats/summary')).toMatch(/^404 /);
    expect(refusal('/containerLogs/ns/p/c?tailLines=-1')).toMatch(/^400 tailLines: /);
    expect(refusal('/containerLogs/ns/p/c?limitBytes=0')).toBe('400 limitBytes: must be greater than 0');
    expect(refusal('/containerLogs/ns/p/c?limitBytes=1234567890123456')).toMatch(/^400 limitBytes: /);
    expect(refusal('/containerLogs/ns/p/c?follow=yes')).toMatch(/^400 follow: /);
    expect(refusal('/containerLogs/ns/p/c?tailLines=1&tail=2')).toBe('400 tailLines: given more than once');
    expect(refusal('/containerLogs/ns/p/c?sinceSeconds=1&sinceTime=2026-01-01T00:00:00Z')).toMatch(/^422 /);
    expect(refusal('/containerLogs/ns/p/c?stream=Stderr')).toMatch(/^400 stream: /);
  });
});

describe('log file streaming', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubelet-logs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const collect = async (path: string, opts: Partial<Parameters<typeof streamLog>[2]> = {}) => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await streamLog(path, out, { follow: false, live: () => false, gone: new Promise(() => {}), ...opts });
    return Buffer.concat(chunks).toString();
  };

  it('serves the last lines and at most limitBytes, across read chunks', async () => {
    const path = join(dir, '0.log');
    const many = Array.from({ length: 30_000 }, (_, i) => `line ${i}`).join('\n');
    writeFileSync(path, `${many}\n`);
    expect(await collect(path, { tailLines: 2 })).toBe('line 29998\nline 29999\n');
    expect(await collect(path, { tailLines: 0 })).toBe('');
    expect((await collect(path, { tailLines: 20_000 })).split('\n')[0]).toBe('line 10000');
    expect(await collect(path, { tailLines: 1, limitBytes: 4 })).toBe('line');
    expect(await collect(path, { limitBytes: 12 })).toBe('line 0\nline ');
    const partial = join(dir, '1.log');
    writeFileSync(partial, 'a\nb\nno newline yet');
    expect(await collect(partial, { tailLines: 2 })).toBe('b\nno newline yet');
    expect(await collect(partial, { tailLines: 10 })).toBe('a\nb\nno newline yet');
  });

  it('follows what is written until the writer ends, or until the client goes', async () => {
    const path = join(dir, '2.log');
    writeFileSync(path, 'one\n');
    let live = true;
    const followed = collect(path, { follow: true, live: () => live });
    setTimeout(() => appendFileSync(path, 'two\n'), 300);
    setTimeout(() => {
      appendFileSync(path, 'three\n');
      live = false;
    }, 600);
    expect(await followed).toBe('one\ntwo\nthree\n');

    let leave = () => {};
    const gone = new Promise<void>((resolve) => (leave = resolve));
    const left = collect(path, { follow: true, live: () => true, gone });
    setTimeout(leave, 300);
    expect(await left).toBe('one\ntwo\nthree\n');
  });
});
