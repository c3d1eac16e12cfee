// The NeoSet state gauges of SPEC §4.8, computed at scrape time from the API (kube-state-metrics
// style): a stateless, possibly scaled-to-zero function instance holds no state to report, so a
// scrape lists the NeoSets (or takes a LIST a few seconds old) and reports what their spec and status
// say. Every instance that is scraped reports the same values; dashboards aggregate with max by
// (namespace, neoset).
import type { Hono } from 'hono';
import { Gauge, Registry } from 'prom-client';
import { Phase } from '../api/neoset.ts';
import type { KubeClient } from '../k8s/client.ts';
import { paths } from '../k8s/paths.ts';
import { registry as instanceRegistry } from './registry.ts';

/** A scrape waits at most this long for the LIST (Prometheus' default scrape timeout is 10 s). */
export const LIST_TIMEOUT_MS = 5000;

/**
 * A reading this young serves the next scrapes too: Prometheus scrapes every 15–60 s, so one scrape
 * still sees what the API said at its time (give or take these seconds), while anyone who can reach
 * /metrics and floods it costs the API server one LIST of every NeoSet per this period, not per request.
 */
export const READING_MAX_AGE_MS = 5000;
const FRESHNESS = ` (a LIST at most ${READING_MAX_AGE_MS / 1000} s old)`;

interface NeoSetState {
  metadata: { name: string; namespace?: string };
  spec?: { replicas?: number };
  status?: { readyReplicas?: number; updatedReplicas?: number; phase?: string; canary?: { stepIndex?: number } };
}

type Labels = { namespace: string; neoset: string };
type Reading = { ok: true; items: NeoSetState[] } | { ok: false };

/**
 * NeoSets per page. A page is read as a Table of the CRD's printer columns (shared/api/crd.ts:
 * Replicas, Ready, Updated, Phase, Step), not as the NeoSets: the API server sends each NeoSet's
 * columns and metadata, never its spec — 150 NeoSets with 1 MiB env values were 150 MiB in one answer
 * every 5 s, for the API server to encode and a scrape to read, and timed out the scrape (60 MiB
 * took longer than LIST_TIMEOUT_MS on this machine, memory-bounded.test.ts). Long metadata values
 * (annotations) are cut before they are parsed.
 */
export const STATE_PAGE = 100;

/** kube-apiserver's Table rendering of a list (meta.k8s.io/v1 Table; kubectl get asks the same). */
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/** The printer columns the gauges read, by name (crd.ts); a column a CRD lacks reads as absent. */
const COLUMNS = { replicas: 'Replicas', ready: 'Ready', updated: 'Updated', phase: 'Phase', step: 'Step' } as const;

interface StateTable {
  metadata?: { continue?: string };
  columnDefinitions?: { name?: unknown }[];
  rows?: { cells?: unknown[]; object?: { metadata?: { name?: unknown; namespace?: unknown } } }[];
}

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

/** A Table page's rows as the gauges read them; rows without a name are left out. */
export function statesOfTable(table: StateTable): NeoSetState[] {
  const names = (table.columnDefinitions ?? []).map((c) => c.name);
  const at = Object.fromEntries(Object.entries(COLUMNS).map(([key, name]) => [key, names.indexOf(name)])) as Record<keyof typeof COLUMNS, number>;
  const states: NeoSetState[] = [];
  for (const row of table.rows ?? []) {
    const cell = (i: number) => (i >= 0 ? row.cells?.[i] : undefined);
    const meta = row.object?.metadata;
    if (typeof meta?.name !== 'string') continue;
    const phase = cell(at.phase);
    states.push({
      metadata: { name: meta.name, namespace: typeof meta.namespace === 'string' ? meta.namespace : undefined },
      spec: { replicas: count(cell(at.replicas)) },
      status: { readyReplicas: count(cell(at.ready)), updatedReplicas: count(cell(at.updated)), phase: typeof phase === 'string' ? phase : undefined, canary: { stepIndex: count(cell(at.step)) } },
    });
  }
  return states;
}

/** Every NeoSet's state, a page at a time (`limit`/`continue`). */
async function listStates(client: KubeClient): Promise<NeoSetState[]> {
  const items: NeoSetState[] = [];
  let token: string | undefined;
  do {
    const page = await client.request<StateTable>('GET', paths.neosets(), {
      accept: TABLE,
      // Each row's object is its metadata (PartialObjectMetadata): namespace and name.
      // The first page from the watch cache (resourceVersion 0: what the API server holds in memory,
      // at most a moment behind etcd), not a quorum read of every NeoSet from etcd per scrape: under
      // load that read of 60 MiB outlasted every scrape's 5 s (memory-bounded.test.ts, 0 of 129 up).
      query: { limit: STATE_PAGE, continue: token, includeObject: 'Metadata', ...(token ? {} : { resourceVersion: '0' }) },
      // No value the gauges read is a string past 1 KiB (a phase, a name); annotations may be.
      longStrings: { over: 1024, standIn: () => '""' },
    });
    items.push(...statesOfTable(page));
    token = page.metadata?.continue || undefined;
  } while (token);
  return items;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface StateGaugeOptions {
  /** How long a scrape waits for the LIST (default LIST_TIMEOUT_MS). */
  timeoutMs?: number;
  /** How old a reading may be and still serve a scrape (default READING_MAX_AGE_MS). */
  maxAgeMs?: number;
  /** Milliseconds, monotonic (default performance.now()). */
  clock?: () => number;
}

/**
 * A registry whose gauges list the NeoSets when collected. One LIST serves all of them, and every
 * scrape within `maxAgeMs` of its answer; at most one LIST is in flight — a scrape that stops waiting
 * for a slow one (`timeoutMs`) leaves it to answer the scrapes after. The reading (the last LIST's
 * answer, or that it failed) is bookkeeping whose loss loses nothing (STYLE §6): the next scrape lists.
 */
export function createStateGauges(client: KubeClient, opts: StateGaugeOptions = {}): Registry {
  const { timeoutMs = LIST_TIMEOUT_MS, maxAgeMs = READING_MAX_AGE_MS, clock = () => performance.now() } = opts;
  const registry = new Registry();
  // The last answer and when it came (what it says is the API server's state about then).
  let last: { reading: Reading; answeredAt: number } | undefined;
  let listing: Promise<Reading> | undefined;
  let scrape: Promise<Reading> | undefined;
  const list = (): Promise<Reading> =>
    listStates(client)
      .then((items): Reading => ({ ok: true, items }))
      .catch((): Reading => ({ ok: false }))
      .then((reading) => {
        last = { reading, answeredAt: clock() };
        listing = undefined;
        return reading;
      });
  const readNow = (): Promise<Reading> => {
    if (last && clock() - last.answeredAt < maxAgeMs) return Promise.resolve(last.reading);
    listing ??= list();
    return withTimeout(listing, timeoutMs).catch((): Reading => ({ ok: false }));
  };
  // prom-client collects every metric of a scrape in the same tick: they share one reading.
  const read = (): Promise<Reading> => (scrape ??= readNow().finally(() => (scrape = undefined)));
  const labelsOf = (n: NeoSetState): Labels => ({ namespace: n.metadata.namespace ?? 'default', neoset: n.metadata.name });

  const gauge = (name: string, help: string, value: (n: NeoSetState) => number | undefined) =>
    new Gauge({
      name,
      help,
      labelNames: ['namespace', 'neoset'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const reading = await read();
        if (!reading.ok) return;
        for (const n of reading.items) {
          const v = value(n);
          if (v !== undefined) this.set(labelsOf(n), v);
        }
      },
    });

  gauge('neoset_replicas', `Desired pods (spec.replicas), read from the API at scrape time${FRESHNESS}.`, (n) => n.spec?.replicas ?? 1);
  gauge('neoset_ready_replicas', `Ready pods (status.readyReplicas), read from the API at scrape time${FRESHNESS}.`, (n) => n.status?.readyReplicas ?? 0);
  gauge('neoset_updated_replicas', `Pods on the update revision (status.updatedReplicas), read from the API at scrape time${FRESHNESS}.`, (n) => n.status?.updatedReplicas ?? 0);
  gauge('neoset_phase', `Rollout phase (status.phase): ${Phase.options.map((p, i) => `${i}=${p}`).join(', ')}. No series before the first status.`, (n) => {
    // The numbering is the enum's order (shared/api/neoset.ts).
    const i = Phase.options.indexOf(n.status?.phase as Phase);
    return i >= 0 ? i : undefined;
  });
  gauge('neoset_canary_step', 'The automated canary step running now (status.canary.stepIndex; the number of steps when done). No series without steps.', (n) => n.status?.canary?.stepIndex);
  new Gauge({
    name: 'neoset_state_up',
    help: 'Whether the scrape could list the NeoSets (1) or not (0: the state gauges are missing from this scrape).',
    registers: [registry],
    async collect() {
      this.set((await read()).ok ? 1 : 0);
    },
  });
  return registry;
}

/** Mounts GET /metrics: the instance's own metrics, then the state gauges read from the API now. */
export function mountStateGauges(app: Hono, client: KubeClient, instance: Registry = instanceRegistry): void {
  const state = createStateGauges(client);
  app.get('/metrics', async (c) => {
    const [own, read] = await Promise.all([instance.metrics(), state.metrics()]);
    return c.text(`${own}\n${read}`, 200, { 'Content-Type': instance.contentType });
  });
}
