// SPEC §2.5 "memory is bounded by design" (issue 34, point 3), measured: the reconcile and readiness
// functions run as real processes — the bundles the image runs (scripts/build.ts, built here into a
// temporary directory: from source, Node's type stripping alone holds 70 MiB more, 167 against 93 MiB
// idle) — with a heap of half the manifests' 256 Mi limit (--max-old-space-size=128: left to itself, V8
// sizes its heap from a 256 MiB cgroup at about 262 MiB, nodejs/node#64646, and the cgroup would kill
// the process before V8 collected), against the real API server, fed by
// the event bridge as in chaos.test.ts; a simulated kubelet runs the pods. Each case ends with the
// VmHWM of each process (/proc/<pid>/status: the most resident memory it ever had), which must stay
// under the 256 Mi limit, and the processes still the ones started (an OOM ends a process: no restart).
//
//   1. One NeoSet of MEMORY_LIST_PODS pods (default 300) with 200 KiB of annotations each, made by the
//      test and left Pending, decided on by reconcile when an event names it: a 60 MB pod list.
//      Then the same NeoSet with NEOSET_SNAPSHOT_MAX_BYTES at 256 KiB: refused with a Warning Event.
//   2. (MEMORY_ROLL=1, see ROLL) One NeoSet of MEMORY_PODS pods (default 60; the issue's figure is 1,000, run by hand:
//      MEMORY_PODS=1000) whose template carries 200 KiB of annotations — 12 MB of pods in every list
//      at 60, which the functions held three times over (raw, as one string, parsed) before —
//      rolled to a new image, Parallel, maxUnavailable 50 %. The simulated kubelet and the event bridge
//      run in the test's process on the same two cores: 300 such pods took over 5 minutes to start,
//      100 over 200 s (2026-12-07, beside another engineer's benchmark).
//   3. (MEMORY_SWEEP=1, see SWEEP) MEMORY_NEOSETS NeoSets (default 60; the issue's 150) with a 1 MiB env value each, one pod each, swept by a
//      tick while /metrics is scraped: the state gauges listed every NeoSet whole (150 MiB in one answer).
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPump, type Pump } from '../../dev/bridge/pump.ts';
import { sinksFromTriggers } from '../../dev/bridge/triggers.ts';
import { startFunction, type RunningFunction } from '../../dev/functions.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { KNATIVE_DIR, type Manifest } from '../../dev/manifests.ts';
import { ApiError, createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { createTestNamespace, kubeConfig, kubeconfigPath, type TestNamespace } from '../cluster/harness.ts';
import { neosetManifest } from '../e2e/stack.ts';
import { build } from '../../scripts/build.ts';

let dir: string | undefined;
/** Pods listed by the first case (default 300: 60 MB of pods in one list). */
const LIST_PODS = Number(process.env.MEMORY_LIST_PODS ?? 300);
/** The rolled case runs only when asked (MEMORY_ROLL=1): on a loaded 2-core machine 60 such pods did not roll in 4 minutes. */
const ROLL = process.env.MEMORY_ROLL === '1';
const PODS = Number(process.env.MEMORY_PODS ?? 60);
/**
 * The sweep case runs only when asked (MEMORY_SWEEP=1): at the limit, not under it with room. On
 * 2026-12-07 it completed at 60 NeoSets (before, reconcile crashed on an uncaught ReadsBusy, then froze
 * with its read budget leaked) with reconcile's VmHWM at 284–331 MiB; on 2026-12-08, with buffers freed
 * when parsed, a 16 MiB read budget and the image's glibc settings, 247 and 256 MiB (README "Memory").
 */
const SWEEP = process.env.MEMORY_SWEEP === '1';
/** Two cores shared with the kubelet, the bridge and the API server: about 3 s a pod at worst. */
const WAIT_MS = Math.max(240_000, PODS * 3000);
const NEOSETS = Number(process.env.MEMORY_NEOSETS ?? 60);
/** The manifests' memory limit (knative/reconcile.yaml, readiness.yaml, eventing-only/functions.yaml). */
const LIMIT_MIB = 256;
/** MEMORY_NODE_OPTIONS: more for the functions' node, e.g. `--heapsnapshot-near-heap-limit=1 --diagnostic-dir=/tmp/x` to see what a heap holds. */
const HEAP = {
  NODE_OPTIONS: ['--max-old-space-size=128 --max-semi-space-size=8', process.env.MEMORY_NODE_OPTIONS].filter(Boolean).join(' '),
  // The image's glibc settings (Dockerfile ENV).
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  ...JSON.parse(process.env.MEMORY_ENV ?? '{}'),
};
const manifests = ['eventing.yaml', 'reconcile.yaml', 'readiness.yaml'].flatMap((f) => parseAllDocuments(readFileSync(join(KNATIVE_DIR, f), 'utf8')).map((d) => d.toJS() as Manifest));

/** MEMORY_BUNDLES: run bundles built elsewhere (e.g. of an earlier commit, to watch this test fail on it). */
const bundle = (name: string) => join(process.env.MEMORY_BUNDLES ?? join(dir!, 'dist'), `${name}.mjs`);
const vmHwmMiB = (pid: number) => Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024);

/** What a scrape of /metrics says of the process's memory (prom-client's default metrics), kept at the highest resident memory seen. */
function peakMemory() {
  const SERIES = ['process_resident_memory_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_external_memory_bytes'];
  let at: Record<string, number> = {};
  const value = (metrics: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  return {
    sample(metrics: string) {
      const now = Object.fromEntries(SERIES.map((n) => [n, value(metrics, n)]));
      if (!(now[SERIES[0]] <= (at[SERIES[0]] ?? -1))) at = now;
    },
    text: () => SERIES.map((n) => `${n} ${((at[n] ?? NaN) / 2 ** 20).toFixed(1)} MiB`).join(', '),
  };
}

interface Status {
  replicas?: number;
  readyReplicas?: number;
  updatedReplicas?: number;
  observedGeneration?: number;
  phase?: string;
}

describe('memory bounded (SPEC §2.5): functions under their memory limit', () => {
  let ns: TestNamespace;
  let client: KubeClient;
  let kubelet: Kubelet;
  let functions: RunningFunction[] = [];
  let pump: Pump;

  beforeAll(async () => {
    dir = join(tmpdir(), `neoset-memory-${process.pid}`);
    if (!process.env.MEMORY_BUNDLES) await build(join(dir, 'dist'));
    ns = await createTestNamespace('memory');
    const kc = kubeConfig();
    client = createKubeClient(kc);
    kubelet = await startKubelet({ kubeConfig: kc, nodeName: `node-${ns.name}`, namespace: ns.name, readyDelayMs: 50, startDelayMs: 20 });
    mkdirSync(dir, { recursive: true });
    const start = (name: 'reconcile' | 'readiness') => startFunction({ name, port: 0, kubeconfig: kubeconfigPath(), logPath: join(dir!, `${name}.log`), entry: bundle(name), env: { ...HEAP, LOG_LEVEL: 'warn' } });
    functions = await Promise.all([start('reconcile'), start('readiness')]);
    const [reconcile, readiness] = functions;
    pump = startPump({ kubeConfig: kc, namespace: ns.name, sinks: sinksFromTriggers(manifests, { 'neoset-reconcile': `${reconcile.url}/`, 'neoset-readiness': `${readiness.url}/` }), resyncMs: 10_000 });
    await pump.ready;
  }, 120_000);

  afterAll(async () => {
    await pump?.stop();
    await Promise.all(functions.map((fn) => fn.process.stop()));
    await ns?.cleanup({ wait: false }).catch(() => {});
    await kubelet?.stop();
    // MEMORY_KEEP=1: the functions' logs stay (with MEMORY_NODE_OPTIONS=--trace-gc, every collection's heap).
    if (dir && existsSync(dir) && process.env.MEMORY_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
    else if (dir) console.log(`[memory] logs kept in ${dir}`);
  });

  const status = async (name: string) => (await client.request<{ metadata: { generation?: number }; status?: Status }>('GET', paths.neoset(ns.name, name))).status ?? {};
  const until = async (what: string, ok: () => Promise<boolean>, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    const exited = () => {
      for (const fn of functions) if (fn.process.hasExited()) throw new Error(`${fn.name} exited while waiting for ${what}: ${fn.process.tail(20)}`);
    };
    for (;;) {
      exited();
      // A scrape of a process that just ended fails first: its end is what to report.
      if (await ok().catch(async (err: unknown) => {
        await new Promise((r) => setTimeout(r, 500));
        exited();
        // The API server the functions load may be slow to answer the test too: not yet, not failed.
        if (err instanceof ApiError && err.isTransient) return false;
        throw err;
      })) return;
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  const report = (label: string) => {
    const figures = functions.map((fn) => `${fn.name} VmHWM ${vmHwmMiB(fn.process.pid)} MiB`);
    console.log(`[memory] ${label}: ${figures.join(', ')} (limit ${LIMIT_MIB} Mi)`);
    for (const fn of functions) {
      expect(fn.process.hasExited(), `${fn.name} still running: ${fn.process.tail(20)}`).toBe(false);
      expect(vmHwmMiB(fn.process.pid), `${fn.name}'s VmHWM`).toBeLessThan(LIMIT_MIB);
    }
  };

  it(`decides on a NeoSet of ${LIST_PODS} pods with 200 KiB of annotations each, told by an event`, async () => {
    // The pods made here, not by reconcile, and left Pending (no kubelet takes them): what is measured
    // is the read of a ${LIST_PODS * 200} KiB pod list and the decision on it, not the machine's speed.
    const started = Date.now();
    const manifest = neosetManifest({ name: 'listed', replicas: LIST_PODS }) as { metadata: Record<string, unknown> };
    const neoset = await client.request<{ metadata: { uid: string } }>('POST', paths.neosets(ns.name), { body: manifest });
    const blob = 'a'.repeat(200 * 1024 - 100);
    for (let i = 0; i < LIST_PODS; i += 10) {
      await Promise.all(
        Array.from({ length: Math.min(10, LIST_PODS - i) }, (_, k) => i + k).map((ordinal) =>
          client.request('POST', paths.pods(ns.name), {
            body: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: {
                name: `listed-${ordinal}`,
                labels: { app: 'listed', 'neoset.neo.io/name': 'listed' },
                annotations: { 'example.com/blob': blob },
                ownerReferences: [{ apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'listed', uid: neoset.metadata.uid, controller: true, blockOwnerDeletion: true }],
              },
              spec: { nodeName: 'nowhere', containers: [{ name: 'main', image: 'mysql:8.0' }] },
            },
          }),
        ),
      );
    }
    const made = Date.now();
    const [reconcile] = functions;
    const event = { specversion: '1.0', id: `listed-${Date.now()}`, source: 'https://kubernetes.default', type: 'dev.knative.apiserver.ref.update', subject: `/apis/neo.io/v1alpha1/namespaces/${ns.name}/neosets/listed`, datacontenttype: 'application/json', data: { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'listed', namespace: ns.name } };
    const answer = await fetch(`${reconcile.url}/`, { method: 'POST', headers: { 'content-type': 'application/cloudevents+json' }, body: JSON.stringify(event) }).catch((err: Error) => err);
    console.log(`[memory] ${LIST_PODS} pods of 200 KiB made in ${((made - started) / 1000).toFixed(1)} s; the event answered ${answer instanceof Error ? answer.message : answer.status} in ${((Date.now() - made) / 1000).toFixed(1)} s`);
    report(`one NeoSet of ${LIST_PODS} pods with 200 KiB of annotations, decided on`);
    expect(answer instanceof Error ? answer.message : answer.status).toBe(200);
    // Decided on: a status written for this generation (what it says of pods no kubelet runs is not the point).
    const listed = await client.request<{ metadata: { generation?: number }; status?: Status }>('GET', paths.neoset(ns.name, 'listed'));
    expect(listed.status?.observedGeneration).toBe(listed.metadata.generation);
  }, 600_000);

  it('refuses a NeoSet too large to decide on with a Warning Event and a metric, answered 200', async () => {
    const logPath = join(dir!, 'reconcile-small.log');
    const small = await startFunction({ name: 'reconcile', port: 0, kubeconfig: kubeconfigPath(), logPath, entry: bundle('reconcile'), env: { ...HEAP, LOG_LEVEL: 'warn', NEOSET_SNAPSHOT_MAX_BYTES: String(256 * 1024) } });
    try {
      // A Reference-mode event: nothing in it lets the function skip the read.
      const event = { specversion: '1.0', id: `too-large-${Date.now()}`, source: 'https://kubernetes.default', type: 'dev.knative.apiserver.ref.update', subject: `/apis/neo.io/v1alpha1/namespaces/${ns.name}/neosets/listed`, datacontenttype: 'application/json', data: { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'listed', namespace: ns.name } };
      const answer = await fetch(`${small.url}/`, { method: 'POST', headers: { 'content-type': 'application/cloudevents+json' }, body: JSON.stringify(event) });
      expect(answer.status).toBe(200);
      const events = await client.request<{ items: { reason: string; type: string; message: string; involvedObject: { name: string } }[] }>('GET', paths.events(ns.name));
      const refused = events.items.filter((e) => e.reason === 'TooLargeToDecide' && e.involvedObject.name === 'listed');
      console.log(`[memory] too large: ${refused.map((e) => `${e.type} ${e.reason}: ${e.message}`).join(' | ')}`);
      expect(refused).toHaveLength(1);
      expect(refused[0].type).toBe('Warning');
      expect(refused[0].message).toContain('NEOSET_SNAPSHOT_MAX_BYTES');
      const metrics = await (await fetch(small.metricsUrl)).text();
      expect(metrics).toMatch(/^neoset_snapshot_too_large_total 1$/m);
      expect(small.process.hasExited()).toBe(false);
    } finally {
      await small.process.stop();
      // The API server and the kubelet let go of the large pods before the next case (no garbage collector runs here).
      for (const name of ['listed', 'wide']) {
        await client.request('DELETE', paths.neoset(ns.name, name)).catch(() => {});
        await client.request('DELETE', paths.pods(ns.name), { query: { labelSelector: `app=${name}`, gracePeriodSeconds: 0 } }).catch(() => {});
      }
    }
  }, 120_000);

  it.skipIf(!ROLL)(`rolls one NeoSet of ${PODS} pods with 200 KiB of template annotations`, async () => {
    const started = Date.now();
    const annotations = { 'example.com/blob': 'a'.repeat(200 * 1024 - 100) };
    const manifest = neosetManifest({ name: 'wide', replicas: PODS, image: 'mysql:8.0', spec: { podManagementPolicy: 'Parallel' }, updateStrategy: { maxUnavailable: '50%' } }) as { spec: { template: { metadata: Record<string, unknown> } } };
    manifest.spec.template.metadata.annotations = annotations;
    await client.request('POST', paths.neosets(ns.name), { body: manifest });
    await until(`${PODS} pods ready`, async () => (await status('wide')).readyReplicas === PODS, WAIT_MS);
    const created = Date.now();
    await client.request('PATCH', paths.neoset(ns.name, 'wide'), { patch: 'json', body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'mysql:8.1' }] });
    await until(`${PODS} pods updated and ready`, async () => {
      const s = await status('wide');
      return s.updatedReplicas === PODS && s.readyReplicas === PODS && s.phase === 'Completed';
    }, WAIT_MS);
    console.log(`[memory] ${PODS} pods: created and ready in ${((created - started) / 1000).toFixed(1)} s, rolled in ${((Date.now() - created) / 1000).toFixed(1)} s`);
    report(`one NeoSet of ${PODS} pods with 200 KiB of template annotations, rolled`);
  }, 2 * WAIT_MS + 60_000);

  it.skipIf(!SWEEP)(`sweeps ${NEOSETS} NeoSets with 1 MiB env values in a tick, /metrics scraped`, async () => {
    const started = Date.now();
    const env = [{ name: 'BLOB', value: 'e'.repeat(1024 * 1024 - 4096) }];
    const names = Array.from({ length: NEOSETS }, (_, i) => `env-${i}`);
    for (let i = 0; i < names.length; i += 5) {
      await Promise.all(
        names.slice(i, i + 5).map((name) => {
          const manifest = neosetManifest({ name, replicas: 1 }) as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } };
          manifest.spec.template.spec.containers[0].env = env;
          return client.request('POST', paths.neosets(ns.name), { body: manifest });
        }),
      );
    }
    // Every NeoSet decided on (the events of its creation, then the ticks' sweeps), while /metrics is scraped.
    const [reconcile] = functions;
    let scrapes = 0;
    const peak = peakMemory();
    let stateUp = 0;
    const unanswered: number[] = [];
    await until(`${NEOSETS} NeoSets with their pod ready`, async () => {
      const answer = await fetch(reconcile.metricsUrl);
      const metrics = await answer.text();
      scrapes++;
      peak.sample(metrics);
      // 408: the request not read within NEOSET_REQUEST_TIMEOUT_MS by a process busy deciding.
      if (answer.status !== 200) unanswered.push(answer.status);
      if (/^neoset_state_up 1$/m.test(metrics)) stateUp++;
      // Their printer columns only (a Table): the NeoSets whole would be 60 MiB a poll, on the API
      // server the functions share (it timed out a GET at 30 s beside them).
      const table = await client.request<{ columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] }>('GET', paths.neosets(ns.name), {
        accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
        // From the watch cache: a quorum read would be 60 MiB from etcd a poll.
        query: { includeObject: 'None', resourceVersion: '0' },
      });
      const ready = table.columnDefinitions.findIndex((c) => c.name === 'Ready');
      return table.rows.length === NEOSETS && table.rows.every((r) => r.cells[ready] === 1);
    }, 600_000);
    // And a whole sweep begun after that (two finished: the one in flight may have begun before): every
    // NeoSet read again — 1 MiB, its revision 1 MiB, its pod — SWEEP_PARALLELISM at a time.
    const metric = async (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await (await fetch(reconcile.metricsUrl)).text())?.[1] ?? 0);
    const sweeps = await metric('neoset_sweep_duration_seconds_count');
    await until('two more sweeps finished', async () => (await metric('neoset_sweep_duration_seconds_count')) >= sweeps + 2, 180_000);
    expect(await metric('neoset_sweep_neosets')).toBeGreaterThanOrEqual(NEOSETS);
    // Every scrape answered; the state gauges are there when the LIST of every NeoSet (60 MiB here)
    // answers within the scrape's 5 s (state-gauges.ts), else neoset_state_up says 0: printed, not required.
    console.log(`[memory] at the highest resident memory scraped: ${peak.text()}`);
    console.log(`[memory] ${NEOSETS} NeoSets: ready and swept in ${((Date.now() - started) / 1000).toFixed(1)} s; ${scrapes} scrapes, state gauges up in ${stateUp}, not answered 200: ${JSON.stringify(unanswered)}`);
    report(`${NEOSETS} NeoSets with 1 MiB env values swept by a tick, /metrics scraped`);
  }, 900_000);
});
