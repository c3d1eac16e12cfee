// Cold start of each function: process start → first answered GET /healthz, the median of RUNS
// (default 7) runs, next to a bare hono hello-world on the same Node — and the resident memory
// (VmRSS) of the process right after that first answer. Three ways to start a function:
//   bundled          node dist/<fn>.mjs (npm run build), as the image runs it
//   bundled + cache  the same with NODE_COMPILE_CACHE warmed by one earlier run (the image bakes it)
//   source           node functions/<fn>/server.ts (type stripping, node_modules resolution)
// No API server is contacted at start: the functions get a kubeconfig that points nowhere.
//   node bench/cold-start.ts          (RUNS=15 for more runs)
import { spawn } from 'node:child_process';
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
  const url = `${start.tls ? 'https' : 'http'}://127.0.0.1:${port}/healthz`;
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
      if ((await probe(url, start.tls, 1000))?.status === 200) break;
      if (performance.now() - began > TIMEOUT_MS) throw new Error(`${start.args.join(' ')}: no /healthz within ${TIMEOUT_MS} ms`);
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

async function measure(start: Start): Promise<{ ms: number; rssMiB: number }> {
  const samples: Sample[] = [];
  for (let i = 0; i < RUNS; i++) samples.push(await coldStart(start));
  return { ms: median(samples.map((s) => s.ms)), rssMiB: median(samples.map((s) => s.rssMiB)) };
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

  process.stdout.write(`cold start: process start → first answered GET /healthz, median of ${RUNS} runs, Node ${process.version}\n\n`);
  const header = ['', 'bundled', 'bundled+cache', 'source', 'RSS after start', 'bundle'];
  const rows: string[][] = [];
  for (const fn of FUNCTIONS) {
    const bundle = join(dist, `${fn}.mjs`);
    const cacheDir = join(work, `compile-cache-${fn}`);
    const bundled = await measure(startOf(fn, bundle));
    await coldStart(startOf(fn, bundle, { NODE_COMPILE_CACHE: cacheDir }), true); // writes the cache
    const cached = await measure(startOf(fn, bundle, { NODE_COMPILE_CACHE: cacheDir }));
    const source = await measure(startOf(fn, join(REPO_ROOT, 'functions', fn, 'server.ts')));
    rows.push([fn, `${bundled.ms.toFixed(0)} ms`, `${cached.ms.toFixed(0)} ms`, `${source.ms.toFixed(0)} ms`, `${cached.rssMiB.toFixed(0)} MiB`, `${(bytes[fn] / 1024).toFixed(0)} KiB`]);
  }
  // Unbundled: hono and @hono/node-server resolved from node_modules (-e runs in the repository).
  const baseline = await measure({ args: ['--input-type=module', '-e', HELLO] });
  rows.push(['hono hello-world', `${baseline.ms.toFixed(0)} ms`, '', '', `${baseline.rssMiB.toFixed(0)} MiB`, '']);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('   ');
  process.stdout.write(`${line(header)}\n${rows.map(line).join('\n')}\n`);
  process.stdout.write('\nRSS: VmRSS of the bundled+cache process right after its first /healthz answer (the baseline: of the hello-world).\n');
} finally {
  rmSync(work, { recursive: true, force: true });
}
