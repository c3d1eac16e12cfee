// The hook owner of examples/hooks (SPEC §4.10): what a MySQL operator would do when NeoSet asks before
// and after updating a pod. Pure decisions over the pods it reads; every write is a conditional pod patch.
//
//   guard:            every pod of the NeoSet carries mysql.neo.io/serving=true (the "hold" on it), and
//                     one pod carries mysql.neo.io/role=primary (ordinal 0 at first)
//   PreparingUpdate:  the primary's pod: move role=primary to another Ready pod first; then (any pod)
//                     remove serving — NeoSet's "go"
//   Updated:          put serving back — "re-joined"
import type { KubeClient } from '../../shared/k8s/client.ts';
import type { Pod } from '../../shared/core/objects.ts';

export const SERVING = 'mysql.neo.io/serving';
export const ROLE = 'mysql.neo.io/role';
const STATE = 'neoset.neo.io/lifecycle-state';

export interface Owner {
  /** One lifecycle event: its state and the pod it is about. */
  onLifecycle(state: string, podName: string): Promise<string>;
  /** Guard the pods (new ones included) and make sure there is a primary. */
  guard(): Promise<void>;
}

export function createOwner(client: KubeClient, namespace: string, neoset: string): Owner {
  const podPath = (name: string) => `/api/v1/namespaces/${namespace}/pods/${name}`;
  const list = async () =>
    (await client.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${namespace}/pods`, { query: { labelSelector: `neoset.neo.io/name=${neoset}` } })).items;
  const label = (pod: Pod, labels: Record<string, string | null>) =>
    client.request<Pod>('PATCH', podPath(pod.metadata.name), { patch: 'merge', body: { metadata: { resourceVersion: pod.metadata.resourceVersion, labels } } });
  const ready = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

  return {
    async onLifecycle(state, podName) {
      const pods = await list();
      const pod = pods.find((p) => p.metadata.name === podName);
      if (!pod) return `${podName}: gone`;
      if (state === 'PreparingUpdate') {
        let moved = '';
        if (pod.metadata.labels?.[ROLE] === 'primary') {
          // Fail over first: a Ready pod in no update of its own (Normal) becomes the primary.
          const next = pods.find((p) => p !== pod && ready(p) && p.metadata.labels?.[STATE] === 'Normal' && !p.metadata.deletionTimestamp);
          if (!next) return `${podName}: primary, no other pod ready to take over yet`;
          await label(next, { [ROLE]: 'primary' });
          moved = `, primary moved to ${next.metadata.name}`;
        }
        // Read again: the pod may have changed since the list (a conditional write would say so).
        const fresh = await client.request<Pod>('GET', podPath(podName));
        await label(fresh, { [SERVING]: null, ...(fresh.metadata.labels?.[ROLE] === 'primary' && moved ? { [ROLE]: null } : {}) });
        return `${podName}: go${moved}`;
      }
      if (state === 'Updated' && pod.metadata.labels?.[SERVING] !== 'true') {
        await label(pod, { [SERVING]: 'true' });
        return `${podName}: re-joined`;
      }
      return `${podName}: ${state}, nothing to do`;
    },
    async guard() {
      const pods = (await list()).filter((p) => !p.metadata.deletionTimestamp);
      for (const p of pods) {
        const state = p.metadata.labels?.[STATE];
        // PreparingUpdate and Updating are the update's: the owner let go of them.
        if (state !== 'PreparingUpdate' && state !== 'Updating' && p.metadata.labels?.[SERVING] !== 'true') await label(p, { [SERVING]: 'true' }).catch(() => undefined);
      }
      if (!pods.some((p) => p.metadata.labels?.[ROLE] === 'primary')) {
        const first = pods.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name, undefined, { numeric: true }))[0];
        if (first) await client.request('PATCH', podPath(first.metadata.name), { patch: 'merge', body: { metadata: { labels: { [ROLE]: 'primary' } } } });
      }
    },
  };
}
