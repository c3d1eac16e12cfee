// An in-memory cluster for driving the core: the real snapshot reader and the real applier
// (shared/k8s) against the in-memory API (test/memory-api: kube-apiserver's resourceVersion
// semantics, so every write is conditional exactly as on a cluster), a simulated kubelet (pods
// start, become ready, restart containers on an image patch, crashloop on a bad image, fail), the
// garbage collector, user edits, and a clock. One applier: what runs here is what runs in the functions.
import { ANNOTATION_INPLACE_STATE, LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import { NeoSet, type NeoSetSpecInput } from '../../shared/api/neoset.ts';
import { decide, type Duties } from '../../shared/core/decide.ts';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../../shared/core/objects.ts';
import type { Action, Plan } from '../../shared/core/plan.ts';
import type { Snapshot } from '../../shared/core/snapshot.ts';
import { rfc3339 } from '../../shared/core/time.ts';
import { applyPlan } from '../../shared/k8s/apply.ts';
import type { LifecycleEvent } from '../../shared/events/lifecycle-sink.ts';
import type { Notification } from '../../shared/api/notification.ts';
import { ApiError } from '../../shared/k8s/client.ts';
import { readSnapshot } from '../../shared/k8s/snapshot-reader.ts';
import { createMemoryApi, CrashError, type KubeObject, type MemoryApi, type MemoryApiOptions, type Resource } from '../memory-api/index.ts';
import type { Observation } from '../oracle/index.ts';
import { failPod, makeUnready, syncPod, type ResizeVerdict } from './kubelet.ts';

export { BAD_IMAGE_MARK } from './kubelet.ts';

type NeoSetT = ReturnType<typeof NeoSet.parse>;

export const T0 = Date.parse('2025-01-01T00:00:00Z');
export const NAMESPACE = 'default';
const NODE = 'node-1';

export type WorldObservation = Snapshot & Observation & { at: number };

export interface ReconcileResult {
  plan: Plan;
  /** Kinds of the writes that went through, in order (the claim and status writes included). */
  written: string[];
  conflict: boolean;
  statusWritten: boolean;
}

export interface ReconcileOptions {
  /** The process dies after this many writes (Events included): nothing after them lands. */
  crashAfter?: number;
  /** Decide from this snapshot (taken earlier) instead of reading the cluster now. */
  snapshot?: Snapshot;
  duties?: Duties;
}

/** Live objects a test may change in place, written back to the store before anything else happens. */
interface Cache {
  neoset: NeoSetT;
  pods: Map<string, Pod>;
  revisions: Map<string, ControllerRevision>;
  pvcs: Map<string, PersistentVolumeClaim>;
}

const RESOURCES = { pods: 'pods', revisions: 'controllerrevisions', pvcs: 'persistentvolumeclaims' } as const;

export class World {
  now = T0;
  readonly api: MemoryApi;
  readonly name: string;
  #id = 1;
  #cache: Cache | null = null;
  /** The objects of the cache as loaded (JSON), to write back only what a test changed. */
  #loaded = new Map<string, string>();

  constructor(spec: Partial<NeoSetSpecInput> & { image?: string }, name = 'web', api?: MemoryApi) {
    this.name = name;
    this.api = api ?? createMemoryApi({ now: () => this.now });
    if (api) return;
    const { image = 'nginx:v1', ...rest } = spec;
    const neoset = NeoSet.parse({
      apiVersion: 'neo.io/v1alpha1',
      kind: 'NeoSet',
      metadata: { name, namespace: NAMESPACE, uid: 'neoset-uid', generation: 1 },
      spec: {
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'app', image, readinessProbe: { httpGet: { path: '/', port: 80 } } }] },
        },
        ...rest,
      },
    });
    this.api.store.put('neosets', neoset as unknown as KubeObject);
  }

  /** An independent copy of the whole world (to try alternative futures). */
  fork(opts: MemoryApiOptions = {}): World {
    this.#flush();
    const w: World = new World({}, this.name, this.api.fork({ now: () => w.now, ...opts }));
    w.now = this.now;
    w.#id = this.#id;
    return w;
  }

  nextId(): string {
    return String(this.#id++);
  }

  /** The rollout notifications the applier sent (§4.12), in order. */
  notifications: Notification[] = [];

  /** The lifecycle CloudEvents the applier sent (§4.10), in order. */
  lifecycleEvents: LifecycleEvent[] = [];

  /** The kubelet's verdict on a pending resize (§4.9); default: it fits. */
  resizeVerdict?: (pod: Pod) => ResizeVerdict;

  // ---- observation -------------------------------------------------------------------------

  // A test changes the cluster as etcd would let it: `w.pod(0)!.metadata.labels![k] = v`,
  // `w.pods.delete(name)`, `w.neoset.status = ...` change live objects that are written to the store
  // (a new resourceVersion each, as any write) before the next step of the world.

  get neoset(): NeoSetT {
    return this.#view().neoset;
  }

  set neoset(value: NeoSetT) {
    this.#view().neoset = value;
  }

  get pods(): Map<string, Pod> {
    return this.#view().pods;
  }

  get revisions(): Map<string, ControllerRevision> {
    return this.#view().revisions;
  }

  get pvcs(): Map<string, PersistentVolumeClaim> {
    return this.#view().pvcs;
  }

  #view(): Cache {
    if (this.#cache) return this.#cache;
    this.#cache = this.#read();
    this.#loaded = new Map([...this.#entries(this.#cache)].map(([k, o]) => [k, JSON.stringify(o)]));
    return this.#cache;
  }

  /** Copies of what the store holds now. The namespace is the world's: everything in it is the scene. */
  #read(): Cache {
    const { store } = this.api;
    const all = <T extends KubeObject>(resource: Resource) => new Map(store.list<T>(resource, NAMESPACE).map((o) => [o.metadata.name, o]));
    return {
      neoset: store.get<KubeObject>('neosets', NAMESPACE, this.name) as unknown as NeoSetT,
      pods: all<Pod & KubeObject>('pods'),
      revisions: all<ControllerRevision & KubeObject>('controllerrevisions'),
      pvcs: all<PersistentVolumeClaim & KubeObject>('persistentvolumeclaims'),
    };
  }

  *#entries(cache: Cache): Generator<[string, KubeObject]> {
    yield ['neosets/', cache.neoset as unknown as KubeObject];
    for (const [key, resource] of Object.entries(RESOURCES) as [keyof typeof RESOURCES, Resource][]) {
      for (const [name, obj] of cache[key] as Map<string, KubeObject>) yield [`${resource}/${name}`, obj];
    }
  }

  /** Writes what a test changed in place back to the store; the next read loads afresh. */
  #flush(): void {
    const cache = this.#cache;
    const loaded = this.#loaded;
    if (!cache) return;
    this.#cache = null;
    const { store } = this.api;
    const live = new Map(this.#entries(cache));
    for (const key of loaded.keys()) {
      if (live.has(key)) continue;
      const [resource, name] = key.split('/') as [Resource, string];
      store.remove(resource, NAMESPACE, name);
    }
    for (const [key, obj] of live) {
      if (loaded.get(key) === JSON.stringify(obj)) continue; // untouched
      const resource = key.split('/')[0] as Resource;
      store.put(resource, { ...obj, metadata: { namespace: NAMESPACE, ...obj.metadata } });
    }
  }

  /** What the snapshot reader reads, read synchronously: the state as it is now. */
  snapshot(): Snapshot {
    this.#flush();
    const { neoset, pods, revisions, pvcs } = this.#read(); // copies, taken now
    const parsed = NeoSet.parse(neoset);
    return {
      neoset: parsed,
      pods: [...pods.values()],
      revisions: [...revisions.values()],
      pvcs: parsed.spec.volumeClaimTemplates.length > 0 ? [...pvcs.values()] : [],
    };
  }

  /** The state as the invariant checker takes it; also a snapshot decide() can read. */
  observation(): WorldObservation {
    this.#flush();
    const { neoset, pods, revisions, pvcs } = this.#read();
    return { neoset: NeoSet.parse(neoset), pods: [...pods.values()], revisions: [...revisions.values()], pvcs: [...pvcs.values()], at: this.now };
  }

  pod(ordinal: number): Pod | undefined {
    return this.pods.get(`${this.name}-${ordinal}`);
  }

  revisionOf(ordinal: number): string | undefined {
    return this.pod(ordinal)?.metadata.labels?.[LABEL_REVISION_HASH];
  }

  imageOf(ordinal: number): string | undefined {
    return this.pod(ordinal)?.spec.containers[0].image;
  }

  /** Reasons of the Events recorded on the NeoSet, in the order they were recorded. */
  eventReasons(): string[] {
    this.#flush();
    return this.api.store
      .list<KubeObject & { reason: string; metadata: { creationTimestamp?: string } }>('events', NAMESPACE)
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
      .map((e) => e.reason);
  }

  // ---- the reconcile function --------------------------------------------------------------

  /** decide() then the real applyPlan: it stops at the first conflict, or when the process "dies". */
  async reconcile(opts: ReconcileOptions = {}): Promise<ReconcileResult> {
    this.#flush();
    const snapshot = opts.snapshot ?? (await readSnapshot(this.api.client, NAMESPACE, this.name));
    if (!snapshot) throw new Error(`NeoSet ${this.name} is gone`);
    const plan = decide(snapshot, new Date(this.now), opts.duties);
    if (opts.crashAfter !== undefined) this.api.crashAfterWrites(opts.crashAfter);
    try {
      const r = await applyPlan(this.api.client, snapshot, plan, { now: () => new Date(this.now), sink: async (e) => void this.lifecycleEvents.push(e), notify: async (ns) => void this.notifications.push(...ns) });
      return { plan, written: r.written, conflict: r.outcome === 'conflict', statusWritten: r.statusWritten };
    } catch (err) {
      if (err instanceof CrashError) return { plan, written: [], conflict: false, statusWritten: false };
      throw err;
    } finally {
      this.api.crashAfterWrites(null);
    }
  }

  // ---- the kubelet -------------------------------------------------------------------------

  /** One kubelet sync of one pod (binding it first); a terminating pod is removed (and the garbage collector runs). */
  kubeletSync(name: string): void {
    this.#flush();
    const pod = this.api.store.get<Pod & KubeObject>('pods', NAMESPACE, name);
    if (!pod) return;
    if (pod.metadata.deletionTimestamp) {
      this.api.store.remove('pods', NAMESPACE, name);
      this.api.collectGarbage();
      return;
    }
    pod.spec.nodeName ??= NODE;
    syncPod(pod, this);
    this.api.store.put('pods', pod);
  }

  /** Every pod synced `rounds` times: a healthy kubelet catching up (and a prompt hook owner, if set). */
  kubeletSettle(rounds = 4): void {
    this.#flush();
    for (let i = 0; i < rounds; i++) for (const name of this.api.store.names('pods', NAMESPACE)) this.kubeletSync(name);
    if (this.promptHookOwner) for (const name of this.api.store.names('pods', NAMESPACE)) this.hookOwner(name);
  }

  /** §4.10: a hook owner that answers at every kubelet round (see hookOwner). */
  promptHookOwner = false;

  /**
   * §4.10: what a hook owner does for one pod, once: lets a PreparingUpdate pod go (removes the handler
   * labels), and guards every other pod (puts them on) — the re-join of an Updated pod included.
   */
  hookOwner(name: string): void {
    const hooks = this.neoset.spec.lifecycle;
    const handler = hooks?.preUpdate?.labelsHandler ?? hooks?.postUpdate?.labelsHandler;
    if (!handler) return;
    const current = this.api.store.get<Pod & KubeObject>('pods', NAMESPACE, name);
    const go = current?.metadata.labels?.['neoset.neo.io/lifecycle-state'] === 'PreparingUpdate';
    if (!current || Object.entries(handler).every(([k, v]) => (current.metadata.labels?.[k] === v) !== go)) return; // nothing to do
    this.#podChange(name, (pod) => {
      const labels = (pod.metadata.labels ??= {});
      const go = labels['neoset.neo.io/lifecycle-state'] === 'PreparingUpdate';
      for (const [k, v] of Object.entries(handler)) {
        if (go) delete labels[k];
        else labels[k] = v;
      }
    });
  }

  /** A container stops being ready (a failing probe) until the kubelet's next sync. */
  kubeletUnready(name: string): void {
    this.#podChange(name, (pod) => void makeUnready(pod, this));
  }

  /** The pod fails for good (evicted): phase Failed. */
  kubeletFail(name: string): void {
    this.#podChange(name, (pod) => failPod(pod, this));
  }

  /** Anyone else's write to a pod (a user with kubectl, another controller). */
  changePod(name: string, change: (pod: Pod) => void): void {
    this.#podChange(name, change);
  }

  #podChange(name: string, change: (pod: Pod) => void): void {
    this.#flush();
    const pod = this.api.store.get<Pod & KubeObject>('pods', NAMESPACE, name);
    if (!pod || pod.metadata.deletionTimestamp) return;
    change(pod);
    this.api.store.put('pods', pod);
  }

  // ---- the user (and anyone else writing) ---------------------------------------------------

  /** A change of the NeoSet's spec: a new generation. */
  edit(change: (spec: NeoSetT['spec']) => void): void {
    this.mutateNeoSet((n) => {
      change(n.spec);
      n.metadata.generation = (n.metadata.generation ?? 0) + 1;
    });
  }

  mutateNeoSet(change: (neoset: NeoSetT) => void): void {
    this.#flush();
    this.api.store.mutate<KubeObject>('neosets', NAMESPACE, this.name, (n) => change(n as unknown as NeoSetT));
  }

  setImage(image: string): void {
    this.edit((s) => {
      s.template.spec.containers[0].image = image;
    });
  }

  /** `kubectl neoset rollout undo --to-revision=N`: revision N's template back into spec.template. */
  rollbackTo(number: number): boolean {
    const r = [...this.revisions.values()].find((x) => x.revision === number);
    if (!r) return false;
    this.edit((s) => {
      s.template = structuredClone(r.data.spec.template) as NeoSetT['spec']['template'];
    });
    return true;
  }

  /** kubectl delete pod: graceful once bound (the kubelet confirms it), at once otherwise. */
  userDelete(name: string): void {
    this.#flush();
    const pod = this.api.store.get<Pod & KubeObject>('pods', NAMESPACE, name);
    if (!pod || pod.metadata.deletionTimestamp) return;
    if (!pod.spec.nodeName) {
      this.api.store.remove('pods', NAMESPACE, name);
      this.api.collectGarbage();
      return;
    }
    pod.metadata.deletionTimestamp = rfc3339(this.now);
    this.api.store.put('pods', pod);
  }

  advance(seconds: number): void {
    this.now += seconds * 1000;
  }

  /**
   * Reconcile, then let a healthy kubelet catch up, until a decision has nothing to do (advancing the
   * clock to each requeueAfter). `check` sees every state change: after each reconcile and each
   * kubelet round, with the state before it. Returns the number of rounds, or -1 if `max` was not
   * enough. A conflict throws: nothing else writes, so it could only come from the plan itself.
   */
  async settle(max = 200, check?: (previous: WorldObservation, current: WorldObservation) => void): Promise<number> {
    let previous = this.observation();
    const observe = () => {
      if (!check) return (previous = this.observation());
      const current = this.observation();
      check(previous, current);
      previous = current;
    };
    for (let round = 0; round < max; round++) {
      const r = await this.reconcile();
      if (r.conflict) throw new Error(`the plan conflicts with itself: ${r.plan.actions.map((a) => a.kind).join(', ')}`);
      observe();
      const kubelet = JSON.stringify(previous.pods.map((p) => p.status));
      this.kubeletSettle(1);
      observe();
      const kubeletQuiet = kubelet === JSON.stringify(previous.pods.map((p) => p.status));
      // Events alone (recorded once per key) are no progress: time still has to pass (a canary's timed pause).
      if (r.plan.actions.every((a) => a.kind === 'recordEvent') && !r.statusWritten) {
        if (r.plan.requeueAfter !== null) {
          this.advance(r.plan.requeueAfter);
          previous = { ...previous, at: this.now };
        } else if (kubeletQuiet) return round;
      }
    }
    return -1;
  }

  /** Reconcile and let a healthy kubelet catch up, `n` times, advancing the clock as asked. */
  async run(n: number, secondsPerRound = 1): Promise<void> {
    for (let i = 0; i < n; i++) {
      await this.reconcile();
      this.kubeletSettle(1);
      this.advance(secondsPerRound);
    }
  }
}

/** The state annotation of a pod, parsed (null when none). */
export const stateOf = (pod: Pod | undefined) => {
  const raw = pod?.metadata.annotations?.[ANNOTATION_INPLACE_STATE];
  return raw ? (JSON.parse(raw) as Extract<Action, { kind: 'markDraining' }>['state']) : null;
};

export { ApiError };
