// What the dashboard knows of the cluster: the NeoSets in its scope (a namespace, or all), their
// pods, ControllerRevisions and recent Events — kept current by one resilient watch per resource
// (it resumes after a dropped watch and relists on 410 Gone, shared/k8s/watch.ts). Every change is
// announced to the listeners (the page streams), which read the maps again.
import type { KubeConfig } from '@kubernetes/client-node';
import { LABEL_NEOSET_NAME } from '../../../shared/api/names.ts';
import { paths } from '../../../shared/k8s/paths.ts';
import { resilientWatch, type KubeObject, type ResilientWatch } from '../../../shared/k8s/watch.ts';
import type { EventObject, NeoSetObject, PodObject, RevisionObject } from './wire.ts';

/** Events kept, newest first: enough for "recent Events" of every NeoSet on a busy namespace. */
const MAX_EVENTS = 1000;

export interface Store {
  /** Resolves once every resource has been listed and is watched. */
  ready: Promise<void>;
  neosets(): NeoSetObject[];
  pods(): PodObject[];
  revisions(): RevisionObject[];
  events(): EventObject[];
  /** The last error of each watch that has not delivered since ("pods: 403 Forbidden ..."). */
  problems(): string[];
  /** Calls `listener` after every change; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
  stop(): void;
}

export function startStore(kubeConfig: KubeConfig, namespace: string | undefined): Store {
  const listeners = new Set<() => void>();
  const problems = new Map<string, string>();
  const changed = () => listeners.forEach((l) => l());

  const collection = <T>(what: string, path: string, labelSelector?: string, keep: (o: T) => boolean = () => true) => {
    const items = new Map<string, T>();
    const watch = resilientWatch({
      kubeConfig,
      path,
      labelSelector,
      initialAdds: true,
      onEvent: (type, obj: KubeObject) => {
        problems.delete(what);
        const key = obj.metadata.uid ?? `${obj.metadata.namespace}/${obj.metadata.name}`;
        if (type === 'DELETED') items.delete(key);
        else if (keep(obj as T)) items.set(key, obj as T);
        changed();
      },
      onError: (err) => {
        problems.set(what, `${what}: ${err.message}`);
        changed();
      },
    });
    return { items, watch };
  };

  const neosets = collection<NeoSetObject>('neosets', paths.neosets(namespace));
  // Only pods and revisions that carry a NeoSet's name label: the dashboard has no use for others.
  const pods = collection<PodObject>('pods', paths.pods(namespace), LABEL_NEOSET_NAME);
  const revisions = collection<RevisionObject>('controllerrevisions', paths.revisions(namespace), LABEL_NEOSET_NAME);
  // Events cannot be selected by label; keep those about NeoSets and pods, the newest MAX_EVENTS.
  const events = collection<EventObject>('events', paths.events(namespace), undefined, (e) => ['NeoSet', 'Pod'].includes(e.involvedObject?.kind ?? ''));
  const watches: ResilientWatch[] = [neosets.watch, pods.watch, revisions.watch, events.watch];

  const sortedEvents = () => [...events.items.values()].sort((a, b) => eventTime(b).localeCompare(eventTime(a)));
  listeners.add(() => {
    if (events.items.size <= MAX_EVENTS) return;
    const keys = new Set(sortedEvents().slice(MAX_EVENTS).map((e) => e.metadata.uid));
    for (const [key, e] of events.items) if (keys.has(e.metadata.uid)) events.items.delete(key);
  });

  return {
    ready: Promise.all(watches.map((w) => w.ready)).then(() => {}),
    neosets: () => [...neosets.items.values()],
    pods: () => [...pods.items.values()],
    revisions: () => [...revisions.items.values()],
    events: sortedEvents,
    problems: () => [...problems.values()],
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop() {
      watches.forEach((w) => w.stop());
      listeners.clear();
    },
  };
}

/** When an Event last happened: core/v1 Events set lastTimestamp, events.k8s.io ones eventTime. */
export const eventTime = (e: EventObject) => e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp ?? '';
