// Watches every Pod and NeoSet of a test namespace and runs the invariant checker (SPEC §7) over
// each state it observes — the same checker the property tests run over decide() — keeping every
// violation, and a timeline of pod states for timing assertions. The two watches are merged in
// resourceVersion order (ordered-merge.ts), so that each state checked is one the cluster was in.
import type { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, LABEL_NEOSET_NAME, PLURAL } from '../../shared/api/names.ts';
import { NeoSet } from '../../shared/api/neoset.ts';
import { checkInvariants } from '../oracle/index.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { resilientWatch, type KubeObject } from '../../shared/k8s/watch.ts';
import { orderedMerge, type Change, type Stream } from './ordered-merge.ts';

/**
 * How long received changes wait on a quiet stream before a list of it is asked whether it has more:
 * what the merged view lags behind the watches at most, plus the list's round trip.
 */
const PROBE_MS = 25;

export interface ObservedViolation {
  at: string;
  neoset: string;
  violation: unknown;
  pods: string[];
  /** The NeoSet state the violation was found in: its resourceVersion and the pods its status names as updating. */
  neosetVersion?: string;
  currentUpdatePods?: string[];
}

export interface Observer {
  ready: Promise<void>;
  /** Every violation seen so far. */
  violations: ObservedViolation[];
  /** States checked. */
  checks: number;
  /**
   * Every pod state observed, in resourceVersion order, with the local time it entered the merged
   * view — the view `until` and `pods` read, so that a time taken after an `until` orders as they do.
   */
  podHistory: { seenAt: number; type: string; pod: Pod }[];
  neoset(name: string): NeoSet | undefined;
  pods(neoset: string): Pod[];
  /** Resolves with the predicate's value once it is truthy on an observed state. */
  until<T>(what: string, predicate: () => T | undefined | false, timeoutMs?: number): Promise<T>;
  stop(): void;
}

export type NeoSetObject = ReturnType<typeof NeoSet.parse>;

export function startObserver(kc: KubeConfig, namespace: string): Observer {
  const neosets = new Map<string, NeoSetObject>();
  const pods = new Map<string, Pod>();
  const previous = new Map<string, { neoset: NeoSetObject; pods: Pod[] }>();
  const waiters = new Set<() => void>();
  const obs: Observer = {
    ready: Promise.resolve(),
    violations: [],
    checks: 0,
    podHistory: [],
    neoset: (name) => neosets.get(name),
    pods: (name) =>
      [...pods.values()]
        .filter((p) => p.metadata.labels?.[LABEL_NEOSET_NAME] === name)
        .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name, undefined, { numeric: true })),
    until(what, predicate, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          let value;
          try {
            value = predicate();
          } catch (err) {
            cleanup();
            reject(err);
            return;
          }
          if (value) {
            cleanup();
            resolve(value);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs);
        const interval = setInterval(check, 250);
        const cleanup = () => {
          clearTimeout(timer);
          clearInterval(interval);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    stop: () => {
      stopped = true;
      clearTimeout(probeTimer);
      for (const w of watches) w.stop();
    },
  };

  const check = (name: string) => {
    const neoset = neosets.get(name);
    if (!neoset) return;
    const current = { neoset, pods: obs.pods(name) };
    obs.checks++;
    for (const violation of checkInvariants({ ...current, previous: previous.get(name) })) {
      obs.violations.push({
        at: new Date().toISOString(),
        neoset: name,
        violation,
        pods: current.pods.map(describePod),
        neosetVersion: neoset.metadata.resourceVersion,
        currentUpdatePods: neoset.status?.currentUpdatePods,
      });
    }
    previous.set(name, current);
  };
  const changed = (name: string | undefined) => {
    if (name) check(name);
    for (const w of [...waiters]) w();
  };

  const apply = ({ stream, type, obj }: Change) => {
    if (stream === 'neosets') {
      if (type === 'DELETED') neosets.delete(obj.metadata.name);
      else {
        const parsed = NeoSet.safeParse({ apiVersion: API_VERSION, kind: 'NeoSet', ...obj });
        if (parsed.success) neosets.set(obj.metadata.name, parsed.data);
      }
      changed(obj.metadata.name);
    } else {
      if (type === 'DELETED') pods.delete(obj.metadata.name);
      else pods.set(obj.metadata.name, obj as unknown as Pod);
      obs.podHistory.push({ seenAt: Date.now(), type, pod: obj as unknown as Pod });
      changed(obj.metadata.labels?.[LABEL_NEOSET_NAME]);
    }
  };
  const merge = orderedMerge(apply);

  // A quiet stream holds received changes back until it shows it has nothing older to deliver.
  const client = createKubeClient(kc);
  const paths: Record<Stream, { path: string; labelSelector?: string }> = {
    neosets: { path: `/apis/${API_VERSION}/namespaces/${namespace}/${PLURAL}` },
    pods: { path: `/api/v1/namespaces/${namespace}/pods`, labelSelector: LABEL_NEOSET_NAME },
  };
  let stopped = false;
  let probeTimer: NodeJS.Timeout | undefined;
  const probeSoon = () => {
    if (stopped || probeTimer !== undefined || merge.holdingBack() === undefined) return;
    probeTimer = setTimeout(async () => {
      const stream = merge.holdingBack();
      try {
        if (stream && !stopped) {
          const { path, labelSelector } = paths[stream];
          const list = await client.request<{ metadata: { resourceVersion: string }; items: KubeObject[] }>('GET', path, { query: { labelSelector } });
          merge.listed(stream, list.metadata.resourceVersion, list.items);
        }
      } catch {
        // The API is away for now (a restart under test): the next probe asks again.
      } finally {
        probeTimer = undefined;
        probeSoon();
      }
    }, PROBE_MS);
  };
  const watch = (stream: Stream) =>
    resilientWatch({
      kubeConfig: kc,
      ...paths[stream],
      initialAdds: true,
      onEvent: (type, obj: KubeObject) => merge.receive({ stream, type, obj }),
      onProgress: (rv) => {
        merge.progress(stream, rv);
        probeSoon();
      },
    });
  const watches = [watch('neosets'), watch('pods')];
  obs.ready = Promise.all(watches.map((w) => w.ready)).then(() => {});
  return obs;
}

/** One line per pod, for violation reports: name, revision, phase, readiness, image. */
export function describePod(p: Pod): string {
  const ready = p.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const gate = p.status?.conditions?.find((c) => c.type === 'InPlaceUpdateReady')?.status;
  return `${p.metadata.name} rev=${p.metadata.labels?.['controller-revision-hash']} ${p.status?.phase} ready=${ready} gate=${gate} image=${p.spec.containers[0]?.image}${p.metadata.deletionTimestamp ? ' terminating' : ''}${p.metadata.annotations?.['neoset.neo.io/inplace-update-state'] ? ' in-place' : ''}`;
}
