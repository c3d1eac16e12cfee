// An in-memory Kubernetes API with kube-apiserver's resourceVersion semantics, for driving the real
// applier (shared/k8s/apply.ts) and snapshot reader without a cluster. `client` is a KubeClient;
// the store is there for what a kubelet, a user with kubectl, or the garbage collector would do.
import type { KubeClient, RequestOptions } from '../../shared/k8s/client.ts';
import { collectGarbage, type Collected } from './delete.ts';
import { CrashError, StatusError, type StatusFailure, toApiError } from './errors.ts';
import { Faults, type FaultMatch } from './faults.ts';
import { type Admission, serve, type Verb } from './server.ts';
import { Store } from './store.ts';

export { CrashError } from './errors.ts';
export { parseLabelSelector } from './selector.ts';
export type { KubeObject } from './store.ts';
export type { Resource } from './resources.ts';
export type { Collected, FaultMatch, Verb };

export interface MemoryApiOptions {
  /** The clock, in milliseconds (creationTimestamp, deletionTimestamp, quota grace). */
  now?: () => number;
  /**
   * Awaited before each request is evaluated; the request is then evaluated atomically. A test
   * holding these (fast-check's scheduler) decides in which order concurrent requests land.
   */
  beforeRequest?: (verb: Verb, path: string) => Promise<void>;
}

export type RequestCounts = Record<Verb, number>;

export interface MemoryApi {
  client: KubeClient;
  /** Direct access, bypassing the API: still a real write (resourceVersion bumped when something changed). */
  store: Store;
  /** Requests evaluated, by verb (a crashed process's requests never arrive, so do not count). */
  readonly requests: Readonly<RequestCounts>;
  resetRequests(): void;
  /** An independent copy of the stored objects and counters (no faults, no hook unless given). */
  fork(opts?: MemoryApiOptions): MemoryApi;
  collectGarbage(): Collected[];
  failNext(match: FaultMatch, error: StatusFailure, times?: number): void;
  /** A ResourceQuota limiting every namespace to n live pods; null removes it. */
  setPodQuota(n: number | null, name?: string): void;
  /** The allocatable cpu/memory of the node pods run on, checked on pods/resize (PodResizeValidator); null: none. */
  setNodeAllocatable(allocatable: { cpu: string; memory: string } | null): void;
  /** After n more successful writes every request rejects with CrashError; null undoes it. */
  crashAfterWrites(n: number | null): void;
}

const VERBS: Verb[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const zero = (): RequestCounts => Object.fromEntries(VERBS.map((v) => [v, 0])) as RequestCounts;
/** What travels on the wire: JSON, so no caller and no test shares an object with the store. */
const wire = <T>(value: T): T => (value === undefined ? value : JSON.parse(JSON.stringify(value)));

export function createMemoryApi(opts: MemoryApiOptions = {}): MemoryApi {
  return build(new Store(opts.now ?? Date.now), { podQuota: null }, opts);
}

function build(store: Store, admission: Admission, opts: MemoryApiOptions): MemoryApi {
  const faults = new Faults();
  let requests = zero();

  const client: KubeClient = {
    async request<T>(verb: Verb, path: string, options: RequestOptions = {}): Promise<T> {
      const body = wire(options.body);
      await opts.beforeRequest?.(verb, path);
      const pathname = path.split('?')[0];
      if (faults.crashed) throw new CrashError(verb, path);
      requests[verb]++;
      // Every answer carries kube-apiserver's `Date`: the store's clock, truncated to the second (the
      // one clock deciders read, SPEC §2.3). A crashed process gets no answer, so no Date.
      options.date?.(new Date(store.now()).toUTCString());
      const injected = faults.take(verb, pathname);
      if (injected) throw toApiError(verb, pathname, injected);
      let result: unknown;
      try {
        result = serve(store, admission, { verb, path, body, patch: options.patch, query: options.query });
      } catch (err) {
        if (err instanceof StatusError) throw toApiError(verb, pathname, err.failure);
        throw err;
      }
      if (verb !== 'GET') faults.wrote();
      return wire(result) as T;
    },
  };

  return {
    client,
    store,
    get requests() {
      return { ...requests };
    },
    resetRequests: () => {
      requests = zero();
    },
    fork: (forkOpts = {}) => build(store.fork(forkOpts.now ?? store.now), structuredClone(admission), { now: store.now, ...forkOpts }),
    collectGarbage: () => collectGarbage(store),
    failNext: (match, error, times = 1) => faults.failNext(match, error, times),
    setPodQuota: (n, name = 'pod-quota') => {
      admission.podQuota = n === null ? null : { name, limit: n };
    },
    setNodeAllocatable: (allocatable) => {
      admission.nodeAllocatable = allocatable;
    },
    crashAfterWrites: (n) => faults.crashAfterWrites(n),
  };
}
