// One fleet rollout (issue 24 point 4): M sets of P pods each — NeoSets or StatefulSets of the same
// template (bench/lib/workloads.ts), each in a namespace of its own as a fleet's apps are — created
// and settled, then every set's image patched at the same moment (the everyday "new base image
// everywhere"), timed until each set is done, with the CPU (/proc) and API requests (the API
// server's own counts) the whole fleet cost.
import { loadavg } from 'node:os';
import { API_VERSION, PLURAL } from '../../shared/api/names.ts';
import { epochMs } from '../../shared/k8s/run-timing.ts';
import { resilientWatch } from '../../shared/k8s/watch.ts';
import { allRequests, NEOSET_FUNCTIONS, requestsOf, scrape, STATEFULSET_CONTROLLER, type Requests } from './api-metrics.ts';
import { cpuDelta, sampleCpu } from './cpu.ts';
import { countedDelta, selfCounted } from './rollout-stack.ts';
import type { FleetStack } from './fleet-stack.ts';
import { stepLatency, watchRollout, type RolloutWatch, type Writer } from './rollout-watch.ts';
import { quantile } from './stats.ts';
import { APP_IMAGE, imagePatch, neoset, neosetPath, statefulSet, statefulSetPath } from './workloads.ts';

export interface FleetConfig {
  /** Sets, pods per set, maxUnavailable. */
  m: number;
  p: number;
  k: number;
}

export interface FleetResult extends FleetConfig {
  side: Writer;
  /** First patch sent → the last set done. */
  wallMs: number;
  /** Each set: its own patch sent → done (every pod Ready on the new image and the object's status says so). */
  setMs: number[];
  /** A pod Ready on the new image → the next pod's update written, pooled over the sets. */
  step: { p50: number; p90: number; count: number };
  /** CPU ms per pod updated, by party. */
  cpu: Map<string, number>;
  own: Requests;
  all: Requests;
  /** 1-minute load average as the rollout began. */
  load: number;
}

const APP = 'app';
const SETTLE_TIMEOUT_MS = 900_000;
const POLL_MS = 1000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Like workloads.ts's `until`, but polling once a second: the checks here list a whole fleet. */
async function poll(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

interface Kind {
  writer: Writer;
  /** Cluster-wide collection path. */
  all: string;
  path: (ns: string, name?: string) => string;
  manifest: (c: FleetConfig) => Record<string, unknown>;
  settled: (o: any, p: number) => boolean;
  completed: (o: any, p: number, gen: number) => boolean;
  own: typeof NEOSET_FUNCTIONS;
}

// The same "settled" and "rolled out" as bench/rollout.ts's workloads.
const KINDS: Record<Writer, Kind> = {
  neoset: {
    writer: 'neoset',
    all: `/apis/${API_VERSION}/${PLURAL}`,
    path: neosetPath,
    manifest: (c) => neoset(APP, c.p, c.k, APP_IMAGE(0)),
    settled: (o, p) => o.status?.observedGeneration === o.metadata.generation && o.status?.readyReplicas === p,
    completed: (o, p, gen) => (o.status?.observedGeneration ?? 0) >= gen && o.status?.phase === 'Completed' && o.status?.updatedReadyReplicas === p,
    own: NEOSET_FUNCTIONS,
  },
  statefulset: {
    writer: 'statefulset',
    all: '/apis/apps/v1/statefulsets',
    path: statefulSetPath,
    manifest: (c) => statefulSet(APP, c.p, c.k, APP_IMAGE(0)),
    settled: (o, p) => o.status?.observedGeneration === o.metadata.generation && o.status?.readyReplicas === p,
    completed: (o, p, gen) =>
      (o.status?.observedGeneration ?? 0) >= gen && o.status?.updatedReplicas === p && o.status?.readyReplicas === p && o.status?.currentRevision === o.status?.updateRevision,
    own: STATEFULSET_CONTROLLER,
  },
};

interface Listed {
  items: any[];
}

const isReady = (pod: any) => !pod.metadata.deletionTimestamp && pod.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');

async function createNamespaces({ admin }: FleetStack, names: string[], label: string): Promise<void> {
  await Promise.all(names.map((name) => admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'neoset-bench-fleet': label } } } })));
  const wanted = new Set(names);
  // Pods need each namespace's default ServiceAccount (ServiceAccount admission): one list for all.
  await poll(`the default ServiceAccounts of ${names.length} namespaces`, 120_000, async () => {
    const sas = await admin.request<Listed>('GET', '/api/v1/serviceaccounts', { query: { fieldSelector: 'metadata.name=default' } });
    return sas.items.filter((sa) => wanted.has(sa.metadata.namespace)).length === names.length;
  });
}

async function deleteNamespaces({ admin }: FleetStack, names: string[], label: string): Promise<void> {
  await Promise.all(names.map((name) => admin.request('DELETE', `/api/v1/namespaces/${name}`).catch(() => {})));
  await poll(`${names.length} namespaces to go`, 600_000, async () => {
    const left = await admin.request<Listed>('GET', '/api/v1/namespaces', { query: { labelSelector: `neoset-bench-fleet=${label}` } });
    return left.items.length === 0;
  });
}

/** When each set's object first looked rolled out to its generation, from one cluster-wide watch. */
function watchCompletions(s: FleetStack, kind: Kind, p: number, generations: Map<string, number>) {
  const done = new Map<string, (t: number) => void>();
  const doneAt = new Map<string, Promise<number>>();
  for (const ns of generations.keys()) doneAt.set(ns, new Promise<number>((resolve) => done.set(ns, resolve)));
  const w = resilientWatch({
    kubeConfig: s.stack.cluster.kubeConfig(),
    path: kind.all,
    onEvent: (type, obj: any) => {
      const ns = obj.metadata.namespace;
      const gen = generations.get(ns);
      if (type === 'DELETED' || gen === undefined || obj.metadata.name !== APP || !kind.completed(obj, p, gen)) return;
      done.get(ns)?.(epochMs());
      done.delete(ns);
    },
  });
  return { ready: w.ready, doneAt: (ns: string) => doneAt.get(ns)!, stop: () => w.stop() };
}

let fleets = 0;

export async function fleetRollout(s: FleetStack, side: Writer, config: FleetConfig, say: (line: string) => void): Promise<FleetResult> {
  const { m, p, k } = config;
  const kind = KINDS[side];
  const label = `${++fleets}-${side}`;
  const namespaces = Array.from({ length: m }, (_, i) => `fleet-${fleets}-${side === 'neoset' ? 'neo' : 'sts'}-${i}`);
  const inFleet = new Set(namespaces);
  await createNamespaces(s, namespaces, label);
  const watches: RolloutWatch[] = [];
  let completions: ReturnType<typeof watchCompletions> | undefined;
  try {
    const generations = new Map<string, number>();
    await Promise.all(
      namespaces.map(async (ns) => {
        const created = await s.admin.request<{ metadata: { generation: number } }>('POST', kind.path(ns), { body: kind.manifest(config) });
        generations.set(ns, created.metadata.generation + 1);
      }),
    );
    const settleStart = Date.now();
    await poll(`${m} ${side}s of ${p} pods settled`, SETTLE_TIMEOUT_MS, async () => {
      const objects = await s.admin.request<Listed>('GET', kind.all);
      if (objects.items.filter((o) => inFleet.has(o.metadata.namespace) && kind.settled(o, p)).length !== m) return false;
      const pods = await s.admin.request<Listed>('GET', '/api/v1/pods', { query: { labelSelector: `app=${APP}` } });
      return pods.items.filter((pod) => inFleet.has(pod.metadata.namespace) && isReady(pod)).length === m * p;
    });
    say(`${side} fleet ${m} × ${p}: created and settled in ${((Date.now() - settleStart) / 1000).toFixed(1)} s`);
    for (const ns of namespaces) watches.push(watchRollout(s.stack.cluster.kubeConfig(), ns, side));
    completions = watchCompletions(s, kind, p, generations);
    await Promise.all([...watches.map((w) => w.ready), completions.ready]);
    await s.stack.pump.idle();
    const load = loadavg()[0];
    const before = await scrape(s.stack.cluster.kubeConfig());
    const functionURLs = { reconcile: s.stack.functions.reconcile.url, readiness: s.stack.functions.readiness.url };
    const breakdown = process.env.BENCH_BREAKDOWN && side === 'neoset';
    const selfBefore = breakdown ? await selfCounted(functionURLs) : undefined;
    const cpuBefore = sampleCpu(s.cpu);
    for (const w of watches) w.begin(APP_IMAGE(1));
    const started = epochMs();
    const sent = await Promise.all(
      namespaces.map(async (ns) => {
        const at = epochMs();
        await s.admin.request('PATCH', kind.path(ns, APP), { patch: 'json', body: imagePatch('/spec/template/spec/containers/0/image', APP_IMAGE(1)) });
        return at;
      }),
    );
    const timeoutMs = 600_000 + m * p * 1000;
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${side} fleet ${m} × ${p} not done in ${timeoutMs / 1000} s`)), timeoutMs).unref());
    const done = await Promise.race([
      Promise.all(namespaces.map(async (ns, i) => Math.max(...(await Promise.all([watches[i].allReady(p), completions!.doneAt(ns)]))))),
      timeout,
    ]);
    // Requests and CPU that the rollout set off but that land after it (the last events' reconciles) count too.
    await Promise.race([s.stack.pump.idle(), sleep(5000)]);
    await sleep(500);
    const cpuAfter = sampleCpu(s.cpu);
    const after = await scrape(s.stack.cluster.kubeConfig());
    if (selfBefore) say(`${side} fleet ${m} × ${p}: requests reconcile and readiness counted, by verb and resource:\n${countedDelta(selfBefore, await selfCounted(functionURLs), m * p).lines.join('\n')}`);
    const steps = watches.flatMap((w) => stepLatency(w.writes(), w.readies(), k).steps);
    const pods = m * p;
    return {
      ...config,
      side,
      wallMs: Math.max(...done) - started,
      setMs: done.map((t, i) => t - sent[i]),
      step: { p50: quantile(steps, 0.5), p90: quantile(steps, 0.9), count: steps.length },
      cpu: new Map([...cpuDelta(cpuBefore, cpuAfter)].map(([party, ms]) => [party, ms / pods])),
      own: requestsOf(kind.own, before, after),
      all: allRequests(before, after),
      load,
    };
  } finally {
    for (const w of watches) w.stop();
    completions?.stop();
    await deleteNamespaces(s, namespaces, label);
  }
}
