// What METRICS_PORT's listener serves (shared/http/main.ts): GET /metrics with the instance's own
// series, the series labelled by NeoSet (perNeoSetRegistry) and, for reconcile, the state gauges read
// from the API at scrape time (SPEC §4.8).
//
// Why a port of its own (SPEC §2.5, nothing crosses namespaces): the event port is what the Broker
// delivers to and, on Knative, what the Service's route reaches — any pod of the cluster can GET
// http://neoset-reconcile.neoset-system.svc/metrics through it. Series that name every NeoSet's
// namespace, name and phase would tell each tenant of the others. The metrics port is not behind
// the route (Knative routes one port), and knative/networkpolicy.yaml opens it to Prometheus alone.
// The event port's /metrics keeps the instance's own series, which name no NeoSet.
import { Hono } from 'hono';
import type { Registry } from 'prom-client';
import type { KubeClient } from '../k8s/client.ts';
import { perNeoSetRegistry, registry } from './registry.ts';
import { createStateGauges } from './state-gauges.ts';

export interface MetricsPortOptions {
  /** Reconcile's: the state gauges list the NeoSets with it. Without: no state gauges. */
  client?: KubeClient;
  /** The instance's registry (default the functions' shared one). */
  instance?: Registry;
  /** The per-NeoSet series (default perNeoSetRegistry). */
  perNeoSet?: Registry;
}

export function metricsPortApp(opts: MetricsPortOptions = {}): Hono {
  const { instance = registry, perNeoSet = perNeoSetRegistry } = opts;
  const state = opts.client ? createStateGauges(opts.client) : null;
  const app = new Hono();
  app.get('/metrics', async (c) => {
    const parts = await Promise.all([instance.metrics(), perNeoSet.metrics(), state?.metrics() ?? Promise.resolve('')]);
    return c.text(parts.filter((p) => p !== '').join('\n'), 200, { 'Content-Type': instance.contentType });
  });
  return app;
}
