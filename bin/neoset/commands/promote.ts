import type { Cluster } from '../cluster.ts';
import { readNeoSet, ref } from '../neosets.ts';
import { promotePatch, promotion } from '../../../shared/core/update/promotion.ts';
import { writeNeoSet } from '../write.ts';
import { canary, hasSteps } from './canary.ts';

/** The next canary step (or --full); returns what it did, as the CLI prints it and the dashboard shows it. */
export async function promote({ client, namespace }: Cluster, name: string, full: boolean): Promise<string> {
  const neoset = await readNeoSet(client, namespace, name);
  // §4.11: with canary steps, promote moves the steps (one, or --full to the end), not the partition.
  if (hasSteps(neoset.spec)) return canary({ client, namespace }, name, full ? 'promote-full' : 'promote');
  const step = promotion(neoset, full);
  if (!step) return `${ref(name)} is already fully promoted (partition 0, not paused)`;
  await writeNeoSet(client, neoset, { patch: 'merge', body: promotePatch(neoset, step) });
  const moved = step.from === step.to ? `partition ${step.to}` : `partition ${step.from} -> ${step.to}`;
  return `${ref(name)} promoted: ${moved}${step.resumes ? ', resumed' : ''}`;
}
