// What bench/rollout.ts measures a rollout on, asked the same way whatever carries the events: the
// dev stack with our event bridge (dev/stack.ts, bridgeRolloutStack below) or the real Knative
// Eventing's ApiServerSource → Broker → Triggers (bench/lib/knative-side.ts).
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeClient } from '../../shared/k8s/client.ts';
import type { DevStack } from '../../dev/stack.ts';
import type { CpuGroup } from './cpu.ts';
import { logLines } from './step-breakdown.ts';

export interface RolloutStack {
  kubeConfig: KubeConfig;
  admin: KubeClient;
  /** The processes whose CPU a rollout is charged, looked up now (a restarted pod has a new pid). */
  cpuGroups(): CpuGroup[];
  /** Base URLs of the reconcile and readiness functions (their /metrics). */
  functionURLs: { reconcile: string; readiness: string };
  /** The reconcile function's log lines so far (its JSON lines carry each run's timing). */
  reconcileLog(): Promise<string[]>;
  /** Resolves once the event path has delivered what it had (bounded by the caller). */
  idle(): Promise<void>;
}

/** The bridge's dev stack: its pump knows when every event is delivered; its functions log to files. */
export function bridgeRolloutStack(stack: DevStack, admin: KubeClient, cpu: CpuGroup[]): RolloutStack {
  return {
    kubeConfig: stack.cluster.kubeConfig(),
    admin,
    cpuGroups: () => cpu,
    functionURLs: { reconcile: stack.functions.reconcile.url, readiness: stack.functions.readiness.url },
    reconcileLog: async () => logLines(stack.functions.reconcile.process.logPath),
    idle: () => stack.pump.idle(),
  };
}

/** The API requests reconcile and readiness counted themselves (neoset_api_requests_total), by function, verb and resource. */
export async function selfCounted(functionURLs: { reconcile: string; readiness: string }): Promise<Map<string, number>> {
  const series = new Map<string, number>();
  for (const name of ['reconcile', 'readiness'] as const) {
    for (const [line, value] of await functionMetrics(functionURLs[name], /^neoset_api_requests_total\{/)) series.set(`${name} ${line}`, value);
  }
  return series;
}

/**
 * Per function, verb and resource: what the counters grew by, most first (BENCH_BREAKDOWN=1 prints
 * it); with `pods`, each line also per pod updated.
 */
export function countedDelta(before: Map<string, number>, after: Map<string, number>, pods?: number): { sum: number; lines: string[] } {
  let sum = 0;
  const counted: [number, string][] = [];
  for (const [series, value] of after) {
    const delta = value - (before.get(series) ?? 0);
    sum += delta;
    if (delta > 0) counted.push([delta, series.replace('neoset_api_requests_total', '')]);
  }
  const lines = counted.sort((a, b) => b[0] - a[0]).map(([delta, series]) => `  ${delta}${pods ? ` (${(delta / pods).toFixed(2)}/pod)` : ''}\t${series}`);
  return { sum, lines };
}

/** The samples of a function's /metrics whose series matches `series`, by series text. */
export async function functionMetrics(url: string, series: RegExp): Promise<Map<string, number>> {
  const samples = new Map<string, number>();
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  for (const line of text.split('\n')) {
    const space = line.lastIndexOf(' ');
    if (space > 0 && series.test(line)) samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/**
 * The bridge's resync tick: each minute, as knative/eventing.yaml's PingSource (and the real-Knative
 * side of the benchmark), unless BENCH_RESYNC_MS says otherwise. A tick reconciles every NeoSet (three
 * reads each), so a faster one is a cost no install pays: at 3 s it was most of a 200-set fleet's
 * requests per pod.
 */
export function benchResyncMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.BENCH_RESYNC_MS ?? '60000';
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 100) throw new Error(`BENCH_RESYNC_MS: a whole number of milliseconds ≥ 100, got "${raw}"`);
  return ms;
}
