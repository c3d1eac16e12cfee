// The dev stack's sinks from the Triggers of knative/eventing.yaml, so that the bridge filters,
// retries and limits concurrency exactly as the deployed Broker would, and follows the manifests
// when they change: each Trigger's attribute filter, its subscriber (a Knative Service of the
// functions), its `delivery` (else the Broker's), the Service's timeoutSeconds as the per-attempt
// timeout when the delivery sets none, and the Service's containerConcurrency as the parallelism;
// its dead-letter sink when that Service is one the caller gives (knative/eventing.yaml's is a Knative
// Service the bridge does not run: the dev stack has none).
import type { Manifest } from '../manifests.ts';
import { parseIsoDuration, type DeliverySpec, type FetchLike } from './delivery.ts';
import { PING_TYPE } from '../../shared/events/target.ts';
import type { Sink, SinkKind } from './pump.ts';

/** Knative Serving's default revision timeout (config-defaults revision-timeout-seconds). */
const DEFAULT_TIMEOUT_SECONDS = 300;

interface Delivery {
  retry?: number;
  backoffPolicy?: 'exponential' | 'linear';
  backoffDelay?: string;
  timeout?: string;
  deadLetterSink?: { ref?: { name?: string }; uri?: string };
}

/** The dead-letter sink of a delivery, when its Service is among `subscribers` (a URI is resolved against a URL). */
function deadLetterOf(d: Delivery | undefined, subscribers: Record<string, string | FetchLike>): string | FetchLike | undefined {
  const target = d?.deadLetterSink?.ref?.name ? subscribers[d.deadLetterSink.ref.name] : undefined;
  return typeof target === 'string' && d?.deadLetterSink?.uri ? new URL(d.deadLetterSink.uri, target).href : target;
}

const specOf = (m: Manifest) => m.spec as Record<string, any>;

function kindsOf(trigger: Manifest): SinkKind[] {
  const attributes: Record<string, string> = specOf(trigger).filter?.attributes ?? {};
  if (attributes.type === PING_TYPE) return ['ping'];
  if (attributes.kind === 'NeoSet' || attributes.kind === 'Pod') return [attributes.kind];
  throw new Error(`Trigger ${trigger.metadata.name}: a filter the bridge cannot play: ${JSON.stringify(attributes)}`);
}

function deliveryOf(own: Delivery | undefined, broker: Delivery | undefined, serviceTimeoutSeconds: number): DeliverySpec {
  // A Trigger's delivery replaces the Broker's as a whole (the Trigger reconciler takes one or the other).
  const d = own ?? broker ?? {};
  const backoff = d.backoffDelay && d.backoffPolicy;
  return {
    retry: d.retry ?? 0,
    backoffPolicy: d.backoffPolicy ?? 'exponential',
    backoffDelayMs: backoff ? parseIsoDuration(d.backoffDelay!) : 0,
    timeoutMs: d.timeout ? parseIsoDuration(d.timeout) : serviceTimeoutSeconds * 1000,
  };
}

/** One sink per Trigger whose subscriber is in `subscribers` (Service name → URL or in-process fetch). */
export function sinksFromTriggers(manifests: Manifest[], subscribers: Record<string, string | FetchLike>): Sink[] {
  const brokers = new Map(manifests.filter((m) => m.kind === 'Broker').map((b) => [b.metadata.name, specOf(b).delivery as Delivery | undefined]));
  const services = new Map(manifests.filter((m) => m.kind === 'Service' && m.apiVersion.startsWith('serving.knative.dev/')).map((s) => [s.metadata.name, specOf(s).template?.spec ?? {}]));
  return manifests
    .filter((m) => m.kind === 'Trigger' && specOf(m).subscriber?.ref?.name in subscribers)
    .map((trigger) => {
      const { broker, subscriber, delivery } = specOf(trigger);
      const service = services.get(subscriber.ref.name) ?? {};
      return {
        target: subscribers[subscriber.ref.name],
        kinds: kindsOf(trigger),
        ...(specOf(trigger).filter?.attributes?.source ? { source: specOf(trigger).filter.attributes.source as string } : {}),
        delivery: deliveryOf(delivery, brokers.get(broker), service.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS),
        parallelism: service.containerConcurrency || undefined,
        namespace: trigger.metadata.namespace,
        deadLetterSink: deadLetterOf(delivery ?? brokers.get(broker), subscribers),
      };
    });
}
