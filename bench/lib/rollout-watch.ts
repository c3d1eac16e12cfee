// What a rollout looked like, from a watch on its pods (receive times of the watch events, epoch ms
// on the shared clock of shared/k8s/run-timing.ts, so that the functions' logs compare): when each
// pod's update was first written — NeoSet: the pod's in-place state annotation appears; StatefulSet:
// the old pod gets its deletionTimestamp (or is gone) — when each pod became Ready running the new
// image (its Ready condition True and its container's status reporting the new image, so a pod whose
// spec changed but whose old container still runs does not count), and (NeoSet) when its update was
// finished: the annotation gone again.
import type { KubeConfig } from '@kubernetes/client-node';
import { ANNOTATION_INPLACE_STATE } from '../../shared/api/names.ts';
import { normalizeImage } from '../../dev/kubelet/image.ts';
import { resilientWatch, type KubeObject } from '../../shared/k8s/watch.ts';
import { quantile } from './stats.ts';
import { epochMs } from '../../shared/k8s/run-timing.ts';

interface WirePod extends KubeObject {
  metadata: KubeObject['metadata'] & { deletionTimestamp?: string; annotations?: Record<string, string> };
  status?: { conditions?: { type: string; status: string }[]; containerStatuses?: { image: string; ready: boolean }[] };
}

export type Writer = 'neoset' | 'statefulset';

export interface RolloutWatch {
  ready: Promise<void>;
  /** Starts recording: `image` is the new one; events before this are ignored. */
  begin(image: string): void;
  /** Pods Ready on the new image so far. */
  readyCount(): number;
  /** Resolves when `n` pods are Ready on the new image, with the time the last one was seen. */
  allReady(n: number): Promise<number>;
  writes(): number[];
  readies(): number[];
  /** The pods in the order their update was written, and in the order they became Ready (with when). */
  writtenOrder(): string[];
  readyOrder(): [pod: string, at: number][];
  /** When the pod of this name became Ready on the new image. */
  readyAt(name: string): number | undefined;
  /** NeoSet: when each pod's update was finished (its in-place state annotation gone again), by pod. */
  finishes(): Map<string, number>;
  stop(): void;
}

export function watchRollout(kc: KubeConfig, namespace: string, writer: Writer): RolloutWatch {
  let image: string | undefined;
  const written = new Map<string, number>();
  const readyAt = new Map<string, number>();
  const finishedAt = new Map<string, number>();
  let waiter: { n: number; resolve: (t: number) => void } | undefined;
  const check = () => {
    if (waiter && readyAt.size >= waiter.n) {
      waiter.resolve(Math.max(...readyAt.values()));
      waiter = undefined;
    }
  };
  const onEvent = (type: string, obj: KubeObject) => {
    if (!image) return;
    const now = epochMs();
    const pod = obj as WirePod;
    const name = pod.metadata.name;
    const running = pod.status?.containerStatuses?.[0];
    const onNew = running?.image === image && running.ready;
    if (!written.has(name)) {
      const write =
        writer === 'neoset'
          ? pod.metadata.annotations?.[ANNOTATION_INPLACE_STATE] !== undefined
          : (type === 'DELETED' || pod.metadata.deletionTimestamp !== undefined) && !onNew;
      if (write) written.set(name, now);
    } else if (writer === 'neoset' && !finishedAt.has(name) && pod.metadata.annotations?.[ANNOTATION_INPLACE_STATE] === undefined) {
      finishedAt.set(name, now);
    }
    const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (type !== 'DELETED' && !pod.metadata.deletionTimestamp && ready && onNew && !readyAt.has(name)) {
      readyAt.set(name, now);
      check();
    }
  };
  const watch = resilientWatch({ kubeConfig: kc, path: `/api/v1/namespaces/${namespace}/pods`, onEvent });
  return {
    ready: watch.ready,
    begin(newImage) {
      image = normalizeImage(newImage);
    },
    readyCount: () => readyAt.size,
    allReady: (n) =>
      new Promise((resolve) => {
        waiter = { n, resolve };
        check();
      }),
    writes: () => [...written.values()].sort((a, b) => a - b),
    readies: () => [...readyAt.values()].sort((a, b) => a - b),
    writtenOrder: () => [...written].sort((a, b) => a[1] - b[1]).map(([pod]) => pod),
    readyOrder: () => [...readyAt].sort((a, b) => a[1] - b[1]),
    readyAt: (name) => readyAt.get(name),
    finishes: () => finishedAt,
    stop: () => watch.stop(),
  };
}

/**
 * Step latency: with maxUnavailable k, the first k updates start at once and every later one waits
 * for a slot that a pod becoming Ready frees. So the (k+i)-th update write is paired with the i-th
 * Ready: step i = write[k+i] − ready[i]. Returns p50 and p90 in ms.
 */
export function stepLatency(writes: number[], readies: number[], k: number): { p50: number; p90: number; steps: number[] } {
  const steps: number[] = [];
  for (let i = 0; k + i < writes.length && i < readies.length; i++) steps.push(writes[k + i] - readies[i]);
  return { p50: quantile(steps, 0.5), p90: quantile(steps, 0.9), steps };
}
