// Two watch streams — the NeoSets' and the pods' — are each in order, but nothing orders one against
// the other: the NeoSet watch can deliver a status a decider wrote after reading a pod finish that the
// pod watch has not delivered yet. A state put together from both as they arrive then pairs that
// status with pods older than what its writer read (CI saw it: a claim that looked over budget because
// the observer still had the finished pod mid-update). etcd's revisions are one sequence for every
// resource, so the merge applies changes in resourceVersion order, and only up to the point both
// streams have delivered everything (their frontiers): each state applied is one the cluster was in.
//
// A quiet stream holds the other one back; `holdingBack` names it, and a list of it that shows nothing
// it has not delivered moves its frontier to the list's resourceVersion (observer.ts probes that way).
// A relist after 410 Gone reports its differences with the versions they carry (a deletion its last
// one): the history between is lost, and the merge orders what it has.
import { isComparable } from '../../shared/k8s/resource-version.ts';
import { objectKey as keyOf, type KubeObject, type WatchEventType } from '../../shared/k8s/watch.ts';

export type Stream = 'neosets' | 'pods';
export interface Change {
  stream: Stream;
  type: WatchEventType;
  obj: KubeObject;
}

export interface OrderedMerge {
  /** A change as its stream delivered it; applied once both frontiers have passed it. */
  receive(change: Change): void;
  /** The stream has delivered every change up to `resourceVersion`. */
  progress(stream: Stream, resourceVersion: string): void;
  /** The stream whose frontier keeps received changes waiting, if any. */
  holdingBack(): Stream | undefined;
  /** A list of `stream` at `resourceVersion` with these items: moves its frontier there if the stream has delivered all of it. */
  listed(stream: Stream, resourceVersion: string, items: KubeObject[]): boolean;
}

const rvOf = (s: string | undefined): bigint => (s !== undefined && isComparable(s) ? BigInt(s) : 0n);

export function orderedMerge(apply: (change: Change) => void): OrderedMerge {
  const frontier: Record<Stream, bigint> = { neosets: 0n, pods: 0n };
  const waiting: { change: Change; rv: bigint }[] = [];
  // What each stream has delivered, applied or not: uid → resourceVersion.
  const delivered: Record<Stream, Map<string, string>> = { neosets: new Map(), pods: new Map() };

  const drain = () => {
    const upTo = frontier.neosets < frontier.pods ? frontier.neosets : frontier.pods;
    const ready = waiting.filter((w) => w.rv <= upTo).sort((a, b) => (a.rv < b.rv ? -1 : a.rv > b.rv ? 1 : 0));
    if (ready.length === 0) return;
    const rest = waiting.filter((w) => w.rv > upTo);
    waiting.length = 0;
    waiting.push(...rest);
    for (const w of ready) apply(w.change);
  };

  const progress = (stream: Stream, resourceVersion: string) => {
    const rv = rvOf(resourceVersion);
    if (rv > frontier[stream]) frontier[stream] = rv;
    drain();
  };

  return {
    progress,
    receive(change) {
      const key = keyOf(change.obj);
      if (change.type === 'DELETED') delivered[change.stream].delete(key);
      else delivered[change.stream].set(key, change.obj.metadata.resourceVersion ?? '');
      waiting.push({ change, rv: rvOf(change.obj.metadata.resourceVersion) });
    },
    holdingBack() {
      if (waiting.length === 0) return undefined;
      const oldest = waiting.reduce((m, w) => (w.rv < m ? w.rv : m), waiting[0].rv);
      return (['neosets', 'pods'] as const).find((s) => frontier[s] < oldest);
    },
    listed(stream, resourceVersion, items) {
      const mine = delivered[stream];
      const same = items.length === mine.size && items.every((o) => mine.get(keyOf(o)) === o.metadata.resourceVersion);
      if (same) progress(stream, resourceVersion);
      return same;
    },
  };
}
