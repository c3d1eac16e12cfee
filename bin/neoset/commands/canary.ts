// promote / abort / retry on a NeoSet with canary steps (SPEC §4.11): a new status.canary, written
// through the status subresource conditional on the resourceVersion read — spec is never touched.
// The decision reads it from there like any other memory of the rollout.
import { canaryCommand, type CanaryCommand } from '../../../shared/core/canary/commands.ts';
import { canaryPosition } from '../../../shared/core/canary/position.ts';
import type { NeoSet } from '../../../shared/api/neoset.ts';
import type { KubeClient } from '../../../shared/k8s/client.ts';
import { paths } from '../../../shared/k8s/paths.ts';
import { serverClock } from '../../../shared/k8s/server-clock.ts';
import type { Cluster } from '../cluster.ts';
import { stepText } from '../get-view.ts';
import { ref } from '../neosets.ts';
import { decideAndWrite, throwIfConflict } from '../write.ts';

const DONE: Record<CanaryCommand, (step: string) => string> = {
  promote: (step) => `promoted: ${step}`,
  'promote-full': () => 'promoted to the end of the canary steps',
  abort: () => 'aborted: pods return to the current revision',
  retry: () => 'retried: the canary steps start again at step 1',
};

const NOT_DONE: Record<CanaryCommand, string> = { promote: 'promoted', 'promote-full': 'promoted', abort: 'aborted', retry: 'retried' };

/** What a canary command is decided on: the steps and where the rollout is in them. */
export const canaryBasis = (n: NeoSet) => ({ spec: n.spec, canary: n.status?.canary });

/** Runs a canary command; returns what it did (or why it did nothing), as the CLI prints it. */
export async function canary({ client, namespace }: Cluster, name: string, command: CanaryCommand, now?: number): Promise<string> {
  // SPEC §2.3: what it stamps (stepStartedAt, the request's time) is on the API server's clock, read
  // from the GET's Date — a laptop's clock 60 s behind would otherwise shorten the next timed pause.
  const clock = serverClock(client);
  return decideAndWrite(clock.client, namespace, name, canaryBasis, (neoset) => canaryOn(client, neoset, command, now ?? clock.now().getTime()));
}

/** One attempt: the command decided on `neoset`, written conditional on its resourceVersion. */
export async function canaryOn(client: KubeClient, neoset: NeoSet, command: CanaryCommand, now: number): Promise<string> {
  const { name, namespace = 'default' } = neoset.metadata;
  const r = canaryCommand(neoset, command, now);
  if ('refused' in r) return `${ref(name)} not ${NOT_DONE[command]}: ${r.refused}`;
  try {
    await client.request('PATCH', paths.neosetStatus(namespace, name), {
      patch: 'merge',
      body: { metadata: { resourceVersion: neoset.metadata.resourceVersion }, status: { canary: { ...r.canary, analysis: r.canary.analysis ?? null, abort: r.canary.abort ?? null } } },
    });
  } catch (err) {
    throwIfConflict(err, name);
    throw err;
  }
  const at = canaryPosition(neoset.spec.updateStrategy.canary?.steps.length ?? 0, r.canary, neoset.status?.updateRevision);
  return `${ref(name)} ${DONE[command](`step ${at ? stepText(at) : '-'}`)}`;
}

/** Whether `promote` drives the canary steps rather than the partition. */
export const hasSteps = (spec: { updateStrategy: { canary?: { steps: unknown[] } } }) => (spec.updateStrategy.canary?.steps.length ?? 0) > 0;
