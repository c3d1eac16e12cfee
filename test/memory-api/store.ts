// What etcd holds for the memory API: objects by resource, namespace and name, and one global
// resourceVersion counter that every change bumps (a create, an update, a removal). Reading and
// writing here directly is what a kubelet or the garbage collector does: no validation, no
// preconditions, but a real write all the same (a new resourceVersion; nothing when nothing changed).
import { sameJson } from '../../shared/core/json.ts';
import type { ObjectMeta } from '../../shared/core/objects.ts';
import { rfc3339 } from '../../shared/core/time.ts';
import { encode } from './codec.ts';
import { apiVersionOf, RESOURCES, type Resource } from './resources.ts';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

const key = (namespace: string, name: string) => `${namespace}/${name}`;

/** A deep copy of a JSON value: faster than structuredClone for the plain objects the store holds. */
export const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export class Store {
  readonly now: () => number;
  #objects = new Map<Resource, Map<string, KubeObject>>();
  #revision = 0;
  #uids = 0;

  constructor(now: () => number) {
    this.now = now;
  }

  /** The resourceVersion of the last change (a list's metadata.resourceVersion). */
  get resourceVersion(): string {
    return String(this.#revision);
  }

  /** A new uid, UUID-shaped and deterministic so that a failing property test replays. */
  newUid(): string {
    return `00000000-0000-4000-8000-${(++this.#uids).toString(16).padStart(12, '0')}`;
  }

  timestamp(offsetSeconds = 0): string {
    return rfc3339(this.now() + offsetSeconds * 1000);
  }

  #table(resource: Resource): Map<string, KubeObject> {
    let table = this.#objects.get(resource);
    if (!table) this.#objects.set(resource, (table = new Map()));
    return table;
  }

  get<T extends KubeObject = KubeObject>(resource: Resource, namespace: string, name: string): T | undefined {
    const obj = this.#table(resource).get(key(namespace, name));
    return obj && (copy(obj) as T);
  }

  /** Names of a resource's objects in a namespace, without copying them. */
  names(resource: Resource, namespace: string): string[] {
    return [...this.#table(resource).values()].filter((o) => o.metadata.namespace === namespace).map((o) => o.metadata.name);
  }

  /** Objects of a resource, in one namespace or all, in etcd's key order (namespace, then name). */
  list<T extends KubeObject = KubeObject>(resource: Resource, namespace?: string): T[] {
    return [...this.#table(resource).entries()]
      .filter(([, o]) => namespace === undefined || o.metadata.namespace === namespace)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => copy(o) as T);
  }

  /** Every object of every resource, with its resource (the garbage collector's view). */
  *all(): Generator<[Resource, KubeObject]> {
    for (const [resource, table] of this.#objects) for (const obj of table.values()) yield [resource, obj];
  }

  /**
   * Creates or replaces an object and returns it as stored. A new object gets a uid and a
   * creationTimestamp when it has none; a change gets the next resourceVersion; an object equal to
   * the stored one (resourceVersion aside) is left alone, as etcd3's GuaranteedUpdate does.
   */
  put<T extends KubeObject>(resource: Resource, obj: T): T {
    const next = copy(obj) as KubeObject;
    const info = RESOURCES[resource];
    next.apiVersion = apiVersionOf(info);
    next.kind = info.kind;
    const meta = next.metadata;
    meta.namespace ??= 'default';
    encode(resource, next);
    const table = this.#table(resource);
    const old = table.get(key(meta.namespace, meta.name));
    meta.uid ??= old?.metadata.uid ?? this.newUid();
    meta.creationTimestamp ??= old?.metadata.creationTimestamp ?? this.timestamp();
    if (old && sameJson({ ...next, metadata: { ...meta, resourceVersion: undefined } }, { ...old, metadata: { ...old.metadata, resourceVersion: undefined } })) {
      return structuredClone(old) as T;
    }
    meta.resourceVersion = String(++this.#revision);
    table.set(key(meta.namespace, meta.name), next);
    return structuredClone(next) as T;
  }

  /** Changes a stored object in place (a copy of it is passed to `change`); undefined when absent. */
  mutate<T extends KubeObject = KubeObject>(resource: Resource, namespace: string, name: string, change: (obj: T) => void): T | undefined {
    const obj = this.get<T>(resource, namespace, name);
    if (!obj) return undefined;
    change(obj);
    return this.put(resource, obj);
  }

  /** Removes an object for good (a kubelet confirming a pod's termination); false when absent. */
  remove(resource: Resource, namespace: string, name: string): boolean {
    if (!this.#table(resource).delete(key(namespace, name))) return false;
    this.#revision++;
    return true;
  }

  /** An independent deep copy, counters included. */
  fork(now = this.now): Store {
    const copy = new Store(now);
    copy.#objects = structuredClone(this.#objects);
    copy.#revision = this.#revision;
    copy.#uids = this.#uids;
    return copy;
  }
}
