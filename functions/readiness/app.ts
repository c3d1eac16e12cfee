// The readiness function: Pod events → is this pod's in-place update really done (SPEC §4.5)?
// Flips its InPlaceUpdateReady condition and records the update duration. The judgement is the
// core's decideReadiness, the same logic reconcile runs, narrowed to the one pod.
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { decideReadiness } from '../../shared/core/decide.ts';
import { createEventApp } from '../../shared/http/event-app.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { neosetsOf, reconcileOne } from '../../shared/k8s/reconcile.ts';

export interface ReadinessDeps {
  client: KubeClient;
  logger?: Logger;
  now?: () => Date;
}

export function createApp(deps: ReadinessDeps): Hono {
  const now = deps.now ?? (() => new Date());
  return createEventApp({
    name: 'readiness',
    logger: deps.logger,
    handle: async (event) => {
      const { target } = event;
      if (target.kind !== 'pod') return []; // NeoSet events and ticks are reconcile's
      const keys = await neosetsOf(deps.client, target);
      const outcomes = [];
      for (const key of keys) {
        outcomes.push(await reconcileOne(deps.client, key, (snapshot, at) => decideReadiness(snapshot, target.name, at), now));
      }
      return outcomes;
    },
  });
}
