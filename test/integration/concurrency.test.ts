// SPEC §2: any number of concurrent, stateless instances are safe because every write is conditional.
// The walkthrough again with 3 reconcile and 2 readiness instances, each receiving every event, every
// event delivered twice and in shuffled order: the same end state and no invariant violated.
// Then: replaying saved events after completion causes no write. And no promise of any instance was
// left without a handler (SPEC §2.3): counted here as a function process counts it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pino from 'pino';
import { createApp as createReconcile } from '../../functions/reconcile/app.ts';
import { createApp as createReadiness } from '../../functions/readiness/app.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { apiWrites } from '../e2e/helpers.ts';
import { NAME, walkthrough } from '../e2e/walkthrough.ts';
import { pingEvent, resourceEvent, toBinaryRequest } from '../../dev/bridge/pump.ts';
import { reportUnhandledRejections } from '../../shared/http/unhandled.ts';
import { unhandledRejections } from '../../shared/metrics/registry.ts';

// In-process an unhandled rejection would only be a vitest error report; a function process survives it
// and counts it (shared/http/unhandled.ts, as runFunction installs it): the run must count none.
let stopReporting = () => {};
beforeAll(() => void (stopReporting = reportUnhandledRejections(pino({ level: 'fatal' }))));
afterAll(() => stopReporting());

walkthrough('concurrent', { reconcileInstances: 3, readinessInstances: 2, copies: 2, shuffleWindowMs: 40 }, (stack) => {
  it('replaying events after completion causes no write', async () => {
    const s = stack();
    await s.pump.stop(); // nothing else feeds the functions now
    const logger = pino({ level: 'silent' });
    const reconcile = createReconcile({ client: createKubeClient(s.kc), logger, recheck: () => {} });
    const readiness = createReadiness({ client: createKubeClient(s.kc), logger });
    const server = s.kc.getCurrentCluster()!.server;
    const neoset = s.observer.neoset(NAME)!;
    const events = [
      resourceEvent(server, 'MODIFIED', neoset as never),
      ...s.observer.pods(NAME).map((p) => resourceEvent(server, 'MODIFIED', { ...p, kind: 'Pod', apiVersion: 'v1' } as never)),
      pingEvent(),
    ];
    const before = await apiWrites();
    for (const e of events) {
      for (const app of [reconcile, readiness]) {
        const res = await app.fetch(toBinaryRequest('http://in-process/', e));
        expect(res.status).toBe(200);
        expect(await res.text()).toBe('');
      }
    }
    expect(await apiWrites()).toBe(before);
  });

  it('no promise was left without a handler in the whole run (neoset_unhandled_rejections_total 0)', async () => {
    expect((await unhandledRejections.get()).values.reduce((sum, v) => sum + v.value, 0)).toBe(0);
  });
});
