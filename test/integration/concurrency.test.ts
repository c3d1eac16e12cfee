// SPEC §2: any number of concurrent, stateless instances are safe because every write is conditional.
// The walkthrough again with 3 reconcile and 2 readiness instances, each receiving every event, every
// event delivered twice and in shuffled order: the same end state and no invariant violated.
// Then: replaying saved events after completion causes no write.
import { expect, it } from 'vitest';
import pino from 'pino';
import { createApp as createReconcile } from '../../functions/reconcile/app.ts';
import { createApp as createReadiness } from '../../functions/readiness/app.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { apiWrites } from '../e2e/helpers.ts';
import { NAME, walkthrough } from '../e2e/walkthrough.ts';
import { pingEvent, resourceEvent, toBinaryRequest } from '../../dev/bridge/pump.ts';

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
});
