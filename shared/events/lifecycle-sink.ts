// SPEC §4.10: every lifecycle state change of a pod is also sent as a CloudEvent to $K_SINK (which
// Knative's SinkBinding sets), so that a hook owner can itself be a Knative function woken by it.
// Binary mode, like the events we receive (§2.1): type io.neo.neoset.lifecycle.<state>, the NeoSet as
// source, the pod as subject, the pod's identity and state as data. Best effort: the state lives on
// the pod, and a hook owner that misses an event sees the label (and its timeout is the rollout's
// safety net).
//
// Identity and state, not the Pod (SPEC §2.5): $K_SINK is typically a Broker that every namespace's
// Triggers read, and a Pod carries its containers' env values (passwords set inline), its annotations
// (tokens, other tools' state) and the whole spec. What a hook owner needs is which pod (name,
// namespace, uid, resourceVersion to write on), where it is in the handshake, and the labels the
// handshake is made of: NeoSet's own (name, ordinal, revision, lifecycle state) and the hook's handler
// labels, whose presence IS the owner's answer (§4.10). Other labels are the tenant's and stay out;
// the owner reads the pod for anything else, with its own rights.
import { CloudEvent, HTTP } from 'cloudevents';
import { API_VERSION, LABEL_LIFECYCLE_STATE, LABEL_NEOSET_NAME, LABEL_POD_INDEX, LABEL_POD_NAME, LABEL_REVISION_HASH, LIFECYCLE_EVENT_PREFIX } from '../api/names.ts';
import type { LifecycleState } from '../core/plan.ts';

/** What a lifecycle event says of its pod: a Pod's shape, so `data.metadata.name` reads as before. */
export interface LifecyclePod {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: { name: string; namespace: string; uid?: string; resourceVersion?: string; labels: Record<string, string> };
  status: { phase?: string; conditions: { type: string; status: string }[] };
}

export interface LifecycleEvent {
  state: LifecycleState;
  namespace: string;
  neoset: string;
  pod: LifecyclePod;
}

type PodRead = {
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string> };
  status?: { phase?: string; conditions?: { type?: string; status?: string }[] };
};

/** NeoSet's own labels: the pod's identity (§4.1) and its place in the handshake. */
const IDENTITY_LABELS = [LABEL_NEOSET_NAME, LABEL_POD_NAME, LABEL_POD_INDEX, LABEL_REVISION_HASH, LABEL_LIFECYCLE_STATE];
/** The conditions that tell whether the pod serves: Ready, and the gate an in-place update holds. */
const STATE_CONDITIONS = new Set(['Ready', 'ContainersReady', 'InPlaceUpdateReady']);

/**
 * The pod as a lifecycle event tells it: `pod` is the API server's answer to the state write;
 * `handlerLabels` the keys of the NeoSet's hooks' labelsHandler (spec.lifecycle).
 */
export function lifecyclePod(pod: PodRead, namespace: string, handlerLabels: Iterable<string>): LifecyclePod {
  const labels = pod.metadata?.labels ?? {};
  const kept: Record<string, string> = {};
  for (const key of [...IDENTITY_LABELS, ...handlerLabels]) if (typeof labels[key] === 'string') kept[key] = labels[key];
  const conditions = (pod.status?.conditions ?? []).flatMap((c) => (c.type && STATE_CONDITIONS.has(c.type) ? [{ type: c.type, status: String(c.status ?? 'Unknown') }] : []));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: pod.metadata?.name ?? '',
      namespace: pod.metadata?.namespace ?? namespace,
      ...(pod.metadata?.uid ? { uid: pod.metadata.uid } : {}),
      ...(pod.metadata?.resourceVersion ? { resourceVersion: pod.metadata.resourceVersion } : {}),
      labels: kept,
    },
    status: { ...(pod.status?.phase ? { phase: pod.status.phase } : {}), conditions },
  };
}

export type LifecycleSink = (event: LifecycleEvent) => Promise<void>;

export function lifecycleCloudEvent(e: LifecycleEvent): CloudEvent<unknown> {
  return new CloudEvent({
    type: `${LIFECYCLE_EVENT_PREFIX}${e.state}`,
    source: `/apis/${API_VERSION}/namespaces/${e.namespace}/neosets/${e.neoset}`,
    subject: e.pod.metadata.name,
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
