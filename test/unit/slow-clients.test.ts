// Slow clients get nothing (issue 34, SPEC §2.5 "slow or incomplete requests hold no budget"): a
// body is charged as its bytes arrive, not as its Content-Length declares, and a request that has
// not arrived whole within NEOSET_REQUEST_TIMEOUT_MS (its headers within NEOSET_HEADERS_TIMEOUT_MS)
// is dropped. The functions as `npm run dev` runs them (dev/functions.ts: real processes from their
// entry points on loopback ports), against real sockets that declare large bodies and send a byte
// now and then. The requests answered here need no API server: the kubeconfig names one nobody runs.
import http from 'node:http';
import https from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueServingCert } from '../../dev/cluster/certs.ts';
import { resourceEvent, toBinaryRequest } from '../../dev/bridge/pump.ts';
import { startFunction, type RunningFunction } from '../../dev/functions.ts';
import type { KubeObject } from '../../shared/k8s/watch.ts';
import { validNeoSet } from './admission-cases.ts';
import { review } from './admission-review.ts';

const REQUEST_TIMEOUT_MS = 3000;
const HEADERS_TIMEOUT_MS = 2000;
const TIMEOUTS = { NEOSET_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), NEOSET_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) };
/** Node checks its connections' deadlines once a second (connectionsCheckingInterval); a loaded machine's event loop lags. */
const CHECK_SLACK_MS = 2500;

/** A NeoSet's pod with no update in flight: readiness answers it from the event, reading nothing. */
const settledPod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-0', namespace: 'default', uid: 'uid-web-0', resourceVersion: '7', labels: { 'neoset.neo.io/name': 'web' } },
  spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'main', image: 'nginx:1.0', imageID: 'sha256:a', ready: true, started: true, restartCount: 0, state: { running: {} } }] },
};

/** A connection that sent `head` and then one byte every 500 ms, until the server drops it (no head: one that sends nothing). */
interface SlowClient {
  openedAt: number;
  /** When the server ended the connection; undefined while open. */
  closedAt?: number;
  /** What the server wrote back (nothing, or a 408 as it drops it). */
  answer: string;
}

function trickle(socket: net.Socket, head?: string): SlowClient {
  const slow: SlowClient = { openedAt: performance.now(), answer: '' };
  socket.setEncoding('utf8').on('data', (d: string) => (slow.answer += d));
  socket.on('error', () => undefined); // the server's reset, as it drops it
  const timer = head === undefined ? undefined : setInterval(() => socket.writable && socket.write('x'), 500);
  socket.on('close', () => {
    clearInterval(timer);
    slow.closedAt = performance.now();
  });
  if (head !== undefined) socket.write(head);
  return slow;
}

const requestHead = (path: string, headers: Record<string, string>, contentLength?: number) =>
  [`POST ${path} HTTP/1.1`, 'host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), ...(contentLength === undefined ? [] : [`content-length: ${contentLength}`])].join('\r\n') +
  '\r\n\r\n{';

/** POSTs `body` on a connection of its own; the answer's status and body, and the milliseconds it took. */
function timedPost(url: string, path: string, body: string, headers: Record<string, string>, ca?: string): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  const { hostname, port, protocol } = new URL(url);
  const send = protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = send({ host: hostname, port, path, method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent: false, ca }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A Pod MODIFIED event's headers and body, as the dev bridge sends it (binary mode, ApiServerSource's). */
async function podEvent(pod: KubeObject): Promise<{ headers: Record<string, string>; body: string }> {
  const request = toBinaryRequest('http://readiness/', resourceEvent('https://10.96.0.1:443', 'MODIFIED', pod));
  return { headers: Object.fromEntries(request.headers), body: await request.text() };
}

/** Waits until every slow client is dropped, or `ms` after the first was opened; the longest any lived. */
async function droppedWithin(slow: SlowClient[], ms: number): Promise<{ open: number; longestMs: number }> {
  const deadline = slow[0].openedAt + ms;
  while (slow.some((s) => s.closedAt === undefined) && performance.now() < deadline) await sleep(100);
  const open = slow.filter((s) => s.closedAt === undefined).length;
  const longestMs = Math.max(...slow.map((s) => (s.closedAt ?? performance.now()) - s.openedAt));
  return { open, longestMs: Math.round(longestMs) };
}

describe('slow clients get nothing', () => {
  let dir: string;
  let caPem: string;
  let readiness: RunningFunction;
  let admission: RunningFunction;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'neoset-slow-clients-'));
    // An API server nobody listens on: client-node loads the file; nothing answered here calls it.
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]\nusers: [{name: none, user: {token: none}}]\n' +
        'contexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n',
    );
    const ca = await createCa('slow-clients-ca');
    const serving = await issueServingCert(ca, ['127.0.0.1']);
    caPem = ca.certPem;
    await writeFile(join(dir, 'tls.crt'), serving.certPem);
    await writeFile(join(dir, 'tls.key'), serving.keyPem);
    [readiness, admission] = await Promise.all([
      startFunction({ name: 'readiness', port: 0, kubeconfig, logPath: join(dir, 'readiness.log'), env: TIMEOUTS }),
      startFunction({ name: 'admission', port: 0, kubeconfig, logPath: join(dir, 'admission.log'), env: TIMEOUTS, tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), caPem } }),
    ]);
    // readiness loads client-node a second after listening (main.ts), holding its event loop about a
    // second here: the latencies measured below are to be the budget's, not that load's.
    await sleep(3000);
  }, 90_000);

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await Promise.all([readiness?.process.stop(), admission?.process.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('an event function answers a normal event in < 1 s with six 4 MiB bodies trickling in, and drops them at the deadline', async () => {
    const port = Number(new URL(readiness.url).port);
    const event = await podEvent(settledPod);
    expect((await timedPost(readiness.url, '/', event.body, event.headers)).status).toBe(200);
    const slow = Array.from({ length: 6 }, () => {
      const socket = net.connect({ host: '127.0.0.1', port });
      sockets.push(socket);
      return trickle(socket, requestHead('/', event.headers, 4 * 1024 * 1024));
    });
    // Headers that never end, and a connection that sends nothing: dropped at the headers' deadline.
    const socket = net.connect({ host: '127.0.0.1', port });
    const silent = net.connect({ host: '127.0.0.1', port });
    sockets.push(socket, silent);
    const slowHeaders = [trickle(socket, 'POST / HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: '), trickle(silent)];
    await sleep(500); // every slow request's headers are in, and their handlers run

    const answered = await timedPost(readiness.url, '/', event.body, event.headers);
    process.stdout.write(`readiness, six 4 MiB bodies trickling: a normal event answered ${answered.status} in ${answered.ms.toFixed(1)} ms\n`);
    expect({ status: answered.status, body: answered.body }).toEqual({ status: 200, body: '' });
    expect(answered.ms).toBeLessThan(1000);

    const headers = await droppedWithin(slowHeaders, HEADERS_TIMEOUT_MS + CHECK_SLACK_MS);
    const bodies = await droppedWithin(slow, REQUEST_TIMEOUT_MS + CHECK_SLACK_MS);
    process.stdout.write(`readiness: trickled headers and a silent connection dropped after ${headers.longestMs} ms, trickled bodies after ${bodies.longestMs} ms at most\n`);
    expect(headers.open).toBe(0);
    expect(bodies).toMatchObject({ open: 0 });
    // Nothing was answered to them but the deadline's 408.
    expect(slow.map((s) => s.answer.split('\r\n')[0])).toEqual(Array(6).fill('HTTP/1.1 408 Request Timeout'));
    // And the budget they held is back: a normal event is still answered.
    expect((await timedPost(readiness.url, '/', event.body, event.headers)).status).toBe(200);
  }, 30_000);

  it('admission answers a normal review in < 1 s with 64 slow reviews open, and drops them at the deadline', async () => {
    const port = Number(new URL(admission.url).port);
    // 64 reviews of an ordinary size (128 KiB: 64 of them are admission's whole budget), over TLS.
    const slow = await Promise.all(
      Array.from(
        { length: 64 },
        () =>
          new Promise<SlowClient>((resolve, reject) => {
            const socket = tls.connect({ host: '127.0.0.1', port, ca: caPem }, () => resolve(trickle(socket, requestHead('/mutate', { 'content-type': 'application/json' }, 128 * 1024))));
            socket.once('error', reject);
            sockets.push(socket);
          }),
      ),
    );
    await sleep(500);

    const body = JSON.stringify(review('CREATE', validNeoSet()));
    const answered = await timedPost(admission.url, '/mutate', body, { 'content-type': 'application/json' }, caPem);
    process.stdout.write(`admission, 64 slow reviews open: a normal review answered ${answered.status} in ${answered.ms.toFixed(1)} ms\n`);
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body).response).toMatchObject({ allowed: true });
    expect(answered.ms).toBeLessThan(1000);

    const dropped = await droppedWithin(slow, REQUEST_TIMEOUT_MS + CHECK_SLACK_MS);
    process.stdout.write(`admission: slow reviews dropped after ${dropped.longestMs} ms at most\n`);
    expect(dropped.open).toBe(0);
  }, 30_000);
});
