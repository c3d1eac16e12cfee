// What one API round trip costs on this machine (issue 24, point 2: where a step's time goes), against
// a real control plane with one NeoSet and its PODS pods, from one client with one request in flight,
// after a warm-up: the requests a NeoSet step is made of — the reconcile function's three reads (the
// NeoSet from etcd or from the watch cache; the pod and revision lists from the cache), the claim
// (a JSON Patch of the NeoSet's status), the drain (a strategic merge patch of pods/status), the image patch
// — next to the cheapest request there is (GET /version) and a small object's write (a ConfigMap).
// A step is at least its reads, its claim and its drain one after the other (SPEC §2.0: claim before
// act), so their sum is the floor under `npm run bench:rollout`'s step p50 on this machine, before
// any event travels or anything is decided. No kubelet: the pods stay Pending, which costs the writes
// nothing. Each row also gives the client's CPU per request (this process's user + system time): what
// a function pays for each request it makes, beside the API server's share.
//
//   node bench/round-trips.ts          (PODS=30 REQUESTS=60 to change)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LABEL_NEOSET_NAME } from '../shared/api/names.ts';
import type { NeoSetStatus } from '../shared/api/neoset.ts';
import { statusPatch } from '../shared/k8s/apply.ts';
import { createKubeClient, type KubeClient } from '../shared/k8s/client.ts';
import { paths } from '../shared/k8s/paths.ts';
import { POD_LONG_STRINGS } from '../shared/k8s/pod-trim.ts';
import { startControlPlane } from '../dev/cluster/control-plane.ts';
import { installCrds } from '../dev/cluster/crd.ts';
import { fixed, quantile, table } from './lib/stats.ts';
import { APP_IMAGE, createNamespace, neoset } from './lib/workloads.ts';

const PODS = Number(process.env.PODS ?? 30);
const REQUESTS = Number(process.env.REQUESTS ?? 60);
/** Requests of each kind before the timed ones: enough for the client's code to be compiled, so that its CPU per request is the steady one. */
const WARM = 50;
const NS = 'bench-round-trips';
const NAME = 'rt';

const say = (line: string) => process.stderr.write(`${line}\n`);

interface Row {
  what: string;
  p50: number;
  p90: number;
  /** This process's CPU (user + system) per op, ms: what the client side of the request costs a function. */
  cpu: number;
}

/** This process's CPU so far, ms (user + system). */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** `op` REQUESTS times, one at a time: p50 and p90 of its wall time, in ms. */
async function timed(what: string, op: (i: number) => Promise<unknown>): Promise<Row> {
  for (let i = 0; i < WARM; i++) await op(i); // warm: JIT, the connection, the caches
  const ms: number[] = [];
  const cpu = cpuMs();
  for (let i = 0; i < REQUESTS; i++) {
    const t = performance.now();
    await op(i);
    ms.push(performance.now() - t);
  }
  return { what, p50: quantile(ms, 0.5), p90: quantile(ms, 0.9), cpu: (cpuMs() - cpu) / REQUESTS };
}

async function measure(client: KubeClient): Promise<Row[]> {
  const selector = { labelSelector: `${LABEL_NEOSET_NAME}=${NAME}` };
  const fromCache = { resourceVersion: '0' };
  const neosetFrom = (query?: Record<string, string>) => client.request<{ metadata: { resourceVersion: string } }>('GET', paths.neoset(NS, NAME), query ? { query } : {});
  const list = (path: string) => client.request('GET', path, { query: { ...selector, ...fromCache, resourceVersionMatch: 'NotOlderThan' } });
  const reads = (query?: Record<string, string>) => Promise.all([neosetFrom(query), list(paths.pods(NS)), list(paths.revisions(NS))]);
  // The claim: the status alone, its resourceVersion the condition (apply.ts statusPatch).
  const writeStatus = (resourceVersion: string, i: number) =>
    client.request('PATCH', paths.neosetStatus(NS, NAME), { patch: 'json', body: statusPatch(resourceVersion, { observedGeneration: 1, replicas: i } as NeoSetStatus), longStrings: POD_LONG_STRINGS });
  const claim = async (i: number) => {
    const n = await neosetFrom();
    return () => writeStatus(n.metadata.resourceVersion, i);
  };
  const gate = (i: number) => ({ metadata: { annotations: { 'bench/drain': String(i) } }, status: { conditions: [{ type: 'InPlaceUpdateReady', status: i % 2 ? 'True' : 'False' }] } });
  const rows: Row[] = [];
  rows.push(await timed('GET /version (a round trip, nothing read)', () => client.request('GET', '/version')));
  rows.push(await timed('GET the NeoSet from etcd (quorum)', () => neosetFrom()));
  rows.push(await timed('GET the NeoSet from the watch cache', () => neosetFrom(fromCache)));
  rows.push(await timed(`LIST its ${PODS} pods from the watch cache`, () => list(paths.pods(NS))));
  rows.push(await timed(`LIST its ${PODS} pods, consistent (no resourceVersion)`, () => client.request('GET', paths.pods(NS), { query: selector })));
  rows.push(await timed('the three reads at once, the NeoSet from etcd', () => reads()));
  rows.push(await timed('the three reads at once, the NeoSet from the cache (reconcile)', () => reads(fromCache)));
  // Timed alone: the GET that gives the write its resourceVersion is not counted.
  const claims: number[] = [];
  let claimCpu = 0;
  for (let i = 0; i < REQUESTS + WARM; i++) {
    const put = await claim(i);
    const t = performance.now();
    const c = cpuMs();
    await put();
    if (i >= WARM) {
      claims.push(performance.now() - t);
      claimCpu += cpuMs() - c;
    }
  }
  rows.push({ what: 'PATCH the NeoSet status (the claim)', p50: quantile(claims, 0.5), p90: quantile(claims, 0.9), cpu: claimCpu / REQUESTS });
  rows.push(await timed('PATCH pods/status, state and gate (the drain)', (i) => client.request('PATCH', paths.podStatus(NS, `${NAME}-1`), { patch: 'strategic', body: gate(i) })));
  rows.push(await timed('PATCH a pod image (the image patch)', (i) => client.request('PATCH', paths.pod(NS, `${NAME}-2`), { patch: 'strategic', body: { spec: { containers: [{ name: 'main', image: APP_IMAGE(i % 2) }] } } })));
  rows.push(await timed('PATCH a ConfigMap (a small object)', (i) => client.request('PATCH', `/api/v1/namespaces/${NS}/configmaps/rt`, { patch: 'merge', body: { data: { i: String(i) } } })));
  rows.push(
    await timed('reads (cache) → claim → drain, one after the other', async (i) => {
      const [n] = await reads(fromCache);
      await writeStatus(n.metadata.resourceVersion, i).catch(() => undefined);
      await client.request('PATCH', paths.podStatus(NS, `${NAME}-1`), { patch: 'strategic', body: gate(i) });
    }),
  );
  return rows;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'neoset-bench-round-trips-'));
  say(`bench/round-trips: one NeoSet of ${PODS} pods, ${REQUESTS} requests per row, one in flight; control plane in ${dir}`);
  const cp = await startControlPlane({ dir: join(dir, 'cluster') });
  let rows: Row[] = [];
  try {
    const kc = cp.kubeConfig();
    const admin = createKubeClient(kc);
    await installCrds(kc);
    await createNamespace(admin, NS);
    await admin.request('POST', paths.neosets(NS), { body: neoset(NAME, PODS, 5, APP_IMAGE(0)) });
    // The pods as the NeoSet names and labels them, Pending (no kubelet); no reconcile runs.
    const spec = neoset(NAME, PODS, 5, APP_IMAGE(0)).spec.template;
    for (let i = 0; i < PODS; i++) {
      await admin.request('POST', paths.pods(NS), { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: `${NAME}-${i}`, labels: { ...spec.metadata.labels, [LABEL_NEOSET_NAME]: NAME } }, spec: spec.spec } });
    }
    await admin.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'rt' }, data: { i: '0' } } });
    rows = await measure(admin);
  } finally {
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`API round trips, ms (kube-apiserver ${cp.version}, one client, one request in flight, ${REQUESTS} each after ${WARM} to warm; client CPU = this process's user + system time per op)`);
  console.log(table(['request', 'p50', 'p90', 'client CPU'], rows.map((r) => [r.what, fixed(r.p50, 1), fixed(r.p90, 1), fixed(r.cpu, 2)])));
  const [claim, drain] = ['the claim', 'the drain'].map((w) => rows.find((r) => r.what.includes(w))!.p50);
  const cachedReads = rows.find((r) => r.what.includes('(reconcile)'))!.p50;
  console.log(`floor of a NeoSet step before its event and decision: reads ${fixed(cachedReads, 1)} + claim ${fixed(claim, 1)} + drain ${fixed(drain, 1)} = ${fixed(cachedReads + claim + drain, 1)} ms (p50s added)`);
}

await main();
