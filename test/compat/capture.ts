// Captures the compatibility fixtures (issue 22 §2, SPEC §4.2 "a new release decides the state an
// older one left with zero writes"): the previous release's functions — its dev stack, run from a
// checkout of its commit against a control plane of this one (`npm run dev -- --kubeconfig`: its CRD,
// RBAC, admission webhooks, event bridge and the three functions as processes) — drive NeoSets into
// each state of FIXTURE_STATES; each is saved as the API server returned it (NeoSet, pods,
// ControllerRevisions, PVCs; managedFields dropped) with the previous release's own decision of it
// at the capture time and later (its core, imported from that checkout), so a test can tell that the
// new core carries in-flight work on as the old one would.
//
// Run by hand, not by `npm test` (it takes ~3 minutes):
//   npx node test/compat/capture.ts [--previous DIR] [--out test/fixtures/compat/v0.2]
// DIR: a checkout of PREVIOUS_RELEASE with its own `npm ci` (default: prepared by previous-release.ts).
// Pods are played by this checkout's simulated kubelet, one per namespace, stopped where a state
// must hold still (a crash-looping container, a pod that must stay Pending).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { startControlPlane } from '../../dev/cluster/control-plane.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { canonicalJson } from '../../shared/core/json.ts';
import { PREVIOUS_RELEASE, preparePreviousRelease } from './previous-release.ts';
import { FIXTURE_STATES, type FixtureFile, type FixtureState } from './fixture.ts';

const { values: args } = parseArgs({ options: { previous: { type: 'string' }, out: { type: 'string', default: join(import.meta.dirname, '..', 'fixtures', 'compat', 'v0.2') } } });
const say = (line: string) => process.stderr.write(`[capture] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const previous = args.previous ?? (await preparePreviousRelease(say));
const work = mkdtempSync(join(tmpdir(), 'neoset-capture-'));
const cp = await startControlPlane({ dir: join(work, 'cluster'), log: (l) => say(`control plane: ${l}`) });
const kc = cp.kubeConfig();
const client = createKubeClient(kc);
const kubectl = (argv: string[], input?: string) =>
  execFileSync('kubectl', ['--kubeconfig', cp.kubeconfigPath, ...argv], { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });

// The previous release's dev stack, with this checkout's Node (its package.json pins the same node@24).
const dev = spawn(join(import.meta.dirname, '..', '..', 'node_modules', 'node', 'bin', 'node'), ['dev/main.ts', '--kubeconfig', cp.kubeconfigPath, '--dir', join(work, 'dev'), '--resync-ms', '1000', '--reconcile-port', '0', '--readiness-port', '0', '--admission-port', '0'], {
  cwd: previous,
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, LOG_LEVEL: 'warn' },
});
let devLog = '';
const ready = new Promise<void>((resolve, reject) => {
  // It prints its log on stdout, and on stderr while it stops.
  for (const stream of [dev.stdout, dev.stderr]) {
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      devLog = (devLog + chunk).slice(-20_000);
      if (devLog.includes('NeoSet dev stack ready')) resolve();
    });
  }
  dev.on('exit', (code) => reject(new Error(`the previous release's dev stack exited (${code}):\n${devLog.slice(-3000)}`)));
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().finally(() => process.exit(130)));

async function stopAll() {
  dev.kill('SIGTERM');
  await new Promise((r) => (dev.exitCode !== null ? r(null) : dev.once('exit', r)));
  await cp.stop();
  rmSync(work, { recursive: true, force: true });
}

const NAME = 'db';
interface Scene {
  ns: string;
  kubelet: Kubelet | null;
}

function manifest(spec: Record<string, unknown>, image = 'mysql:8.0', container: Record<string, unknown> = {}) {
  return {
    apiVersion: 'neo.io/v1alpha1',
    kind: 'NeoSet',
    metadata: { name: NAME },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: NAME } },
      serviceName: NAME,
      template: {
        metadata: { labels: { app: NAME } },
        spec: { containers: [{ name: 'mysql', image, readinessProbe: { tcpSocket: { port: 3306 } }, ...container }] },
      },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      ...spec,
    },
  };
}

async function scene(state: FixtureState): Promise<Scene> {
  const ns = `compat-${state}`;
  kubectl(['create', 'namespace', ns]);
  for (let i = 0; i < 100 && !kubectl(['-n', ns, 'get', 'serviceaccounts', '-o', 'name']).includes('default'); i++) await sleep(100);
  const kubelet = await startKubelet({ kubeConfig: kc, nodeName: `node-${ns}`, namespace: ns, readyDelayMs: 300, startDelayMs: 100 });
  return { ns, kubelet };
}

const apply = (s: Scene, object: unknown) => kubectl(['-n', s.ns, 'apply', '-f', '-'], stringify(object));
const patch = (s: Scene, body: unknown) => kubectl(['-n', s.ns, 'patch', 'neo', NAME, '--type', 'merge', '-p', JSON.stringify(body)]);
const image = (s: Scene, value: string) =>
  kubectl(['-n', s.ns, 'patch', 'neo', NAME, '--type', 'json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value }])]);

interface Objects {
  neoset: any;
  pods: any[];
  revisions: any[];
  pvcs: any[];
}

async function read(c: KubeClient, ns: string): Promise<Objects> {
  const selector = `neoset.neo.io/name=${NAME}`;
  const list = async (path: string) => (await c.request<{ items: any[] }>('GET', path, { query: { labelSelector: selector } })).items;
  const [neoset, pods, revisions, pvcs] = await Promise.all([
    c.request<any>('GET', paths.neoset(ns, NAME)),
    list(paths.pods(ns)),
    list(paths.revisions(ns)),
    (await c.request<{ items: any[] }>('GET', paths.pvcs(ns))).items,
  ]);
  return { neoset, pods, revisions, pvcs };
}

async function until(s: Scene, what: string, ok: (o: Objects) => boolean, timeoutMs = 90_000): Promise<Objects> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const o = await read(client, s.ns).catch(() => null);
    if (o && ok(o)) return o;
    if (Date.now() > deadline) throw new Error(`${s.ns}: timed out waiting for ${what}; last: ${JSON.stringify(o?.neoset?.status)}`);
    await sleep(200);
  }
}

/** Nothing changes for 5 s (five resync ticks of the previous release's bridge): what it left. */
async function quiet(s: Scene): Promise<Objects> {
  const versions = (o: Objects) => canonicalJson([o.neoset.metadata.resourceVersion, ...[o.pods, o.revisions, o.pvcs].flat().map((x) => x.metadata.resourceVersion)]);
  let last = '';
  let since = Date.now();
  for (;;) {
    const o = await read(client, s.ns);
    const v = versions(o);
    if (v !== last) [last, since] = [v, Date.now()];
    else if (Date.now() - since >= 5000) return o;
    await sleep(250);
  }
}

const status = (o: Objects) => o.neoset.status ?? {};
const pod = (o: Objects, ordinal: number) => o.pods.find((p) => p.metadata.name === `${NAME}-${ordinal}`);
const inPlace = (p: any) => (p?.metadata.annotations?.['neoset.neo.io/inplace-update-state'] ? JSON.parse(p.metadata.annotations['neoset.neo.io/inplace-update-state']) : null);
const readyPods = (o: Objects) => o.pods.filter((p) => p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')).length;
const settled = (n: number) => (o: Objects) => status(o).readyReplicas === n && o.pods.length === n && status(o).observedGeneration === o.neoset.metadata.generation;
async function freeze(s: Scene) {
  await s.kubelet?.stop();
  s.kubelet = null;
}

/** Each state, reached by what a user does. */
const DRIVE: Record<FixtureState, (s: Scene) => Promise<void>> = {
  async completed(s) {
    apply(s, manifest({}));
    await until(s, '3 ready', settled(3));
    image(s, 'mysql:8.1');
    await until(s, 'Completed', (o) => status(o).phase === 'Completed' && status(o).updatedReplicas === 3 && readyPods(o) === 3);
  },
  async 'mid-rollout-draining-and-updating'(s) {
    apply(s, manifest({ replicas: 4 }));
    await until(s, '4 ready', settled(4));
    // A crash-looping image keeps db-3 Updating (its deadline is 600 s); then a wider budget and a
    // long grace period hold db-2 Draining beside it.
    image(s, 'mysql:8.1-crashloop');
    await until(s, 'db-3 Updating', (o) => inPlace(pod(o, 3))?.phase === 'Updating');
    await freeze(s);
    patch(s, { spec: { updateStrategy: { maxUnavailable: 2, inPlaceUpdateStrategy: { gracePeriodSeconds: 3600 } } } });
    await until(s, 'db-2 Draining', (o) => inPlace(pod(o, 2))?.phase === 'Draining');
  },
  async 'canary-paused-at-step'(s) {
    apply(s, manifest({ replicas: 4, updateStrategy: { canary: { steps: [{ partition: 3 }, { pause: {} }, { partition: 0 }] } } }));
    await until(s, '4 ready', settled(4));
    image(s, 'mysql:8.1');
    await until(s, 'paused at step 1', (o) => status(o).canary?.stepIndex === 1 && status(o).updatedReplicas === 1 && readyPods(o) === 4);
  },
  async 'canary-timed-pause-running'(s) {
    apply(s, manifest({ replicas: 4, updateStrategy: { canary: { steps: [{ partition: 3 }, { pause: { duration: '1h' } }, { partition: 0 }] } } }));
    await until(s, '4 ready', settled(4));
    image(s, 'mysql:8.1');
    await until(s, 'timed pause running', (o) => status(o).canary?.stepIndex === 1 && status(o).canary?.stepStartedAt !== undefined && readyPods(o) === 4);
  },
  async 'failed-deadline'(s) {
    apply(s, manifest({ updateStrategy: { inPlaceUpdateStrategy: { timeoutSeconds: 5 } } }));
    await until(s, '3 ready', settled(3));
    image(s, 'mysql:8.1-crashloop');
    await until(s, 'Failed', (o) => status(o).phase === 'Failed');
    await freeze(s);
  },
  async 'failed-analysis-abort'(s) {
    apply(s, manifest({ updateStrategy: { canary: { steps: [{ partition: 2 }, { pause: {} }, { partition: 0 }], analysis: { maxRestarts: 1 } } } }));
    await until(s, '3 ready', settled(3));
    image(s, 'mysql:8.1-crashloop');
    await until(s, 'aborted, pods back', (o) => status(o).phase === 'Failed' && readyPods(o) === 3 && o.pods.every((p) => inPlace(p) === null && p.metadata.labels['controller-revision-hash'] === status(o).currentRevision));
  },
  async 'hooks-waiting-for-owner'(s) {
    const guard = { 'example.com/serving': 'true' };
    apply(s, manifest({ lifecycle: { preUpdate: { labelsHandler: guard }, postUpdate: { labelsHandler: guard } } }));
    await until(s, '3 ready', settled(3));
    for (let i = 0; i < 3; i++) kubectl(['-n', s.ns, 'label', 'pod', `${NAME}-${i}`, 'example.com/serving=true']);
    image(s, 'mysql:8.1');
    await until(s, 'db-2 PreparingUpdate', (o) => pod(o, 2)?.metadata.labels['neoset.neo.io/lifecycle-state'] === 'PreparingUpdate');
  },
  async 'resize-in-flight'(s) {
    // 3 × 2 cpu on an 8-cpu node: 5 cpu for db-2 does not fit beside the others — Deferred, it waits.
    const resources = (cpu: string) => ({ requests: { cpu, memory: '1Gi' }, limits: { cpu, memory: '1Gi' } });
    apply(s, manifest({}, 'mysql:8.0', { resources: resources('2') }));
    await until(s, '3 ready', settled(3));
    kubectl(['-n', s.ns, 'patch', 'neo', NAME, '--type', 'json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/resources', value: resources('5') }])]);
    await until(s, 'db-2 resize pending', (o) => pod(o, 2)?.status?.conditions?.some((c: any) => c.type === 'PodResizePending'));
    await freeze(s); // the kubelet re-judges a pending resize every few seconds
  },
  async 'orderedready-scale-up-half-done'(s) {
    apply(s, manifest({ replicas: 1 }));
    await until(s, '1 ready', settled(1));
    patch(s, { spec: { replicas: 6 } });
    await until(s, 'db-2 created', (o) => pod(o, 2) !== undefined);
    await freeze(s); // db-2 stays Pending: OrderedReady waits for it
  },
};

type OldDecide = (snapshot: unknown, now: Date) => { actions: unknown[]; status: unknown; requeueAfter: number | null };
const { decide: oldDecide } = (await import(join(previous, 'shared/core/decide.ts'))) as { decide: OldDecide };
const { NeoSet: OldNeoSet } = (await import(join(previous, 'shared/api/neoset.ts'))) as { NeoSet: { parse(x: unknown): unknown } };
const strip = (x: any) => {
  const { managedFields: _, ...metadata } = x.metadata;
  return { ...x, metadata };
};

try {
  await ready;
  say(`previous release ${PREVIOUS_RELEASE} running from ${previous}`);
  mkdirSync(args.out!, { recursive: true });
  const only = process.env.CAPTURE_ONLY?.split(',');
  for (const state of FIXTURE_STATES) {
    if (only && !only.includes(state)) continue;
    const started = Date.now();
    const s = await scene(state);
    await DRIVE[state](s);
    const o = await quiet(s);
    const capturedAt = new Date();
    await freeze(s);
    const objects = { neoset: strip(o.neoset), pods: o.pods.map(strip), revisions: o.revisions.map(strip), pvcs: o.pvcs.map(strip) };
    // The previous release's own decision of what it left, now and after each wake-up it asked for.
    const snapshot = { neoset: OldNeoSet.parse(objects.neoset), pods: objects.pods, revisions: objects.revisions, pvcs: objects.pvcs };
    const later = [0, 10_000, 3_600_000 + 60_000];
    const previousDecisions = later.map((afterMs) => {
      const plan = oldDecide(structuredClone(snapshot), new Date(capturedAt.getTime() + afterMs));
      return { afterMs, actions: plan.actions, status: plan.status, requeueAfter: plan.requeueAfter };
    });
    const file: FixtureFile = { state, commit: PREVIOUS_RELEASE, capturedAt: capturedAt.toISOString(), ...objects, previousDecisions };
    writeFileSync(join(args.out!, `${state}.json`), `${JSON.stringify(file, null, 1)}\n`);
    say(`${state}: phase ${o.neoset.status?.phase}, ${o.pods.length} pods, ${o.revisions.length} revisions, ${o.pvcs.length} PVCs; old decision now: ${previousDecisions[0].actions.length} actions (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
} finally {
  await stopAll();
}
