// SPEC §2.4: at rest nothing runs; in flight, a lost event costs at most a minute. Two ticks do it:
//   * the resync PingSource (knative/eventing.yaml), installed by the operator, ticks slowly (every
//     10 minutes): what recovers an event lost at rest;
//   * the fast tick, a PingSource ticking every minute that exists only while some NeoSet has
//     something in flight (shared/core/in-flight.ts). Cluster state, not process memory: the reconcile
//     function creates it, keeps it and deletes it, any instance, no leader.
// With nothing ticking every minute, Knative Serving can take reconcile and readiness to zero pods.
//
// The protocol, on one annotation of the fast tick, `neoset.neo.io/needed-at` (the API server's time):
//   * need: a run that leaves its NeoSet in flight stamps needed-at (a merge patch, which moves the
//     resourceVersion), creating the PingSource when it is not there — the sink copied from the resync
//     PingSource, read from the API server. An instance stamps at most every NEED_EVERY_MS: its runs
//     in between rely on its last stamp.
//   * retire: a tick reads the fast tick BEFORE its sweep; when every run of the sweep left its NeoSet
//     at rest, and needed-at was older than RETIRE_AFTER_MS at that read, the tick deletes the fast
//     tick with that read's resourceVersion as precondition.
// Why nothing in flight is left without it. A run that leaves a NeoSet in flight either stamped — after
// the retiring read: the resourceVersion moved and the delete is refused 409; before it: needed-at is
// young and no delete is tried — or skipped the stamp because its instance stamped less than
// NEED_EVERY_MS ago, which is younger than RETIRE_AFTER_MS, so no delete is tried either until that
// instance's next stamp is due; while the NeoSet stays in flight, the fast tick's own sweeps (every
// minute) stamp again: stamps are at most NEED_EVERY_MS + a minute apart, under RETIRE_AFTER_MS. A
// deleted fast tick had needed-at older than RETIRE_AFTER_MS, so every instance's next in-flight run
// stamps, finds it gone (404) and creates it. What can still be lost is bounded by the slow tick.
//
// Writes it makes: one stamp per instance per NEED_EVERY_MS while in flight (the PingSource controller
// sees each: it is cheap), one GET per tick, one create and one delete per period of activity.
import type { Logger } from 'pino';
import { ApiError, type KubeClient } from './client.ts';
import { serverClock } from './server-clock.ts';
import type { PingSourceRef } from '../events/target.ts';
import { fastTickWrites } from '../metrics/sweep.ts';

export const NEEDED_AT = 'neoset.neo.io/needed-at';
/** An instance stamps needed-at at most this often. */
export const NEED_EVERY_MS = 30_000;
/** The fast tick is deleted only when no run has stamped it for this long (> NEED_EVERY_MS + its own period). */
export const RETIRE_AFTER_MS = 120_000;
export const FAST_TICK_SCHEDULE = '* * * * *';
/** After a failed stamp, the next run that needs the fast tick tries again this much later. */
export const STAMP_RETRY_MS = 5_000;

/** The fast tick as a tick read it before its sweep: its resourceVersion and needed-at (ms), or absent. */
export type FastTickReading = { present: false } | { present: true; resourceVersion: string; neededAtMs: number | null; serverNowMs: number };

export interface FastTick {
  /** A run left its NeoSet in flight: the fast tick exists and says so (throttled per instance). Never throws. */
  need(): Promise<void>;
  /** Before a tick's sweep: the fast tick as it is now; null when it could not be read (then nothing is retired). */
  read(): Promise<FastTickReading | null>;
  /** After the sweep, when every run left its NeoSet at rest: deletes the fast tick if `before` allows. Never throws. */
  retire(before: FastTickReading | null): Promise<'deleted' | 'kept' | 'absent'>;
}

export interface FastTickOptions {
  client: KubeClient;
  fast: PingSourceRef;
  resync: PingSourceRef;
  logger?: Logger;
  /** Monotonic ms (tests). */
  monotonic?: () => number;
}

/** A PingSource's path on the API server (not the `source` its ticks carry: target.ts pingSourcePath). */
const apiPath = (ref: PingSourceRef, name = true) => `/apis/sources.knative.dev/v1/namespaces/${ref.namespace}/pingsources${name ? `/${ref.name}` : ''}`;

interface PingSource {
  metadata?: { resourceVersion?: string; annotations?: Record<string, string> };
  spec?: { sink?: unknown };
}

export function createFastTick(opts: FastTickOptions): FastTick {
  const monotonic = opts.monotonic ?? (() => performance.now());
  // One clock for the module: needed-at is written and compared on the API server's time.
  const clock = serverClock(opts.client, { wall: () => Date.now(), monotonic });
  const path = apiPath(opts.fast);
  let stampedAt = -Infinity;
  let stamping: Promise<void> | null = null;

  const count = (op: 'stamp' | 'create' | 'delete' | 'read', result: string) => fastTickWrites.inc({ op, result });

  const create = async (at: string): Promise<void> => {
    const resync = await clock.client.request<PingSource>('GET', apiPath(opts.resync));
    const sink = resync.spec?.sink;
    if (!sink) throw new Error(`the resync PingSource ${opts.resync.namespace}/${opts.resync.name} has no spec.sink to copy`);
    const body = {
      apiVersion: 'sources.knative.dev/v1',
      kind: 'PingSource',
      metadata: {
        name: opts.fast.name,
        namespace: opts.fast.namespace,
        labels: { 'app.kubernetes.io/part-of': 'neoset', 'app.kubernetes.io/component': 'fast-tick' },
        annotations: { [NEEDED_AT]: at },
      },
      spec: { schedule: FAST_TICK_SCHEDULE, contentType: 'application/json', data: '{}', sink },
    };
    await clock.client.request('POST', apiPath(opts.fast, false), { body });
  };

  const stamp = async (): Promise<void> => {
    // needed-at is on the API server's time: an instance that has not read it yet reads it first
    // (any answer carries it, a 404 too).
    if (!clock.onServerClock()) await clock.client.request('GET', path).catch(() => undefined);
    const at = clock.now().toISOString();
    const patch = () => clock.client.request('PATCH', path, { patch: 'merge', body: { metadata: { annotations: { [NEEDED_AT]: at } } } });
    try {
      await patch();
      count('stamp', 'ok');
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
      try {
        await create(at);
        count('create', 'ok');
        opts.logger?.info({ pingsource: `${opts.fast.namespace}/${opts.fast.name}` }, 'fast tick created: a NeoSet has something in flight');
      } catch (createErr) {
        // Another instance created it meanwhile: stamp that one.
        if (!(createErr instanceof ApiError && createErr.status === 409)) throw createErr;
        await patch();
        count('stamp', 'ok');
      }
    }
  };

  return {
    need() {
      if (stamping) return stamping;
      const started = monotonic();
      if (started - stampedAt < NEED_EVERY_MS) return Promise.resolve();
      stamping = stamp()
        .then(
          () => void (stampedAt = started),
          (err: Error) => {
            count('stamp', 'error');
            // Tried again by a run STAMP_RETRY_MS later, not by every run meanwhile (a 403 would be each run's).
            stampedAt = started - NEED_EVERY_MS + STAMP_RETRY_MS;
            const forbidden = err instanceof ApiError && err.status === 403;
            opts.logger?.[forbidden ? 'error' : 'warn'](
              { pingsource: `${opts.fast.namespace}/${opts.fast.name}`, error: err.message },
              forbidden ? "fast tick forbidden: the reconcile account needs knative/rbac.yaml's Role neoset:reconcile-fast-tick; a lost event costs up to the slow tick" : 'fast tick not stamped: a lost event costs up to the slow tick until a run stamps it',
            );
          },
        )
        .finally(() => (stamping = null));
      return stamping;
    },

    async read() {
      try {
        const ps = await clock.client.request<PingSource>('GET', path);
        count('read', 'ok');
        const neededAt = Date.parse(ps.metadata?.annotations?.[NEEDED_AT] ?? '');
        return { present: true, resourceVersion: ps.metadata?.resourceVersion ?? '', neededAtMs: Number.isFinite(neededAt) ? neededAt : null, serverNowMs: clock.now().getTime() };
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          count('read', 'absent');
          return { present: false };
        }
        count('read', 'error');
        opts.logger?.warn({ pingsource: `${opts.fast.namespace}/${opts.fast.name}`, error: (err as Error).message }, 'fast tick not read: kept');
        return null;
      }
    },

    async retire(before) {
      if (before === null) return 'kept';
      if (!before.present) return 'absent';
      // A stamp it cannot read (someone edited it) is no reason to keep it forever: it is as old as can be.
      if (before.neededAtMs !== null && before.serverNowMs - before.neededAtMs < RETIRE_AFTER_MS) return 'kept';
      if (!before.resourceVersion) return 'kept';
      try {
        await clock.client.request('DELETE', path, { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: before.resourceVersion } } });
        count('delete', 'ok');
        opts.logger?.info({ pingsource: `${opts.fast.namespace}/${opts.fast.name}` }, 'fast tick deleted: every NeoSet at rest');
        return 'deleted';
      } catch (err) {
        // 409: a run stamped it since the read (something is in flight again); 404: another tick deleted it.
        const status = err instanceof ApiError ? err.status : 0;
        count('delete', status === 409 ? 'conflict' : status === 404 ? 'absent' : 'error');
        if (status !== 409 && status !== 404) opts.logger?.warn({ pingsource: `${opts.fast.namespace}/${opts.fast.name}`, error: (err as Error).message }, 'fast tick not deleted: kept');
        return 'kept';
      }
    },
  };
}
