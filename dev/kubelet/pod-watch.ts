// List + watch of pods that does not trust the watch: a client-node watch can end or stall silently
// (kubernetes-client/javascript#596, #958; SPEC §8), so it is restarted from the last resourceVersion
// whenever it ends (the server closes it every `timeoutSeconds`), relisted on 410 Gone, and the whole
// list is also re-read every `resyncMs`. Events are hints: the receiver reads what it acts on.

import { CoreV1Api, Watch, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { describeError, statusCode } from './api-errors.ts';

export interface PodWatchOptions {
  kubeConfig: KubeConfig;
  /** Watch this namespace only; every namespace when omitted. */
  namespace?: string;
  resyncMs: number;
  /** A full list, at start and every resyncMs. */
  onList: (pods: V1Pod[]) => void;
  /** A watch event (the raw wire object, not a client-node model). */
  onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: WirePod) => void;
  log: (msg: string) => void;
}

/** The few fields of a watched pod a receiver filters on, as they come over the wire. */
export interface WirePod {
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
  spec?: { nodeName?: string };
}

const WATCH_TIMEOUT_SECONDS = 25; // below client-node's 30 s idle abort, so the server ends it first
const RETRY_MS = 1000;

export async function startPodWatch(opts: PodWatchOptions): Promise<{ stop(): Promise<void> }> {
  const core = opts.kubeConfig.makeApiClient(CoreV1Api);
  const watch = new Watch(opts.kubeConfig);
  const path = opts.namespace ? `/api/v1/namespaces/${opts.namespace}/pods` : '/api/v1/pods';
  let stopped = false;
  let resourceVersion = '';
  let restartTimer: NodeJS.Timeout | undefined;
  let resyncTimer: NodeJS.Timeout | undefined;
  const inFlight = new Set<Promise<unknown>>();
  const aborts = new Set<AbortController>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p)).catch(() => {});
    return p;
  };

  const relist = async (): Promise<void> => {
    const list = opts.namespace
      ? await core.listNamespacedPod({ namespace: opts.namespace })
      : await core.listPodForAllNamespaces();
    if (stopped) return;
    resourceVersion = list.metadata?.resourceVersion ?? '';
    opts.onList(list.items);
  };

  const restart = (delayMs: number): void => {
    if (stopped) return;
    clearTimeout(restartTimer);
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      void track(connect());
    }, delayMs);
  };

  const connect = async (): Promise<void> => {
    if (stopped) return;
    try {
      if (!resourceVersion) await relist();
    } catch (err) {
      opts.log(`list pods: ${describeError(err)}`);
      restart(RETRY_MS);
      return;
    }
    let ended = false;
    let controller: AbortController | undefined;
    const done = (err: unknown): void => {
      ended = true;
      if (controller) aborts.delete(controller);
      if (stopped) return;
      if (statusCode(err) === 410) resourceVersion = '';
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      if (err && !timedOut) opts.log(`watch pods: ${describeError(err)}`);
      restart(err && !timedOut ? RETRY_MS : 0);
    };
    const onEvent = (type: string, object: unknown): void => {
      if (stopped) return;
      if (type === 'ERROR') {
        // A 410 here means our resourceVersion is too old; the watch ends right after.
        if ((object as { code?: number })?.code === 410) resourceVersion = '';
        return;
      }
      const pod = object as WirePod;
      if (pod.metadata?.resourceVersion) resourceVersion = pod.metadata.resourceVersion;
      if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') opts.onEvent(type, pod);
    };
    controller = await watch.watch(
      path,
      { resourceVersion, allowWatchBookmarks: true, timeoutSeconds: WATCH_TIMEOUT_SECONDS },
      onEvent,
      done,
    );
    if (stopped || ended) controller.abort();
    else aborts.add(controller);
  };

  const resync = async (): Promise<void> => {
    try {
      await relist();
    } catch (err) {
      opts.log(`resync pods: ${describeError(err)}`);
    }
    if (!stopped) resyncTimer = setTimeout(() => void track(resync()), opts.resyncMs);
  };

  await track(connect());
  resyncTimer = setTimeout(() => void track(resync()), opts.resyncMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(restartTimer);
      clearTimeout(resyncTimer);
      for (const controller of aborts) controller.abort();
      aborts.clear();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
