// The hook owner of examples/hooks (SPEC §4.10): what a MySQL operator would do when NeoSet asks before
// and after updating a pod. Pure decisions over the pods it reads; every write is a conditional pod patch.
//
// A lifecycle CloudEvent is a hint, never a command (SPEC §2): anything that can reach the function can
// send one, and a forged PreparingUpdate for the primary's pod would fail the primary over. So the
// event only names a pod; the owner reads it, and acts on the lifecycle state the pod itself carries
// (label neoset.neo.io/lifecycle-state, set by NeoSet before it sends the event) and on the pod's own
// labels. An event whose pod does not carry the state it claims is ignored (and said so).
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
  /**
   * One lifecycle event: the state it claims and the pod it names. Acted on only when the pod, as
   * read, carries that state; the line says what was done (or why nothing was).
   */
  onLifecycle(claimed: string, podName: string): Promise<string>;
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
    async onLifecycle(claimed, podName) {
      const pods = await list();
      // Only the NeoSet's own pods (the list's label selector); the name is never put in a path unread.
      const pod = pods.find((p) => p.metadata.name === podName);
      if (!pod) return `${podName}: no such pod of ${neoset}, ignored`;
      const state = pod.metadata.labels?.[STATE];
      if (state !== claimed) return `${podName}: the event says ${claimed}, the pod is ${state ?? 'in no lifecycle state'}: ignored`;
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
        if (fresh.metadata.labels?.[STATE] !== 'PreparingUpdate') return `${podName}: no longer PreparingUpdate${moved}`;
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

/**
 * Guards the pods every `intervalMs` (a round's error is reported, the next round tries again) until
 * the returned stop(), which waits for the round in flight.
 */
export function guardEvery(owner: Owner, intervalMs: number, onError: (err: Error) => void = () => {}): () => Promise<void> {
  let guarding = true;
  const loop = (async () => {
    while (guarding) {
      await owner.guard().catch(onError);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return async () => {
    guarding = false;
    await loop;
  };
}
