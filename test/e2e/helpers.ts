// Small readers and writers the end-to-end scenarios share.
import { ANNOTATION_INPLACE_STATE, LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { paths } from '../../shared/k8s/paths.ts';
import type { Stack } from './stack.ts';
import type { NeoSetObject } from './observer.ts';

export const revisionOf = (p: Pod) => p.metadata.labels?.[LABEL_REVISION_HASH];
export const imageOf = (p: Pod) => p.spec.containers[0]?.image;
export const runningImageOf = (p: Pod) => p.status?.containerStatuses?.[0]?.image;
export const isReady = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
export const inPlace = (p: Pod) => Boolean(p.metadata.annotations?.[ANNOTATION_INPLACE_STATE]);
export const ordinalOf = (p: Pod) => Number(p.metadata.name.slice(p.metadata.name.lastIndexOf('-') + 1));
export const restartsOf = (p: Pod) => p.status?.containerStatuses?.[0]?.restartCount ?? 0;

/** A pod that finished moving to `revision`: label set, no update in flight, Ready, running the image. */
export const settledOn = (p: Pod, revision: string | undefined) =>
  revision !== undefined && revisionOf(p) === revision && !inPlace(p) && isReady(p) && !p.metadata.deletionTimestamp;

export async function applyNeoSet(stack: Stack, manifest: Record<string, unknown>): Promise<void> {
  const r = await stack.kubectl(['apply', '-f', '-'], JSON.stringify(manifest));
  if (r.code !== 0) throw new Error(`kubectl apply failed: ${r.stderr}`);
}

export async function patchNeoSet(stack: Stack, name: string, patch: Record<string, unknown>): Promise<void> {
  await stack.client.request('PATCH', paths.neoset(stack.namespace, name), { patch: 'merge', body: patch });
}

export const setStrategy = (stack: Stack, name: string, updateStrategy: Record<string, unknown>) =>
  patchNeoSet(stack, name, { spec: { updateStrategy } });

export const setImage = (stack: Stack, name: string, image: string, updateStrategy?: Record<string, unknown>) =>
  patchNeoSet(stack, name, {
    spec: { template: { spec: { containers: [{ name: 'main', image, readinessProbe: { tcpSocket: { port: 3306 } } }] } }, ...(updateStrategy ? { updateStrategy } : {}) },
  });

/** Waits until the NeoSet's status reports the generation it has and `predicate` holds. */
export function untilStatus(stack: Stack, name: string, what: string, predicate: (n: NeoSetObject, pods: Pod[]) => boolean, timeoutMs = 60_000) {
  return stack.observer.until(
    what,
    () => {
      const n = stack.observer.neoset(name);
      if (!n || n.status?.observedGeneration !== n.metadata.generation) return false;
      return predicate(n, stack.observer.pods(name)) ? n : false;
    },
    timeoutMs,
  );
}

export interface EventItem {
  type: string;
  reason: string;
  message: string;
  involvedObject: { name: string };
}

/**
 * The Events about `name` once `predicate` holds for them. A plan's Events are posted alongside its
 * final status write (SPEC §2.0), so a status a test has just seen may come before them: poll.
 */
export async function untilEvents(stack: Stack, name: string, what: string, predicate: (events: EventItem[]) => boolean, timeoutMs = 15_000): Promise<EventItem[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await stack.client.request<{ items: EventItem[] }>('GET', paths.events(stack.namespace));
    const mine = list.items.filter((e) => e.involvedObject.name === name);
    if (predicate(mine)) return mine;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for Events: ${what}; have ${JSON.stringify(mine.map((e) => `${e.type} ${e.reason}: ${e.message}`))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Pods by name → the identity fields an in-place update must keep. */
export const identities = (pods: Pod[]) =>
  Object.fromEntries(pods.map((p) => [p.metadata.name, { uid: p.metadata.uid, ip: p.status?.podIP, node: p.spec.nodeName }]));

/** Non-GET API requests counted by the in-process functions' metrics so far. */
export async function apiWrites(): Promise<number> {
  const { apiRequests } = await import('../../shared/metrics/registry.ts');
  const m = await apiRequests.get();
  return m.values.filter((v) => v.labels.verb !== 'get').reduce((s, v) => s + v.value, 0);
}

export async function apiRequestsTotal(): Promise<number> {
  const { apiRequests } = await import('../../shared/metrics/registry.ts');
  const m = await apiRequests.get();
  return m.values.reduce((s, v) => s + v.value, 0);
}

/** The names of the stack namespace's PVCs starting with `prefix`, not terminating, sorted. */
export async function pvcNames(stack: Stack, prefix: string): Promise<string[]> {
  const { items } = await stack.client.request<{ items: { metadata: { name: string; deletionTimestamp?: string } }[] }>('GET', paths.pvcs(stack.namespace));
  return items
    .filter((p) => p.metadata.name.startsWith(prefix) && !p.metadata.deletionTimestamp)
    .map((p) => p.metadata.name)
    .sort();
}

/** A volumeClaimTemplate of 1Gi named `data`. */
export const DATA_CLAIM = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
