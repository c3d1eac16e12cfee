// The event pump: what Knative's ApiServerSource (Resource mode), Broker, Triggers and a PingSource
// do for the functions, on one machine. It watches NeoSets and labelled Pods and POSTs binary-mode
// CloudEvents exactly as ApiServerSource formats them (SPEC §2.1) to every sink whose filter takes
// the event, retrying 5xx and network failures with exponential backoff as a Trigger's `delivery`
// does, plus PingSource ticks. For tests it can also deliver every event several times and in
// shuffled order, to prove that the functions are safe under duplicates and reordering.
import { randomUUID } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, LABEL_NEOSET_NAME, PLURAL } from '../../shared/api/names.ts';
import { resilientWatch, type KubeObject, type ResilientWatch, type WatchEventType } from './resilient-watch.ts';

export const PING_TYPE = 'dev.knative.sources.ping';
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
  data: unknown;
}

export type FetchLike = (req: Request) => Response | Promise<Response>;

export interface Sink {
  /** A URL, or an in-process hono `app.fetch`. */
  target: string | FetchLike;
  /** Trigger-like filter on the event's `kind` extension ('ping' for resync ticks). */
  kinds: ('NeoSet' | 'Pod' | 'ping')[];
}

export interface PumpOptions {
  kubeConfig: KubeConfig;
  sinks: Sink[];
  /** Watch one namespace only (default: all). */
  namespace?: string;
  /** PingSource period; 0 disables ticks. Default 1500 ms. */
  resyncMs?: number;
  /** Deliver every event this many times (default 1). */
  copies?: number;
  /** Deliver in shuffled order, concurrently, in windows of this many ms (default: in order, one at a time per sink). */
  shuffleWindowMs?: number;
  /** Delivery attempts (first + retries) for 5xx / network failures, as a Trigger's delivery.retry. Default 5. */
  attempts?: number;
  backoffMs?: number;
  /** Called with every event delivered (record & replay). */
  record?: (event: PumpEvent) => void;
  log?: (msg: string) => void;
}

export interface PumpStats {
  delivered: number;
  failed: number;
  rejected: number;
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

/** Encodes a CloudEvent in binary mode, as ApiServerSource and the Broker send it. */
export function toBinaryRequest(url: string, event: PumpEvent): Request {
  const headers: Record<string, string> = { 'content-type': event.datacontenttype };
  for (const [k, v] of Object.entries(event)) {
    if (k !== 'data' && k !== 'datacontenttype' && v !== undefined) headers[`ce-${k}`] = String(v);
  }
  return new Request(url, { method: 'POST', headers, body: JSON.stringify(event.data) });
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

export function pingEvent(): PumpEvent {
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: '/apis/v1/namespaces/neoset-system/pingsources/neoset-resync',
    type: PING_TYPE,
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: {},
  };
}

export function startPump(opts: PumpOptions): Pump {
  const server = opts.kubeConfig.getCurrentCluster()?.server ?? 'https://kubernetes.default.svc';
  const copies = opts.copies ?? 1;
  const attempts = opts.attempts ?? 5;
  const backoffMs = opts.backoffMs ?? 100;
  const stats: PumpStats = { delivered: 0, failed: 0, rejected: 0 };
  const log = opts.log ?? (() => {});
  let stopped = false;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];
  const chains = opts.sinks.map(() => Promise.resolve());
  let window: { sink: number; event: PumpEvent }[] = [];
  let windowTimer: NodeJS.Timeout | undefined;

  const settle = () => {
    if (inFlight === 0 && window.length === 0) {
      for (const w of idleWaiters) w();
      idleWaiters = [];
    }
  };

  async function deliverOnce(sink: Sink, event: PumpEvent): Promise<void> {
    for (let attempt = 1; attempt <= attempts && !stopped; attempt++) {
      const url = typeof sink.target === 'string' ? sink.target : 'http://in-process/';
      try {
        const req = toBinaryRequest(url, event);
        const res = typeof sink.target === 'string' ? await fetch(req) : await sink.target(req);
        await res.arrayBuffer();
        if (res.status < 300) {
          stats.delivered++;
          return;
        }
        if (res.status < 500) {
          stats.rejected++; // 4xx: the Broker does not retry a rejected event
          log(`event ${event.type} ${event.name ?? ''} rejected by ${url}: ${res.status}`);
          return;
        }
      } catch (err) {
        log(`delivery to ${url} failed: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, backoffMs * 2 ** (attempt - 1)));
    }
    stats.failed++;
  }

  function enqueue(event: PumpEvent) {
    if (stopped) return;
    opts.record?.(event);
    opts.sinks.forEach((sink, i) => {
      // A PingSource sets no `kind` extension: ticks are told apart by their type.
      const kind = event.type === PING_TYPE ? 'ping' : (event.kind ?? '');
      if (!sink.kinds.includes(kind as Sink['kinds'][number])) return;
      for (let c = 0; c < copies; c++) {
        if (opts.shuffleWindowMs) {
          window.push({ sink: i, event });
          windowTimer ??= setTimeout(flushWindow, opts.shuffleWindowMs);
        } else {
          inFlight++;
          chains[i] = chains[i].then(() => deliverOnce(sink, event)).finally(() => {
            inFlight--;
            settle();
          });
        }
      }
    });
  }

  function flushWindow() {
    windowTimer = undefined;
    const batch = window;
    window = [];
    for (let i = batch.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [batch[i], batch[j]] = [batch[j], batch[i]];
    }
    for (const { sink, event } of batch) {
      inFlight++;
      void deliverOnce(opts.sinks[sink], event).finally(() => {
        inFlight--;
        settle();
      });
    }
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
  const ticker = resyncMs > 0 ? setInterval(() => enqueue(pingEvent()), resyncMs) : undefined;

  return {
    ready: Promise.all(watches.map((w) => w.ready)).then(() => {}),
    stats,
    tick: () => enqueue(pingEvent()),
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settle();
      }),
    async stop() {
      stopped = true;
      clearInterval(ticker);
      clearTimeout(windowTimer);
      window = [];
      for (const w of watches) w.stop();
      await Promise.allSettled(chains);
    },
  };
}
