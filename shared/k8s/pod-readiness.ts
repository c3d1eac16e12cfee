// The readiness function's work for one Pod event (SPEC §2.0, §2.2): the Pod in the event (Resource
// mode; one GET in Reference mode) stands in for every read — what the decision needs of the NeoSet
// was recorded on the pod when its update started — and every write is conditional on that Pod's
// resourceVersion, so a stale or replayed event costs at most a lost race.
import { KIND, LABEL_NEOSET_NAME } from '../api/names.ts';
import type { Pod } from '../core/objects.ts';
import { podReadiness } from '../core/update/readiness.ts';
import type { Target } from '../events/target.ts';
import { reconcileDuration, reconcileTotal } from '../metrics/registry.ts';
import { applyPodWrites, writtenBefore } from './apply.ts';
import { ApiError, type KubeClient } from './client.ts';
import { paths } from './paths.ts';
import type { Outcome } from './reconcile.ts';

export async function readinessOne(client: KubeClient, target: Extract<Target, { kind: 'pod' }>, object: unknown, now: () => Date): Promise<Outcome[]> {
  const stop = reconcileDuration.startTimer();
  const pod = (object as Pod | null) ?? (await client.request<Pod>('GET', paths.pod(target.namespace, target.name)).catch((err) => {
    if (err instanceof ApiError && err.isNotFound) return null;
    throw err;
  }));
  const owner = pod?.metadata.ownerReferences?.find((r) => r.controller && r.kind === KIND);
  if (!pod || !owner || pod.metadata.labels?.[LABEL_NEOSET_NAME] !== owner.name) return [];
  const id = `${target.namespace}/${owner.name}`;
  const outcome = await (async (): Promise<Outcome> => {
    const actions = podReadiness(pod, now().getTime());
    if (actions.length === 0) return { neoset: id, result: 'ok', actions: [], statusWritten: false, requeueAfter: null };
    try {
      const applied = await applyPodWrites(client, { name: owner.name, namespace: target.namespace, uid: owner.uid }, actions, { now });
      return { neoset: id, result: applied.outcome === 'applied' ? 'ok' : applied.outcome, actions: applied.written, statusWritten: false, requeueAfter: null };
    } catch (err) {
      const transient = err instanceof ApiError ? err.isTransient : false;
      return { neoset: id, result: 'error', actions: writtenBefore(err), statusWritten: false, requeueAfter: null, error: (err as Error).message, transient };
    }
  })();
  stop();
  reconcileTotal.inc({ result: outcome.result });
  return [outcome];
}
