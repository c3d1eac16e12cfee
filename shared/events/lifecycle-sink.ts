// SPEC §4.10: every lifecycle state change of a pod is also sent as a CloudEvent to $K_SINK (which
// Knative's SinkBinding sets), so that a hook owner can itself be a Knative function woken by it.
// Binary mode, like the events we receive (§2.1): type io.neo.neoset.lifecycle.<state>, the NeoSet as
// source, the pod as subject, the Pod as data. Best effort: the state lives on the pod, and a hook
// owner that misses an event sees the label (and its timeout is the rollout's safety net).
import { CloudEvent, HTTP } from 'cloudevents';
import { API_VERSION, LIFECYCLE_EVENT_PREFIX } from '../api/names.ts';
import type { LifecycleState } from '../core/plan.ts';

export interface LifecycleEvent {
  state: LifecycleState;
  namespace: string;
  neoset: string;
  /** The Pod as the state change left it (the API server's answer to the write). */
  pod: { metadata?: { name?: string } } & Record<string, unknown>;
}

export type LifecycleSink = (event: LifecycleEvent) => Promise<void>;

export function lifecycleCloudEvent(e: LifecycleEvent): CloudEvent<unknown> {
  return new CloudEvent({
    type: `${LIFECYCLE_EVENT_PREFIX}${e.state}`,
    source: `/apis/${API_VERSION}/namespaces/${e.namespace}/neosets/${e.neoset}`,
    subject: e.pod.metadata?.name ?? '',
    datacontenttype: 'application/json',
    data: e.pod,
  });
}

/** A sink POSTing to `url`; a failed delivery is reported to `onError`, never thrown. */
export function httpSink(url: string, onError: (err: Error, e: LifecycleEvent) => void = () => {}, fetchFn: typeof fetch = fetch): LifecycleSink {
  return async (e) => {
    const message = HTTP.binary(lifecycleCloudEvent(e));
    try {
      const res = await fetchFn(url, { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string, signal: AbortSignal.timeout(5000) });
      if (!res.ok) throw new Error(`${url} answered ${res.status}`);
      await res.body?.cancel();
    } catch (err) {
      onError(err as Error, e);
    }
  };
}

/** $K_SINK's sink, or none when it is not set. */
export function sinkFromEnv(onError?: (err: Error, e: LifecycleEvent) => void): LifecycleSink | undefined {
  const url = process.env.K_SINK;
  return url ? httpSink(url, onError) : undefined;
}
