// The readiness function: Pod events → where is this pod's in-place update (SPEC §4.4, §4.5)? It opens
// the pod's InPlaceUpdateReady gate once the changed containers run the new images (the kubelet's Ready
// then waits for their probes), finishes the update once they are ready, and records its duration.
// The Pod in the event only lets it skip; a write is decided from the pod as read from the API server
// (shared/k8s/pod-readiness.ts, SPEC §2.0), with no read of the NeoSet.
// Its duties are its own: on Pod events the reconcile function leaves them alone (§2.2).
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { createEventApp } from '../../shared/http/event-app.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { readinessOne } from '../../shared/k8s/pod-readiness.ts';

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
      if (event.target.kind !== 'pod' || event.type.endsWith('.delete')) return []; // NeoSet events and ticks are reconcile's
      return readinessOne(deps.client, event.target, event.object, now);
    },
  });
}
