// Watches every Pod and NeoSet of a test namespace and runs the invariant checker (SPEC §7) over
// each state it observes — the same checker the property tests run over decide() — keeping every
// violation, and a timeline of pod states for timing assertions.
import type { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, LABEL_NEOSET_NAME, PLURAL } from '../../shared/api/names.ts';
import { NeoSet } from '../../shared/api/neoset.ts';
import { checkInvariants } from '../oracle/index.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { resilientWatch, type KubeObject } from '../../shared/k8s/watch.ts';

export interface ObservedViolation {
  at: string;
  neoset: string;
  violation: unknown;
  pods: string[];
}

export interface Observer {
  ready: Promise<void>;
  /** Every violation seen so far. */
  violations: ObservedViolation[];
  /** States checked. */
  checks: number;
  /** Every pod state observed, in order, with the local time it was seen. */
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
      for (const w of watches) w.stop();
    },
  };

  const check = (name: string) => {
    const neoset = neosets.get(name);
    if (!neoset) return;
    const current = { neoset, pods: obs.pods(name) };
    obs.checks++;
    for (const violation of checkInvariants({ ...current, previous: previous.get(name) })) {
      obs.violations.push({ at: new Date().toISOString(), neoset: name, violation, pods: current.pods.map(describePod) });
    }
    previous.set(name, current);
  };
  const changed = (name: string | undefined) => {
    if (name) check(name);
    for (const w of [...waiters]) w();
  };

  const watches = [
    resilientWatch({
      kubeConfig: kc,
      path: `/apis/${API_VERSION}/namespaces/${namespace}/${PLURAL}`,
      initialAdds: true,
      onEvent: (type, obj: KubeObject) => {
        if (type === 'DELETED') neosets.delete(obj.metadata.name);
        else {
          const parsed = NeoSet.safeParse({ apiVersion: API_VERSION, kind: 'NeoSet', ...obj });
          if (parsed.success) neosets.set(obj.metadata.name, parsed.data);
        }
        changed(obj.metadata.name);
      },
    }),
    resilientWatch({
      kubeConfig: kc,
      path: `/api/v1/namespaces/${namespace}/pods`,
      labelSelector: LABEL_NEOSET_NAME,
      initialAdds: true,
      onEvent: (type, obj: KubeObject) => {
        if (type === 'DELETED') pods.delete(obj.metadata.name);
        else pods.set(obj.metadata.name, obj as unknown as Pod);
        obs.podHistory.push({ seenAt: Date.now(), type, pod: obj as unknown as Pod });
        changed(obj.metadata.labels?.[LABEL_NEOSET_NAME]);
      },
    }),
  ];
  obs.ready = Promise.all(watches.map((w) => w.ready)).then(() => {});
  return obs;
}

/** One line per pod, for violation reports: name, revision, phase, readiness, image. */
export function describePod(p: Pod): string {
  const ready = p.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const gate = p.status?.conditions?.find((c) => c.type === 'InPlaceUpdateReady')?.status;
  return `${p.metadata.name} rev=${p.metadata.labels?.['controller-revision-hash']} ${p.status?.phase} ready=${ready} gate=${gate} image=${p.spec.containers[0]?.image}${p.metadata.deletionTimestamp ? ' terminating' : ''}${p.metadata.annotations?.['neoset.neo.io/inplace-update-state'] ? ' in-place' : ''}`;
}
