// No-op event throughput and latency of ONE reconcile instance (issue 10): `node
// functions/reconcile/server.ts` as its own process on a loopback port (as the dev stack runs it),
// against a real control plane holding 10 settled NeoSets of PODS pods each. The benchmark POSTs
// Pod MODIFIED events — ApiServerSource Resource mode, binary CloudEvents, built as the bridge builds
// them (dev/bridge/pump.ts) — for the settled pods, keeping 8 (then 50) requests in flight, and
// reports events/s, latency p50/p99, the API requests the instance made per event (its own
// neoset_api_requests_total, from its /metrics) and the CPU it spent per event (/proc). Event mixes:
//   one NeoSet   every event names a pod of the same NeoSet — what coalescing (SPEC §2.0) helps
//   10 NeoSets   the events go round-robin over the pods of all ten
//   mid-update   the pods as an update in flight shows them (draining, the state annotation on):
//                what most of a rollout's Pod events are, which reconcile leaves alone unread — to
//                reconcile, and to a readiness process (nothing to do for it either: the gate is shut)
// Nothing is to be done for any of these pods, so every answer must be an empty 200.
//
//   node bench/events.ts          (PODS=30 EVENTS=2000 to change)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createApp as createReadiness } from '../functions/readiness/app.ts';
import { LABEL_NEOSET_NAME } from '../shared/api/names.ts';
import { createKubeClient } from '../shared/k8s/client.ts';
import { startControlPlane } from '../dev/cluster/control-plane.ts';
import { installCrds } from '../dev/cluster/crd.ts';
import { resourceEvent, startPump, toBinaryRequest, type PumpEvent } from '../dev/bridge/pump.ts';
import type { KubeObject } from '../shared/k8s/watch.ts';
import { startFunction, type RunningFunction } from '../dev/functions.ts';
import { startKubelet } from '../dev/kubelet/kubelet.ts';
import { fixed, quantile, table } from './lib/stats.ts';
import { cpuMs } from './lib/cpu.ts';
import { ANNOTATION_INPLACE_STATE, LABEL_REVISION_HASH } from '../shared/api/names.ts';
import type { InPlaceState } from '../shared/api/inplace-state.ts';
import { encodeInPlaceState } from '../shared/core/pods/in-place-state.ts';
import { APP_IMAGE, createNamespace, neoset, neosetPath, podsPath, readyPods, until } from './lib/workloads.ts';

const PODS = Number(process.env.PODS ?? 30);
const EVENTS = Number(process.env.EVENTS ?? 2000);
const NEOSETS = 10;
const IN_FLIGHT = [8, 50];
const NS = 'bench-events';

const say = (line: string) => process.stderr.write(`${line}\n`);

interface Result {
  fn: string;
  mix: string;
  inFlight: number;
  perSecond: number;
  p50: number;
  p99: number;
  reads: number;
  writes: number;
  failed: number;
  cpuPerEvent: number;
}

/** The instance's API requests so far, from its /metrics: reads (GET) and writes. */
async function apiRequests(url: string): Promise<{ reads: number; writes: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const r = { reads: 0, writes: 0 };
  for (const line of text.split('\n')) {
    if (!line.startsWith('neoset_api_requests_total{')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (/verb="get"/i.test(line)) r.reads += value;
    else r.writes += value;
  }
  return r;
}

/** Sends `events` keeping `inFlight` requests open; each answer must be an empty 2xx. */
async function load(url: string, events: PumpEvent[], inFlight: number): Promise<{ ms: number; latencies: number[]; failed: number }> {
  const latencies: number[] = [];
  let failed = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < events.length) {
      const event = events[next++];
      const t = performance.now();
      const res = await fetch(toBinaryRequest(`${url}/`, event));
      const body = await res.text();
      latencies.push(performance.now() - t);
      if (res.status !== 200 || body !== '') failed++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { ms: performance.now() - started, latencies, failed };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'neoset-bench-events-'));
  say(`bench/events: ${NEOSETS} NeoSets of ${PODS} pods, ${EVENTS} events per measurement; control plane in ${dir}`);
  const cp = await startControlPlane({ dir: join(dir, 'cluster') });
  const kc = cp.kubeConfig();
  const admin = createKubeClient(kc);
  await installCrds(kc);
  // A simulated node hands out pod IPs from one /24: one node per 200 pods.
  const kubelets = [];
  for (let i = 0; i < Math.ceil((NEOSETS * PODS) / 200); i++) kubelets.push(await startKubelet({ kubeConfig: kc, nodeName: `bench-node-${i}` }));
  const reconcile = await startFunction({ name: 'reconcile', port: 0, kubeconfig: cp.kubeconfigPath, logPath: join(dir, 'reconcile.log') });
  const readiness = await startFunction({ name: 'readiness', port: 0, kubeconfig: cp.kubeconfigPath, logPath: join(dir, 'readiness.log') });
  const results: Result[] = [];
  try {
    // Settle the NeoSets with the bridge feeding the instance (and an in-process readiness), then
    // stop the bridge: from then on only the benchmark's events reach the instance.
    await createNamespace(admin, NS);
    const pump = startPump({
      kubeConfig: kc,
      namespace: NS,
      sinks: [
        { target: `${reconcile.url}/`, kinds: ['NeoSet', 'Pod', 'ping'] },
        { target: createReadiness({ client: createKubeClient(kc), logger: pino({ level: 'silent' }) }).fetch, kinds: ['Pod'] },
      ],
      resyncMs: 1000,
    });
    await pump.ready;
    const names = Array.from({ length: NEOSETS }, (_, i) => `set-${i}`);
    for (const name of names) await admin.request('POST', neosetPath(NS), { body: neoset(name, PODS, 5, APP_IMAGE(0)) });
    await until(`${NEOSETS * PODS} pods Ready`, 600_000, async () => (await readyPods(admin, NS, LABEL_NEOSET_NAME)) === NEOSETS * PODS);
    await until('every NeoSet settled', 120_000, async () => {
      const list = await admin.request<{ items: { metadata: { generation: number }; status?: { observedGeneration?: number; readyReplicas?: number } }[] }>('GET', neosetPath(NS));
      return list.items.every((o) => o.status?.observedGeneration === o.metadata.generation && o.status?.readyReplicas === PODS);
    });
    await pump.stop();
    await new Promise((r) => setTimeout(r, 1000));

    const pods = (await admin.request<{ items: KubeObject[] }>('GET', podsPath(NS))).items;
    const eventOf = (pod: KubeObject) => resourceEvent(cp.server, 'MODIFIED', { ...pod, kind: 'Pod', apiVersion: 'v1' });
    const ofSet = (name: string) => pods.filter((p) => p.metadata.labels?.[LABEL_NEOSET_NAME] === name);
    const one = ofSet(names[0]);
    const byName = names.map(ofSet);
    // As the drain writes it (§4.4 step 1): the state annotation, the gate shut.
    const draining = (pod: KubeObject): KubeObject => {
      const p = structuredClone(pod) as KubeObject & { metadata: { annotations?: Record<string, string> }; status?: { conditions?: { type: string; status: string }[] } };
      const state: InPlaceState = { revision: p.metadata.labels?.[LABEL_REVISION_HASH] ?? 'r', phase: 'Draining', drainStartedAt: new Date().toISOString(), readiness: 'Probe' };
      p.metadata.annotations = { ...p.metadata.annotations, [ANNOTATION_INPLACE_STATE]: encodeInPlaceState(state) };
      for (const c of p.status?.conditions ?? []) if (c.type === 'InPlaceUpdateReady') c.status = 'False';
      return p;
    };
    const mixes: [RunningFunction, string, (i: number) => KubeObject][] = [
      [reconcile, 'one NeoSet', (i) => one[i % one.length]],
      [reconcile, `${NEOSETS} NeoSets`, (i) => byName[i % NEOSETS][Math.floor(i / NEOSETS) % PODS]],
      [reconcile, 'mid-update', (i) => draining(one[i % one.length])],
      [readiness, 'mid-update', (i) => draining(one[i % one.length])],
    ];
    // Warm the instances (JIT, connections) before anything is timed.
    for (const fn of [reconcile, readiness]) await load(fn.url, Array.from({ length: 200 }, (_, i) => eventOf(one[i % one.length])), 8);
    for (const inFlight of IN_FLIGHT) {
      for (const [fn, mix, podAt] of mixes) {
        const events = Array.from({ length: EVENTS }, (_, i) => eventOf(podAt(i)));
        const before = await apiRequests(fn.url);
        const cpuBefore = cpuMs(fn.process.pid);
        const { ms, latencies, failed } = await load(fn.url, events, inFlight);
        const cpuPerEvent = (cpuMs(fn.process.pid) - cpuBefore) / events.length;
        const after = await apiRequests(fn.url);
        results.push({
          fn: fn.name,
          cpuPerEvent,
          mix,
          inFlight,
          perSecond: (events.length / ms) * 1000,
          p50: quantile(latencies, 0.5),
          p99: quantile(latencies, 0.99),
          reads: (after.reads - before.reads) / events.length,
          writes: (after.writes - before.writes) / events.length,
          failed,
        });
        say(`${fn.name}, ${mix}, ${inFlight} in flight: ${fixed((events.length / ms) * 1000, 0)} events/s, ${fixed(cpuPerEvent, 3)} CPU ms/event`);
      }
    }
  } finally {
    await reconcile.process.stop();
    await readiness.process.stop();
    for (const kubelet of kubelets) await kubelet.stop();
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`no-op Pod events (Resource mode, binary) to one instance of each function; ${NEOSETS} NeoSets of ${PODS} settled pods; ${EVENTS} events each`);
  console.log(
    table(
      ['function', 'events for', 'in flight', 'events/s', 'p50 ms', 'p99 ms', 'API req/event (R/W)', 'CPU ms/event', 'not an empty 200'],
      results.map((r) => [r.fn, r.mix, `${r.inFlight}`, fixed(r.perSecond, 0), fixed(r.p50, 1), fixed(r.p99, 1), `${fixed(r.reads + r.writes, 2)} (${fixed(r.reads, 2)}/${fixed(r.writes, 2)})`, fixed(r.cpuPerEvent, 3), `${r.failed}`]),
    ),
  );
}

await main();
