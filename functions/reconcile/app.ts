// The reconcile function: NeoSet and Pod events and resync ticks → read, decide, apply (SPEC §2.2).
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { decide, type Duties } from '../../shared/core/decide.ts';
import { createEventApp } from '../../shared/http/event-app.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { neosetsOf, reconcileOne, type NeoSetKey } from '../../shared/k8s/reconcile.ts';
import { mountStateGauges } from '../../shared/metrics/state-gauges.ts';

/** A short requeueAfter is served by a bounded in-process re-check; longer ones by the resync tick. */
export const MAX_SELF_RECHECK_SECONDS = 30;

export interface ReconcileDeps {
  client: KubeClient;
  logger?: Logger;
  now?: () => Date;
  /** Schedules a re-check; default an unref'd timer (losing it is harmless: resync covers it). */
  recheck?: (key: NeoSetKey, delayMs: number) => void;
}

export function createApp(deps: ReconcileDeps): Hono {
  const now = deps.now ?? (() => new Date());
  // A Pod event also reaches the readiness function, whose duties it then leaves alone (§2.2).
  const run = (key: NeoSetKey, duties: Duties = 'all') => reconcileOne(deps.client, key, (s, at) => decide(s, at, duties), now);
  const recheck =
    deps.recheck ??
    ((key: NeoSetKey, delayMs: number) => {
      setTimeout(() => void run(key), delayMs).unref();
    });
  return createEventApp({
    name: 'reconcile',
    logger: deps.logger,
    // /metrics also carries the NeoSet state gauges, listed from the API at scrape time (SPEC §4.8).
    extend: (app) => mountStateGauges(app, deps.client),
    handle: async (event) => {
      const keys = await neosetsOf(deps.client, event.target);
      const outcomes = [];
      const duties: Duties = event.target.kind === 'pod' ? 'reconcile' : 'all';
      for (const key of keys) {
        const outcome = await run(key, duties);
        if (outcome.requeueAfter !== null && outcome.requeueAfter <= MAX_SELF_RECHECK_SECONDS) {
          recheck(key, Math.max(100, outcome.requeueAfter * 1000));
        }
        outcomes.push(outcome);
      }
      return outcomes;
    },
  });
}
