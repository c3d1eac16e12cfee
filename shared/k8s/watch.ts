// A watch that does not stop: client-node's Watch can end or stall silently
// (kubernetes-client/javascript#596, #958), so this one lists, watches from the list's
// resourceVersion with a server-side timeout, restarts from the last seen version when the stream
// ends, and relists on 410 Gone (reporting what changed meanwhile). A stalled stream is ended by
// client-node's own 30 s inactivity timeout (a TimeoutError), which is just another restart; the
// server-side timeout is kept below it so that an idle but healthy watch ends cleanly first.
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { createKubeClient } from './client.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string> };
}

export interface ResilientWatchOptions {
  kubeConfig: KubeConfig;
  /** Collection path, e.g. /api/v1/pods or /apis/neo.io/v1alpha1/namespaces/x/neosets. */
  path: string;
  labelSelector?: string;
  /** Report objects that exist at start as ADDED (ApiServerSource does not; the kubelet does). */
  initialAdds?: boolean;
  onEvent: (type: WatchEventType, obj: KubeObject) => void;
  onError?: (err: Error) => void;
  /**
   * Every change up to `resourceVersion` has been delivered: after each watch event, at each
   * bookmark, and after a list's differences. What orders this stream against another one (etcd's
   * revisions are one sequence for every resource of a cluster).
   */
  onProgress?: (resourceVersion: string) => void;
  /** Server-side watch timeout, below client-node's 30 s inactivity abort. Default 25 s. */
  timeoutSeconds?: number;
}

/** An object's identity across its versions: its uid, or namespace/name for an object without one. */
export const objectKey = (o: KubeObject): string => o.metadata.uid ?? `${o.metadata.namespace}/${o.metadata.name}`;

export interface ResilientWatch {
  stop(): void;
  /** Resolves once the initial list is done and the first watch is open. */
  ready: Promise<void>;
}

export function resilientWatch(opts: ResilientWatchOptions): ResilientWatch {
  const client = createKubeClient(opts.kubeConfig);
  const watch = new Watch(opts.kubeConfig);
  const timeoutSeconds = opts.timeoutSeconds ?? 25;
  const known = new Map<string, { rv: string; obj: KubeObject }>(); // uid → last seen, to report a relist's differences
  let resourceVersion = '';
  let stopped = false;
  let abort: AbortController | undefined;
  let retry: NodeJS.Timeout | undefined;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((r) => (markReady = r));

  const emit = (type: WatchEventType, obj: KubeObject) => {
    if (type === 'DELETED') known.delete(objectKey(obj));
    else known.set(objectKey(obj), { rv: obj.metadata.resourceVersion ?? '', obj });
    try {
      opts.onEvent(type, obj);
    } catch (err) {
      opts.onError?.(err as Error);
    }
  };

  async function relist(first: boolean): Promise<void> {
    const list = await client.request<{ metadata: { resourceVersion: string }; items: KubeObject[] }>('GET', opts.path, {
      query: { labelSelector: opts.labelSelector },
    });
    const seen = new Set<string>();
    for (const item of list.items) {
      const key = objectKey(item);
      seen.add(key);
      const before = known.get(key);
      if (first ? opts.initialAdds : !before) emit('ADDED', item);
      else if (before && before.rv !== item.metadata.resourceVersion) emit('MODIFIED', item);
      else known.set(key, { rv: item.metadata.resourceVersion ?? '', obj: item });
    }
    if (!first) for (const [key, { obj }] of [...known]) if (!seen.has(key)) emit('DELETED', obj);
    resourceVersion = list.metadata.resourceVersion;
    progress();
  }

  function progress() {
    try {
      opts.onProgress?.(resourceVersion);
    } catch (err) {
      opts.onError?.(err as Error);
    }
  }

  async function open(): Promise<void> {
    if (stopped) return;
    let gone = false;
    abort = await watch.watch(
      opts.path,
      { labelSelector: opts.labelSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
      (type, obj) => {
        if (type === 'BOOKMARK') {
          resourceVersion = obj.metadata.resourceVersion;
          progress();
        } else if (type === 'ERROR') {
          if (obj?.code === 410) gone = true;
        } else {
          resourceVersion = obj.metadata.resourceVersion;
          emit(type as WatchEventType, obj);
          progress();
        }
      },
      (err) => {
        if (stopped) return;
        if (err && (err as { statusCode?: number }).statusCode === 410) gone = true;
        const quiet = !err || gone || ['AbortError', 'TimeoutError'].includes((err as Error).name);
        if (!quiet) opts.onError?.(err as Error);
        schedule(gone, quiet ? 0 : 500);
      },
    );
  }

  function schedule(needRelist: boolean, delayMs: number) {
    clearTimeout(retry);
    retry = setTimeout(() => {
      (needRelist ? relist(false) : Promise.resolve()).then(open).catch((err) => {
        opts.onError?.(err as Error);
        schedule(true, 1000); // API unreachable for now: relist when it is back
      });
    }, delayMs);
  }

  relist(true)
    .then(open)
    .then(markReady)
    .catch((err) => {
      opts.onError?.(err as Error);
      markReady();
      schedule(true, 1000);
    });

  return {
    ready,
    stop() {
      stopped = true;
      clearTimeout(retry);
      abort?.abort();
    },
  };
}
