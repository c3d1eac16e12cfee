// A real Prometheus for tests (Debian's `prometheus` package; test/cluster/prepare.ts installs it):
// started on a free loopback port with its own temporary storage, scraping the given targets every
// `scrapeIntervalMs`, queried through its HTTP API, stopped with its data removed. Also `promtool`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePorts } from '../../dev/cluster/ports.ts';
import { startProcess, type ManagedProcess } from '../../dev/cluster/processes.ts';
import { poll } from '../../dev/cluster/wait.ts';

export interface ScrapeTarget {
  /** The job label. */
  job: string;
  /** http://host:port/path of the metrics endpoint. */
  url: string;
  /** Target labels, as service discovery would add them (e.g. the pod's namespace). */
  labels?: Record<string, string>;
  /** honor_labels: keep a scraped label that clashes with a target label (PodMonitor honorLabels). */
  honorLabels?: boolean;
}

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface Prometheus {
  url: string;
  /** An instant query; throws on a PromQL error. */
  query(expr: string): Promise<Sample[]>;
  /** Resolves once every target has been scraped successfully. */
  targetsUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrometheus(opts: { targets: ScrapeTarget[]; scrapeIntervalMs?: number }): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'neoset-prometheus-'));
  const interval = `${opts.scrapeIntervalMs ?? 1000}ms`;
  const config = {
    global: { scrape_interval: interval, evaluation_interval: interval },
    scrape_configs: opts.targets.map((t) => {
      const u = new URL(t.url);
      return {
        job_name: t.job,
        scheme: u.protocol.replace(':', ''),
        metrics_path: u.pathname,
        honor_labels: t.honorLabels ?? false,
        static_configs: [{ targets: [u.host], labels: t.labels ?? {} }],
      };
    }),
  };
  writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
  const [port] = await freePorts(1);
  const process: ManagedProcess = startProcess('prometheus', 'prometheus', [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--storage.tsdb.retention.time=1h',
  ], join(dir, 'prometheus.log'));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await process.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  try {
    await poll('prometheus to be ready', async () => {
      if (process.hasExited()) throw new Error(`prometheus exited:\n${process.tail(20)}`);
      return (await fetch(`${url}/-/ready`).catch(() => null))?.ok ? true : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200 });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    query: async (expr) => (await api<{ result: Sample[] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
    async targetsUp(timeoutMs = 30_000) {
      await poll('every scrape target to be up', async () => {
        const { activeTargets } = await api<{ activeTargets: { health: string }[] }>('/api/v1/targets');
        return activeTargets.length === opts.targets.length && activeTargets.every((t) => t.health === 'up') ? true : undefined;
      }, { timeoutMs, intervalMs: 250 });
    },
    stop,
  };
}

/** Runs promtool; never throws for a non-zero exit: check `code`. */
export function promtool(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}
