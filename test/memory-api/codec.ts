// What a round trip through kube-apiserver's Go types does to an object NeoSet reads back: a field
// without omitempty, or a struct (metav1.Time, ContainerState) that omitempty cannot omit, is
// written even when the client left it out — so every pod and claim condition carries
// `lastProbeTime` and `lastTransitionTime` (null when unset), and every container status its
// `state`, `lastState` ({}), `ready` and `restartCount`; and an empty map of labels or annotations
// is left out.
import type { Resource } from './resources.ts';
import type { KubeObject } from './store.ts';

type Status = { conditions?: Record<string, unknown>[]; containerStatuses?: Record<string, unknown>[]; initContainerStatuses?: Record<string, unknown>[] };

const CONTAINER_STATUS = () => ({ image: '', imageID: '', ready: false, restartCount: 0, state: {}, lastState: {} });

export function encode(resource: Resource, obj: KubeObject): void {
  // ObjectMeta's maps are omitempty: a JSON patch that removes the last annotation leaves none.
  for (const field of ['labels', 'annotations'] as const) {
    const map = obj.metadata[field];
    if (map !== undefined && map !== null && Object.keys(map).length === 0) delete obj.metadata[field];
  }
  if (resource !== 'pods' && resource !== 'persistentvolumeclaims') return;
  const status = obj.status as Status | undefined;
  for (const c of status?.conditions ?? []) {
    c.lastProbeTime ??= null;
    c.lastTransitionTime ??= null;
  }
  for (const s of [...(status?.containerStatuses ?? []), ...(status?.initContainerStatuses ?? [])]) {
    for (const [field, unset] of Object.entries(CONTAINER_STATUS())) s[field] ??= unset;
  }
}
