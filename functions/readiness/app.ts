// The readiness function: Pod events → where is this pod's in-place update (SPEC §4.4, §4.5)? It opens
// the pod's InPlaceUpdateReady gate once the changed containers run the new images (the kubelet's Ready
// then waits for their probes), finishes the update once they are ready, and records its duration.
// The Pod in the event is a claim: it may make it skip, and a write decided on it carries the facts it
// was decided on as tests the API server checks (shared/k8s/pod-readiness.ts, pod-facts.ts, SPEC §2.0);
// with no read of the NeoSet.
// Its duties are its own: on Pod events the reconcile function leaves them alone (§2.2).
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { createEventApp } from '../../shared/http/event-app.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { readinessOne } from '../../shared/k8s/pod-readiness.ts';
import { clockMemory, systemClock } from '../../shared/k8s/server-clock.ts';

export interface ReadinessDeps {
  client: KubeClient;
  logger?: Logger;
  now?: () => Date;
}

export function createApp(deps: ReadinessDeps): Hono {
  const now = deps.now ?? (() => new Date());
  // The latest Date this instance read (server-clock.ts ClockMemory): lets a write on an event's facts
  // be stamped on the API server's clock without a read first. Losing it costs a read.
  const memory = clockMemory();
  return createEventApp({
    name: 'readiness',
    logger: deps.logger,
    handle: async (event) => {
      if (event.target.kind !== 'pod' || event.type.endsWith('.delete')) return []; // NeoSet events and ticks are reconcile's
      return readinessOne(deps.client, event.target, event.object, now, systemClock.monotonic, memory);
    },
  });
}
