// SPEC §4.12: rollout notifications to $K_SINK (the SinkBinding of knative/hooks.yaml sets it), sent
// by the instance whose conditional status write made them true (shared/k8s/apply.ts calls this after
// that write). Binary mode, as lifecycle-sink.ts sends §4.10's events; a bounded timeout; a failure is
// counted and logged, never thrown: it must not fail the reconcile that already wrote the status.
// Not retried and not remembered (STYLE §6): an instance killed between the status write and the send
// loses that notification — the status and the NeoSet's Events still tell it.
import { CloudEvent, HTTP } from 'cloudevents';
import { notificationText, type Notification } from '../api/notification.ts';
import type { EventSpec } from '../core/plan.ts';
import { notificationsTotal } from '../metrics/registry.ts';

export type NotificationSink = (notifications: Notification[]) => Promise<void>;

/** A delivery gives up after this long: the reconcile's answer to its event waits for it. */
export const NOTIFY_TIMEOUT_MS = 3000;

export function notificationCloudEvent(n: Notification): CloudEvent<unknown> {
  return new CloudEvent({ id: n.id, type: n.type, source: n.source, subject: n.subject, datacontenttype: 'application/json', data: n.data });
}

/** POSTs each notification to `url`, in order (a subscriber reads started before completed). */
export function notificationSink(url: string, onError: (err: Error, n: Notification) => void = () => {}, fetchFn: typeof fetch = fetch, timeoutMs = NOTIFY_TIMEOUT_MS): NotificationSink {
  return async (notifications) => {
    for (const n of notifications) {
      const message = HTTP.binary(notificationCloudEvent(n));
      try {
        const res = await fetchFn(url, { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string, signal: AbortSignal.timeout(timeoutMs) });
        await res.body?.cancel();
        if (!res.ok) throw new Error(`${url} answered ${res.status}`);
        notificationsTotal.inc({ type: n.type, result: 'sent' });
      } catch (err) {
        notificationsTotal.inc({ type: n.type, result: 'failed' });
        onError(err as Error, n);
      }
    }
  };
}

/**
 * The Kubernetes Event a notification is mirrored as on the NeoSet (shared/k8s/apply.ts records it
 * under the notification's id): what was sent is readable from the cluster — kubectl describe, the
 * dashboard's Events — with or without a K_SINK. The reason is the CloudEvent type, so that it is told
 * apart from the Events of the writes (RolloutCompleted, CanaryStep, RollbackDetected tell the same story
 * from the actions' side).
 */
export function notificationEvent(n: Notification): EventSpec {
  return { type: n.kind === 'failed' || n.kind === 'aborted' ? 'Warning' : 'Normal', reason: n.type, message: notificationText(n.kind, n.data) };
}

/** $K_SINK's notification sink, or none when it is not set. */
export function notificationSinkFromEnv(onError?: (err: Error, n: Notification) => void): NotificationSink | undefined {
  const url = process.env.K_SINK;
  return url ? notificationSink(url, onError) : undefined;
}
