// The event pump: what Knative's ApiServerSource (Resource mode), Broker, Triggers and a PingSource
// do for the functions, on one machine. It watches NeoSets and labelled Pods and POSTs binary-mode
// CloudEvents exactly as ApiServerSource formats them (SPEC §2.1) to every sink (a Trigger: filter,
// subscriber, delivery) whose filter takes the event, as the Broker's dispatcher does: concurrently
// and in no guaranteed order, at most `parallelism` requests in flight per subscriber (its
// containerConcurrency), each event retried by its Trigger's delivery policy (dev/bridge/delivery.ts),
// plus PingSource ticks. For tests it can also deliver every event several times and in shuffled
// order, to prove that the functions are safe under duplicates and reordering.
import { randomUUID } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, LABEL_NEOSET_NAME, PLURAL } from '../../shared/api/names.ts';
import { DEFAULT_RESYNC_SOURCE, PING_TYPE } from '../../shared/events/target.ts';
import { BROKER_DELIVERY, CONTAINER_CONCURRENCY, deliver, type Attempt, type DeliverySpec, type FetchLike } from './delivery.ts';
import { goJson } from './go-json.ts';
import { createLimiter, type Limiter } from './limiter.ts';
import { resilientWatch, type KubeObject, type ResilientWatch, type WatchEventType } from '../../shared/k8s/watch.ts';

const TYPE_OF: Record<WatchEventType, string> = { ADDED: 'add', MODIFIED: 'update', DELETED: 'delete' };

/** A CloudEvent as the pump builds it (attributes + data). */
export interface PumpEvent {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  subject?: string;
  time: string;
  datacontenttype: 'application/json';
  kind?: string;
  apiversion?: string;
  name?: string;
  namespace?: string;
  /** Set by the Broker's ingress when it accepts the event (RFC 3339), carried to every subscriber. */
  knativearrivaltime?: string;
  /**
   * The Broker's reply hop count: its ingress sets it (MAX_TTL, 255) on the channel's copy, its filter
   * removes it before a subscriber; a dead letter, sent from the channel's copy, still has it.
   */
  knativebrokerttl?: string;
  /** A dead letter's: the subscriber that failed, its last status, the start of its answer (base64). */
  knativeerrordest?: string;
  knativeerrorcode?: string;
  knativeerrordata?: string;
  data: unknown;
}

export type SinkKind = 'NeoSet' | 'Pod' | 'ping';

/** One Trigger: its filter, its subscriber, its delivery. Sinks with the same target share one subscriber. */
export interface Sink {
  /** A URL, or an in-process hono `app.fetch`. */
  target: string | FetchLike;
  /** Trigger-like filter on the event's `kind` extension ('ping' for resync ticks). */
  kinds: SinkKind[];
  /** Trigger-like filter on the event's `source` (each tick's Trigger names its PingSource); absent: any. */
  source?: string;
  /** The Trigger's `delivery` (default: the pump's, as a Trigger without one takes the Broker's). */
  delivery?: DeliverySpec;
  /** The subscriber's containerConcurrency (default: the pump's `parallelism`). */
  parallelism?: number;
  /** The Trigger's namespace: the Broker's filter tells it to the subscriber (Kn-Namespace). */
  namespace?: string;
  /** Where an event the subscriber did not take goes after the last attempt (its Trigger's, else the Broker's deadLetterSink). */
  deadLetterSink?: string | FetchLike;
}

export interface PumpOptions {
  kubeConfig: KubeConfig;
  sinks: Sink[];
  /** Watch one namespace only (default: all). */
  namespace?: string;
  /** PingSource period; 0 disables ticks. Default 1500 ms. */
  resyncMs?: number;
  /** The `source` of its ticks: the PingSource the functions take them from (default that of knative/eventing.yaml). */
  resyncSource?: string;
  /** Deliver every event this many times (default 1). */
  copies?: number;
  /** Collect events for this many ms and start each window's deliveries in shuffled order (default: start in arrival order). */
  shuffleWindowMs?: number;
  /** The Broker's delivery, for sinks without their own (default BROKER_DELIVERY: knative/eventing.yaml). */
  delivery?: DeliverySpec;
  /** Requests in flight per subscriber at most (default 50: the Services' containerConcurrency). */
  parallelism?: number;
  /** Called with every event delivered (record & replay). */
  record?: (event: PumpEvent) => void;
  log?: (msg: string) => void;
}

export interface PumpStats {
  delivered: number;
  /** Given up after the last retry (handed to the dead-letter sink when the sink has one). */
  failed: number;
  /** Answered with a 4xx that is not retried. */
  rejected: number;
  /** Attempts beyond the first. */
  retries: number;
  /** The most requests in flight to one subscriber at once. */
  maxInFlight: number;
  /** Failed or rejected events the dead-letter sink took. */
  deadLettered: number;
}

export interface Pump {
  ready: Promise<void>;
  stats: PumpStats;
  /** Sends one PingSource tick now. */
  tick(): void;
  /** Resolves when nothing is queued or in flight. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Encodes a CloudEvent in binary mode, as ApiServerSource and the Broker send it: the body as the
 * adapter's Go encoding/json writes it (goJson), `extra` headers besides content-type and ce-*.
 */
export function toBinaryRequest(url: string, event: PumpEvent, extra: Record<string, string> = {}): Request {
  const headers: Record<string, string> = { ...extra, 'content-type': event.datacontenttype };
  for (const [k, v] of Object.entries(event)) {
    if (k !== 'data' && k !== 'datacontenttype' && v !== undefined) headers[`ce-${k}`] = String(v);
  }
  return new Request(url, { method: 'POST', headers, body: goJson(event.data) });
}

/**
 * The headers the Broker's filter adds to a delivery besides the event's (knative.dev/eventing
 * pkg/broker/filter, pkg/kncloudevents/event_dispatcher.go): it asks for a reply event, and names
 * the Trigger's namespace.
 */
export function filterHeaders(sink: Pick<Sink, 'namespace'>): Record<string, string> {
  return { prefer: 'reply', ...dispatcherHeaders(sink) };
}

/** What the channel's dispatcher adds to a dead letter: the namespace only (no reply is asked of a dead-letter sink). */
const dispatcherHeaders = (sink: Pick<Sink, 'namespace'>): Record<string, string> => (sink.namespace ? { 'kn-namespace': sink.namespace } : {});

/** Knative's base64 knativeerrordata is cut at this many characters (pkg/kncloudevents/attributes/knative_error.go). */
const ERROR_DATA_MAX = 1024;
/** The TTL the Broker's ingress gives an event (cmd/broker/ingress MAX_TTL's default). */
const BROKER_TTL = '255';

/**
 * The event as the dead-letter sink gets it (knative.dev/eventing pkg/kncloudevents/event_dispatcher.go
 * dispatchExecutionInfoTransformers): the subscriber's address, its last status and the start of its
 * answer's body as extensions, and the Broker's TTL. Knative dead-letters a rejected (4xx) event as
 * well as one given up.
 */
export function deadLetterEvent(event: PumpEvent, subscriber: string, last: Attempt): PumpEvent {
  return {
    ...event,
    knativebrokerttl: BROKER_TTL,
    knativeerrordest: subscriber,
    knativeerrorcode: String(last.status ?? 0),
    knativeerrordata: Buffer.from(last.body ?? '').toString('base64').slice(0, ERROR_DATA_MAX),
  };
}

export function resourceEvent(server: string, type: WatchEventType, obj: KubeObject): PumpEvent {
  const { name, namespace } = obj.metadata;
  const apiVersion = obj.apiVersion ?? 'v1';
  const plural = obj.kind === 'Pod' ? 'pods' : PLURAL;
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: server,
    type: `dev.knative.apiserver.resource.${TYPE_OF[type]}`,
    subject: `/apis/${apiVersion}/namespaces/${namespace}/${plural}/${name}`,
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    kind: obj.kind,
    apiversion: apiVersion,
    name,
    namespace,
    data: obj,
  };
}

/** A PingSource tick; the functions take only the configured PingSource's (SPEC §2.3, shared/events/target.ts). */
export function pingEvent(source = DEFAULT_RESYNC_SOURCE): PumpEvent {
  return {
    specversion: '1.0',
    id: randomUUID(),
    source,
    type: PING_TYPE,
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: {},
  };
}

export function startPump(opts: PumpOptions): Pump {
  const server = opts.kubeConfig.getCurrentCluster()?.server ?? 'https://kubernetes.default.svc';
  const copies = opts.copies ?? 1;
  const brokerDelivery = opts.delivery ?? BROKER_DELIVERY;
  const parallelism = opts.parallelism ?? CONTAINER_CONCURRENCY;
  const stats: PumpStats = { delivered: 0, failed: 0, rejected: 0, retries: 0, maxInFlight: 0, deadLettered: 0 };
  const log = opts.log ?? (() => {});
  let stopped = false;
  /** Aborted by stop(): the attempts in flight end without their answers (the Broker's redelivery is gone with it). */
  const halt = new AbortController();
  /** Deliveries not finished: waiting for a slot, in flight, or waiting out a backoff. */
  const pending = new Set<Promise<void>>();
  let idleWaiters: (() => void)[] = [];
  const sleepers = new Set<() => void>();
  // One limiter per subscriber: the Triggers of one Service share its containerConcurrency.
  const limiters = new Map<string | FetchLike, Limiter>();
  const limiterOf = ({ target, parallelism: own }: Sink) => {
    let l = limiters.get(target);
    if (!l) limiters.set(target, (l = createLimiter(own ?? parallelism)));
    return l;
  };
  let window: { sink: Sink; event: PumpEvent }[] = [];
  let windowTimer: NodeJS.Timeout | undefined;

  const settle = () => {
    if (pending.size === 0 && window.length === 0) {
      for (const w of idleWaiters) w();
      idleWaiters = [];
    }
  };

  /** A backoff wait that the pump's stop cuts short (resolves false: no further attempt). */
  const sleep = (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (stopped) return resolve(false);
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve(!stopped);
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });

  /** Delivers `event` to the sink's subscriber (`deadLetter`: to its dead-letter sink, with the same delivery). */
  function start(sink: Sink, event: PumpEvent, deadLetter = false): void {
    const target = deadLetter ? sink.deadLetterSink! : sink.target;
    const url = typeof target === 'string' ? target : 'http://in-process/';
    const limiter = limiterOf({ ...sink, target });
    const delivery = deliver({
      target,
      spec: sink.delivery ?? brokerDelivery,
      request: () => toBinaryRequest(url, event, deadLetter ? dispatcherHeaders(sink) : filterHeaders(sink)),
      slot: (attempt) =>
        limiter.run(() => {
          stats.maxInFlight = Math.max(stats.maxInFlight, limiter.active);
          return attempt();
        }),
      sleep,
      stopping: halt.signal,
      onRetry: (a, i) => {
        stats.retries++;
        if (!stopped) log(`event ${event.type} ${event.name ?? ''} to ${url}: ${a.status ?? a.error}; retry ${i + 1} of ${(sink.delivery ?? brokerDelivery).retry}`);
      },
    }).then(({ outcome, attempts, last }) => {
      if (deadLetter) {
        if (outcome === 'delivered') stats.deadLettered++;
        else if (!stopped) log(`event ${event.type} ${event.name ?? ''}: the dead-letter sink ${url} did not take it either: ${last.status ?? last.error}`);
        return;
      }
      stats[outcome]++;
      if (outcome === 'rejected') log(`event ${event.type} ${event.name ?? ''} rejected by ${url}: ${last.status}`);
      if (outcome === 'failed' && !stopped) log(`event ${event.type} ${event.name ?? ''} to ${url} given up after ${attempts} attempts: ${last.status ?? last.error}`);
      if (outcome !== 'delivered' && sink.deadLetterSink && !stopped) start(sink, deadLetterEvent(event, url, last), true);
    });
    const tracked = delivery.finally(() => {
      pending.delete(tracked);
      settle();
    });
    pending.add(tracked);
  }

  function enqueue(accepted: PumpEvent) {
    if (stopped) return;
    const event: PumpEvent = { ...accepted, knativearrivaltime: new Date().toISOString() };
    opts.record?.(event);
    // A PingSource sets no `kind` extension: ticks are told apart by their type.
    const kind = (event.type === PING_TYPE ? 'ping' : (event.kind ?? '')) as SinkKind;
    for (const sink of opts.sinks) {
      if (!sink.kinds.includes(kind) || (sink.source !== undefined && sink.source !== event.source)) continue;
      for (let c = 0; c < copies; c++) {
        if (opts.shuffleWindowMs) {
          window.push({ sink, event });
          windowTimer ??= setTimeout(flushWindow, opts.shuffleWindowMs);
        } else {
          start(sink, event);
        }
      }
    }
  }

  function flushWindow() {
    windowTimer = undefined;
    const batch = window;
    window = [];
    for (let i = batch.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [batch[i], batch[j]] = [batch[j], batch[i]];
    }
    for (const { sink, event } of batch) start(sink, event);
    settle();
  }

  const base = (plural: string, group: string) =>
    opts.namespace ? `/${group}/namespaces/${opts.namespace}/${plural}` : `/${group}/${plural}`;
  const watches: ResilientWatch[] = [
    resilientWatch({
      kubeConfig: opts.kubeConfig,
      path: base(PLURAL, `apis/${API_VERSION}`),
      onEvent: (type, obj) => enqueue(resourceEvent(server, type, { ...obj, kind: obj.kind ?? 'NeoSet', apiVersion: obj.apiVersion ?? API_VERSION })),
      onError: (err) => log(`neoset watch: ${err.message}`),
    }),
    resilientWatch({
      kubeConfig: opts.kubeConfig,
      path: base('pods', 'api/v1'),
      labelSelector: LABEL_NEOSET_NAME,
      onEvent: (type, obj) => enqueue(resourceEvent(server, type, { ...obj, kind: obj.kind ?? 'Pod', apiVersion: obj.apiVersion ?? 'v1' })),
      onError: (err) => log(`pod watch: ${err.message}`),
    }),
  ];
  const resyncMs = opts.resyncMs ?? 1500;
  const tick = () => enqueue(pingEvent(opts.resyncSource));
  const ticker = resyncMs > 0 ? setInterval(tick, resyncMs) : undefined;

  return {
    ready: Promise.all(watches.map((w) => w.ready)).then(() => {}),
    stats,
    tick,
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settle();
      }),
    async stop() {
      stopped = true;
      halt.abort();
      clearInterval(ticker);
      clearTimeout(windowTimer);
      window = [];
      for (const w of watches) w.stop();
      for (const wake of [...sleepers]) wake();
      await Promise.allSettled([...pending]);
      settle();
    },
  };
}
