// The three functions of the dev stack, each a real child process on a local port: from source
// (`node functions/<name>/server.ts`, Node's type stripping) or, with `bundled`, the dist/ bundles
// that the image runs. Children die with the dev process, even on SIGKILL (setpriv --pdeathsig).
import { join } from 'node:path';
import { freePorts } from './cluster/ports.ts';
import { waitForHealthy } from './cluster/probe.ts';
import { startProcess, type ManagedProcess } from './cluster/processes.ts';

export type FunctionName = 'reconcile' | 'readiness' | 'admission';

export const REPO_ROOT = new URL('..', import.meta.url).pathname.replace(/\/$/, '');

export interface FunctionOptions {
  name: FunctionName;
  /** 0: any free port. */
  port: number;
  kubeconfig: string;
  logPath: string;
  /**
   * https with this certificate (admission); the CA is what /healthz is checked against. With
   * clientCaFile, the webhooks take only callers with a client certificate of that CA (SPEC §2.3).
   */
  tls?: { certFile: string; keyFile: string; caPem: string; clientCaFile?: string };
  bundled?: boolean;
  /** The file node runs instead (e.g. a bundle built elsewhere: test/integration/memory-bounded.test.ts). */
  entry?: string;
  /** METRICS_PORT: /metrics also on this plain-http port (admission's scrape port in knative/admission.yaml). */
  metricsPort?: number;
  env?: Record<string, string>;
  /** The address others call it at (default 127.0.0.1); any other makes it listen on every interface. */
  host?: string;
}

export interface RunningFunction {
  name: FunctionName;
  url: string;
  /** Where Prometheus scrapes it: METRICS_PORT's listener when set, else the function's own port. */
  metricsUrl: string;
  process: ManagedProcess;
}

export const entryOf = (name: FunctionName, bundled = false) =>
  bundled ? join(REPO_ROOT, 'dist', `${name}.mjs`) : join(REPO_ROOT, 'functions', name, 'server.ts');

export async function startFunction(opts: FunctionOptions): Promise<RunningFunction> {
  const port = opts.port === 0 ? (await freePorts(1))[0] : opts.port;
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: !opts.host || opts.host === '127.0.0.1' ? '127.0.0.1' : '0.0.0.0',
    KUBECONFIG: opts.kubeconfig,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    ...(opts.tls ? { TLS_CERT_FILE: opts.tls.certFile, TLS_KEY_FILE: opts.tls.keyFile } : {}),
    ...(opts.tls?.clientCaFile ? { TLS_CLIENT_CA_FILE: opts.tls.clientCaFile } : {}),
    ...(opts.metricsPort ? { METRICS_PORT: String(opts.metricsPort) } : {}),
    ...opts.env,
  };
  // `env` sets the child's environment and execs node: the pid (and its death signal) stay the same.
  // NEOSET_CPU_PROF_DIR: each function writes a V8 CPU profile there when it stops (node --cpu-prof;
  // Node refuses it in NODE_OPTIONS), for finding where a benchmark's function CPU goes.
  const profile = process.env.NEOSET_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.NEOSET_CPU_PROF_DIR}`, `--cpu-prof-name=${opts.name}-\${pid}.cpuprofile`] : [];
  const child = startProcess(opts.name, 'env', [...Object.entries(env).map(([k, v]) => `${k}=${v}`), process.execPath, ...profile, opts.entry ?? entryOf(opts.name, opts.bundled)], opts.logPath);
  const scheme = opts.tls ? 'https' : 'http';
  const url = `${scheme}://${opts.host ?? '127.0.0.1'}:${port}`;
  try {
    await waitForHealthy(child, `${scheme}://127.0.0.1:${port}/healthz`, opts.tls ? { ca: opts.tls.caPem } : undefined, 60_000);
  } catch (error) {
    await child.stop();
    throw error;
  }
  const metricsUrl = opts.metricsPort ? `http://127.0.0.1:${opts.metricsPort}/metrics` : `${url}/metrics`;
  return { name: opts.name, url, metricsUrl, process: child };
}
