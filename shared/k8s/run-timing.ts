// When a run's phases ended, for the log line of each event it answers: what bench/rollout.ts breaks a
// rollout's step into (a pod Ready seen by its watch → the event → the run's reads, decision, writes).
// Nothing of it decides anything.
import type { KubeClient } from './client.ts';

/**
 * A run's phases on the machine's shared clock (epoch ms, performance.timeOrigin + performance.now(),
 * 0.1 ms): comparable with another process's on the same host, as a step's breakdown needs (the pod
 * Ready seen by a watch → the event → the run's read, decision and writes).
 */
export interface RunTiming {
  started: number;
  read?: number;
  decided?: number;
  /** The run's first MAX_TIMED requests (its reads, then its writes): when each answered, and what it was (verb and path). */
  requests: [at: number, what: string][];
}

/** Requests timed per run: the reads, a claim and a pod's chain are a few; a scale-up of hundreds is not worth logging. */
const MAX_TIMED = 12;

export const epochMs = () => Math.round((performance.timeOrigin + performance.now()) * 10) / 10;

/** `client`, noting in `timing` when each of its requests answered (success or not). */
export function timedRequests(client: KubeClient, timing: RunTiming): KubeClient {
  return {
    request: <T>(verb: Parameters<KubeClient['request']>[0], path: string, opts?: Parameters<KubeClient['request']>[2]) => {
      const answer = client.request<T>(verb, path, opts);
      if (timing.requests.length >= MAX_TIMED) return answer;
      const note = () => void (timing.requests.length < MAX_TIMED && timing.requests.push([epochMs(), `${verb} ${path}`]));
      return answer.finally(note);
    },
  };
}
