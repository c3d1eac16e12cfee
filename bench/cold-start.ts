// Cold start of each function: process start → first answered GET /healthz, the median of RUNS
// (default 7) runs, next to a bare hono hello-world on the same Node (in the same rounds) — and the resident memory
// (VmRSS) of the process right after that first answer. For reconcile and readiness also process
// start → first CloudEvent answered (a recorded event of examples/events/, POSTed until answered),
// with the bundle and its compile cache: the work a first event does — reading the object from the
// API server (a stub answering 404, so the event is answered as "gone"), parsing, logging — counts.
// Three ways to start a function:
//   bundled          node dist/<fn>.mjs (npm run build), as the image runs it
//   bundled + cache  the same with NODE_COMPILE_CACHE warmed by one earlier run (the image bakes it)
//   source           node functions/<fn>/server.ts (type stripping, node_modules resolution)
// No API server is contacted at start: for /healthz the functions get a kubeconfig that points nowhere.
//   node bench/cold-start.ts          (RUNS=15 for more runs)
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, FUNCTIONS, REPO_ROOT, type FunctionName } from '../scripts/build.ts';
import { createCa, issueServingCert } from '../dev/cluster/certs.ts';
import { freePorts } from '../dev/cluster/ports.ts';
import { probe, type TlsClient } from '../dev/cluster/probe.ts';

const RUNS = Number(process.env.RUNS ?? 7);
const TIMEOUT_MS = 30_000;

interface Start {
  args: string[];
  env?: Record<string, string>;
  tls?: TlsClient;
  /** What counts as the first answer: default GET /healthz answered 200. */
  answered?: (base: string) => Promise<boolean>;
}

interface Sample {
  ms: number;
  rssMiB: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return line ? Number(line.split(/\s+/)[1]) / 1024 : NaN;
}

/** One cold start; `graceful` ends it with SIGTERM (a clean exit writes the compile cache). */
async function coldStart(start: Start, graceful = false): Promise<Sample> {
  const [port] = await freePorts(1);
  const base = `${start.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const answered = start.answered ?? (async (b: string) => (await probe(`${b}/healthz`, start.tls, 1000))?.status === 200);
  const began = performance.now();
  const child = spawn(process.execPath, start.args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...start.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${start.args.join(' ')} exited ${child.exitCode} before answering`);
      if (await answered(base)) break;
      if (performance.now() - began > TIMEOUT_MS) throw new Error(`${start.args.join(' ')}: no answer within ${TIMEOUT_MS} ms`);
      await sleep(2);
    }
    const ms = performance.now() - began;
    return { ms, rssMiB: rssMiB(child.pid!) };
  } finally {
    child.kill(graceful ? 'SIGTERM' : 'SIGKILL');
    await exited;
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Medians of RUNS cold starts of each of `starts`, taken in rounds (one of each per round), so that a
 * machine getting busier or quieter meanwhile weighs on every column alike.
 */
async function measureAll(starts: Start[]): Promise<{ ms: number; rssMiB: number }[]> {
  const samples: Sample[][] = starts.map(() => []);
  for (let i = 0; i < RUNS; i++) for (const [j, start] of starts.entries()) samples[j].push(await coldStart(start));
  return samples.map((xs) => ({ ms: median(xs.map((s) => s.ms)), rssMiB: median(xs.map((s) => s.rssMiB)) }));
}

const HELLO = [
  "import { Hono } from 'hono';",
  "import { serve } from '@hono/node-server';",
  'const app = new Hono();',
  "app.get('/healthz', (c) => c.text('ok'));",
  "serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' });",
].join('\n');

const work = mkdtempSync(join(tmpdir(), 'neoset-cold-start-'));
try {
  const dist = join(work, 'dist');
  const { bytes } = await build(dist);
  const kubeconfig = join(work, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'nowhere', cluster: { server: 'https://127.0.0.1:9' } }],
      users: [{ name: 'bench', user: { token: 'unused' } }],
      contexts: [{ name: 'nowhere', context: { cluster: 'nowhere', user: 'bench' } }],
      'current-context': 'nowhere',
    }),
  );
  // Admission serves https in production: it reads its certificate at start too.
  const ca = await createCa('neoset-bench-ca');
  const cert = await issueServingCert(ca);
  writeFileSync(join(work, 'tls.crt'), cert.certPem);
  writeFileSync(join(work, 'tls.key'), cert.keyPem);

  const startOf = (fn: FunctionName, entry: string, extra: Record<string, string> = {}): Start => ({
    args: [entry],
    env: {
      KUBECONFIG: kubeconfig,
      ...(fn === 'admission' ? { TLS_CERT_FILE: join(work, 'tls.crt'), TLS_KEY_FILE: join(work, 'tls.key') } : {}),
      ...extra,
    },
    tls: fn === 'admission' ? { ca: ca.certPem } : undefined,
  });

  // The API server of the first event, as for a NeoSet deleted meanwhile: every list empty, every
  // object 404 — the reads a first event makes, and an answer without writes.
  const stub = createServer((req, res) => {
    req.resume();
    const list = /\/(pods|controllerrevisions|neosets|persistentvolumeclaims)(\?|$)/.test(req.url ?? '');
    res.writeHead(list ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(list ? { kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [] } : { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `${req.url} not found` }));
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  const stubKubeconfig = join(work, 'stub-kubeconfig');
  writeFileSync(
    stubKubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // client-node takes plain http only with skip-TLS-verify set.
      clusters: [{ name: 'stub', cluster: { server: `http://127.0.0.1:${(stub.address() as AddressInfo).port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'bench', user: { token: 'unused' } }],
      contexts: [{ name: 'stub', context: { cluster: 'stub', user: 'bench' } }],
      'current-context': 'stub',
    }),
  );
  const FIRST_EVENT: Partial<Record<FunctionName, string>> = { reconcile: '0002-neoset-mysql-update', readiness: '0003-pod-mysql-4-update' };
  /** POSTs the recorded event (binary mode) until it is answered 2xx. */
  const eventAnswered = (event: string) => {
    const base = join(REPO_ROOT, 'examples', 'events', event);
    const headers = Object.fromEntries(
      readFileSync(`${base}.headers`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
    );
    const body = readFileSync(`${base}.data.json`);
    return async (url: string) => {
      try {
        return (await fetch(`${url}/`, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) })).ok;
      } catch {
        return false;
      }
    };
  };

  process.stdout.write(`cold start: process start → first answered GET /healthz (first event: → first CloudEvent answered), median of ${RUNS} runs, Node ${process.version}\n\n`);
  const header = ['', 'bundled', 'bundled+cache', '÷ hello-world', 'first event', 'source', 'RSS after start', 'bundle'];
  const rows: string[][] = [];
  for (const fn of FUNCTIONS) {
    const bundle = join(dist, `${fn}.mjs`);
    const cacheDir = join(work, `compile-cache-${fn}`);
    await coldStart(startOf(fn, bundle, { NODE_COMPILE_CACHE: cacheDir }), true); // writes the cache
    const event = FIRST_EVENT[fn];
    // Unbundled: hono and @hono/node-server resolved from node_modules (-e runs in the repository).
    const [baseline, bundled, cached, source, firstEvent] = await measureAll([
      { args: ['--input-type=module', '-e', HELLO] },
      startOf(fn, bundle),
      startOf(fn, bundle, { NODE_COMPILE_CACHE: cacheDir }),
      startOf(fn, join(REPO_ROOT, 'functions', fn, 'server.ts')),
      ...(event ? [{ ...startOf(fn, bundle, { NODE_COMPILE_CACHE: cacheDir, KUBECONFIG: stubKubeconfig }), answered: eventAnswered(event) }] : []),
    ]);
    rows.push([
      fn,
      `${bundled.ms.toFixed(0)} ms`,
      `${cached.ms.toFixed(0)} ms`,
      `${(cached.ms / baseline.ms).toFixed(2)}× of ${baseline.ms.toFixed(0)} ms`,
      firstEvent ? `${firstEvent.ms.toFixed(0)} ms` : '',
      `${source.ms.toFixed(0)} ms`,
      `${cached.rssMiB.toFixed(0)} MiB (${baseline.rssMiB.toFixed(0)})`,
      `${(bytes[fn] / 1024).toFixed(0)} KiB`,
    ]);
  }
  stub.close();
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('   ');
  process.stdout.write(`${line(header)}\n${rows.map(line).join('\n')}\n`);
  process.stdout.write('\n÷ hello-world: bundled+cache over a bare hono hello-world, measured in the same rounds as the row.\n');
  process.stdout.write('first event: bundled+cache, start → the recorded event answered, read against a stub API server.\n');
  process.stdout.write('RSS: VmRSS of the bundled+cache process right after its first /healthz answer (in brackets: of the hello-world).\n');
} finally {
  rmSync(work, { recursive: true, force: true });
}
