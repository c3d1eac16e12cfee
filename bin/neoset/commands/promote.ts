import type { Cluster } from '../cluster.ts';
import { ref } from '../neosets.ts';
import { promotePatch, promotion } from '../../../shared/core/update/promotion.ts';
import { decideAndWrite, writeNeoSet } from '../write.ts';
import { canaryBasis, canaryOn, hasSteps } from './canary.ts';
import type { NeoSet } from '../../../shared/api/neoset.ts';
import { serverClock } from '../../../shared/k8s/server-clock.ts';

/** The next canary step (or --full); returns what it did, as the CLI prints it and the dashboard shows it. */
export async function promote({ client, namespace }: Cluster, name: string, full: boolean): Promise<string> {
  // Decided on the spec (and the canary's place in its steps): two promotes at once must not both move it.
  const basis = (n: NeoSet) => (hasSteps(n.spec) ? canaryBasis(n) : n.spec);
  const clock = serverClock(client);
  return decideAndWrite(clock.client, namespace, name, basis, async (neoset) => {
    // §4.11: with canary steps, promote moves the steps (one, or --full to the end), not the partition.
    if (hasSteps(neoset.spec)) return canaryOn(client, neoset, full ? 'promote-full' : 'promote', clock.now().getTime());
    const step = promotion(neoset, full);
    if (!step) return `${ref(name)} is already fully promoted (partition 0, not paused)`;
    await writeNeoSet(client, neoset, { patch: 'merge', body: promotePatch(neoset, step) });
    const moved = step.from === step.to ? `partition ${step.to}` : `partition ${step.from} -> ${step.to}`;
    return `${ref(name)} promoted: ${moved}${step.resumes ? ', resumed' : ''}`;
  });
}
