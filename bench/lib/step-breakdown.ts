// Where a NeoSet step's time goes (issue 24 point 2): from a pod Ready on the new image, as the
// benchmark's watch saw it, to the next pod's drain written — through the reconcile function's event
// (its arrival: the kubelet's Ready event, since a pod done and available counts before readiness's
// finish write), the run that answered it (start, reads done, decision made) and that run's writes (the
// claim: its NeoSet status write, a PATCH of neosets/…/status; the drain: the pod's status PATCH). The readiness function's finish
// (the state annotation gone, seen by the same watch) is off that path now; its delay is reported last. The run's times are from the reconcile
// function's log (each event's line carries the run's timing, shared/k8s/run-timing.ts), on the same
// machine's clock as the watch's.
import { readFileSync } from 'node:fs';
import type { RunTiming } from '../../shared/k8s/run-timing.ts';
import { quantile } from './stats.ts';

interface Run {
  timing: RunTiming;
  /** When the events it answered reached the function. */
  arrivals: number[];
}

/** A log file's lines (the bridge's functions log to files of the dev stack). */
export const logLines = (path: string): string[] => readFileSync(path, 'utf8').split('\n');

/** The reconcile runs of NeoSet `namespace/name` in the reconcile function's log lines, keyed by their start. */
export function runsFromLog(lines: string[], namespace: string, name: string): Run[] {
  const runs = new Map<number, Run>();
  for (const line of lines) {
    if (!line.includes(`"${namespace}/${name}"`)) continue;
    let entry: { arrived?: number; neosets?: { neoset: string; timing?: RunTiming }[] };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    for (const o of entry.neosets ?? []) {
      if (o.neoset !== `${namespace}/${name}` || !o.timing || entry.arrived === undefined) continue;
      const run = runs.get(o.timing.started) ?? { timing: o.timing, arrivals: [] };
      run.arrivals.push(entry.arrived);
      runs.set(o.timing.started, run);
    }
  }
  return [...runs.values()];
}

/** The step's path in order, then 'ready→finish': the readiness function's finish, off the path. */
export const SEGMENTS = ['ready→event', 'event→run', 'run→read', 'read→decide', 'decide→claim', 'claim→drain', 'ready→finish'] as const;

/**
 * Per step: the i-th pod Ready pairs with the (k+i)-th drain (as stepLatency does); the event is the one
 * the drain's run answered that arrived nearest the Ready (the watch and the function see the API
 * server's events apart, either first); the finish is that Ready pod's. Returns each segment's p50
 * (ms), the p50 of the whole path (Ready → drain written: medians do not add up), and how many steps
 * were matched with a run.
 */
export function stepBreakdown(opts: {
  runs: Run[];
  namespace: string;
  /** Pods in the order their update was first written (the watch's). */
  written: string[];
  /** Pods in the order they became Ready on the new image, with when. */
  readies: [pod: string, at: number][];
  finishes: Map<string, number>;
  k: number;
}): { p50: Record<(typeof SEGMENTS)[number], number>; total: number; steps: number; reads: Record<string, number> } {
  const drainPath = (pod: string) => `PATCH /api/v1/namespaces/${opts.namespace}/pods/${pod}/status`;
  const samples: Record<string, number[]> = Object.fromEntries(SEGMENTS.map((s) => [s, []]));
  const totals: number[] = [];
  let steps = 0;
  for (let i = 0; opts.k + i < opts.written.length && i < opts.readies.length; i++) {
    const next = opts.written[opts.k + i];
    const [readyPod, readyAt] = opts.readies[i];
    const finish = opts.finishes.get(readyPod);
    const run = opts.runs.find((r) => r.timing.requests.some(([, what]) => what === drainPath(next)));
    if (!run || run.timing.read === undefined || run.timing.decided === undefined) continue;
    const writes = run.timing.requests;
    const drainAt = writes.findIndex(([, what]) => what === drainPath(next));
    const claim = writes.slice(0, drainAt).findLast(([, what]) => /^(PUT|PATCH) \S*\/neosets\/[^/]+\/status$/.test(what));
    const arrived = run.arrivals.reduce((best, a) => (Math.abs(a - readyAt) < Math.abs(best - readyAt) ? a : best));
    const points = [readyAt, arrived, run.timing.started, run.timing.read, run.timing.decided, claim?.[0] ?? run.timing.decided, writes[drainAt][0]];
    SEGMENTS.slice(0, -1).forEach((s, j) => samples[s].push(points[j + 1] - points[j]));
    if (finish !== undefined) samples['ready→finish'].push(finish - readyAt);
    totals.push(points.at(-1)! - points[0]);
    steps++;
  }
  return { p50: Object.fromEntries(SEGMENTS.map((s) => [s, quantile(samples[s], 0.5)])) as Record<(typeof SEGMENTS)[number], number>, total: quantile(totals, 0.5), steps, reads: readLatencies(opts.runs) };
}

/** p50 ms from a run's start to each of its reads' answers, by what was read (the last path segment, its query dropped). */
function readLatencies(runs: Run[]): Record<string, number> {
  const by = new Map<string, number[]>();
  for (const run of runs) {
    for (const [at, what] of run.timing.requests) {
      if (!what.startsWith('GET ')) continue;
      const resource = what.split('?')[0].split('/').at(-1)!.replace(/^app$/, 'neoset');
      by.set(resource, [...(by.get(resource) ?? []), at - run.timing.started]);
    }
  }
  return Object.fromEntries([...by].map(([resource, ms]) => [`${resource} ×${ms.length}`, quantile(ms, 0.5)]));
}
