// SPEC §2.5: the series that name NeoSets (the state gauges, the in-place update durations) are
// served on METRICS_PORT's app only; the event port's /metrics — which the Broker's deliveries and, on
// Knative, anyone in the cluster reach through the route — carries the instance's own series alone.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createApp, createMetricsApp } from '../../functions/reconcile/app.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { inPlaceUpdateDuration } from '../../shared/metrics/registry.ts';

const TENANT = 'tenant-b';
const client: KubeClient = {
  // The state gauges' Table LIST (state-gauges.ts): printer columns and each row's metadata.
  request: async <T>() =>
    ({
      columnDefinitions: ['Name', 'Replicas', 'Ready', 'Updated', 'Phase'].map((name) => ({ name })),
      rows: [{ cells: ['payroll', 3, 3, 3, 'Completed'], object: { metadata: { name: 'payroll', namespace: TENANT } } }],
    }) as T,
};

describe("reconcile's metrics", () => {
  // What apply.ts observes when an in-place update of the tenant's NeoSet finishes.
  inPlaceUpdateDuration.observe({ namespace: TENANT, neoset: 'payroll' }, 4);

  it('the event port: its own series, none naming a NeoSet', async () => {
    const text = await (await createApp({ client, logger: pino({ level: 'silent' }) }).request('/metrics')).text();
    expect(text).toContain('neoset_reconcile_total');
    expect(text).not.toContain(TENANT);
    expect(text).not.toMatch(/^neoset_(replicas|phase|inplace_update_duration_seconds_count)\{/m);
  });

  it('the metrics port: the same, and the NeoSets state gauges and update durations', async () => {
    const text = await (await createMetricsApp(client).request('/metrics')).text();
    expect(text).toContain('neoset_reconcile_total');
    expect(text).toContain(`neoset_phase{namespace="${TENANT}",neoset="payroll"} 4`);
    expect(text).toContain(`neoset_inplace_update_duration_seconds_count{namespace="${TENANT}",neoset="payroll"} 1`);
  });
});
