// What a process-mode pod's containers wrote, read from the kubelet's per-container log files
// (dev/kubelet/process: <STATE_ROOT>/<bridge>/pods/<uid>/logs/<container>/<restartCount>.log), for
// tests and benchmarks that want every start's output at once (`kubectl logs` serves one start: dev/kubelet/log-server.ts).
// A deleted pod's files go with it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { STATE_ROOT } from './network.ts';

/** Every log line a pod's container wrote (all its starts, in order). */
export function containerLog(pod: V1Pod, container: string): string[] {
  const uid = pod.metadata!.uid!;
  const lines: string[] = [];
  for (const bridge of existsSync(STATE_ROOT) ? readdirSync(STATE_ROOT) : []) {
    const dir = join(STATE_ROOT, bridge, 'pods', uid, 'logs', container);
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir).sort((a, b) => parseInt(a) - parseInt(b))) lines.push(...readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean));
  }
  return lines;
}

/** A Knative component's zap lines (JSON) at warn or above since `sinceMs`: how many, and the distinct messages. */
export function knativeComplaints(pods: V1Pod[], sinceMs: number): { count: number; messages: string[] } {
  const messages = new Set<string>();
  let count = 0;
  for (const pod of pods) {
    for (const c of pod.spec?.containers ?? []) {
      for (const line of containerLog(pod, c.name)) {
        let entry: { level?: string; ts?: string; msg?: string; error?: string };
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch {
          continue;
        }
        if (!['warn', 'error', 'fatal'].includes(entry.level ?? '') || !(Date.parse(entry.ts ?? '') >= sinceMs)) continue;
        count++;
        messages.add(`${entry.level}: ${entry.msg}${entry.error ? ` (${entry.error.slice(0, 160)})` : ''}`);
      }
    }
  }
  return { count, messages: [...messages].slice(0, 6) };
}
