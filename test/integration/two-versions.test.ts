// Two versions deciding together (issue 22 §2): under Knative a new revision of a function receives
// traffic beside the old one for a while. One instance of each function of the previous release
// (028831f, v0.2: its own tree and node_modules, prepared from the git object by
// test/compat/previous-release.ts, run as processes with this checkout's Node) beside this release's
// reconcile and readiness (in-process, test/e2e/stack.ts) and admission (a process): the same events
// go to both versions (two event pumps watching the namespace, as two Triggers would), every NeoSet
// write goes through both admission servers (two webhook configurations), through a canary rollout
// with its pause and a promote, a rollback (`kubectl neoset rollout undo`) and a scale up and down.
// The invariant checker looks at every observed state (SPEC §7): none violated, every step completes.
// Skipped, saying so, when the clone has no history (a shallow clone cannot make the old tree).
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path, { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueServingCert } from '../../dev/cluster/certs.ts';
import { startPump, type Pump } from '../../dev/bridge/pump.ts';
import { kubeconfigPath, kubectl, run } from '../cluster/harness.ts';
import { startAdmissionProcess } from '../cluster/admission-process.ts';
import { testWebhookConfigurations } from '../cluster/webhooks.ts';
import { applyNeoSet, imageOf, patchNeoSet, setImage, settledOn, untilStatus } from '../e2e/helpers.ts';
import type { NeoSetObject } from '../e2e/observer.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';
import { templateHash } from '../../shared/core/revisions/hash.ts';
import { reviewsLogged, startPreviousFunction, writesLogged, type PreviousFunction } from '../compat/previous-functions.ts';
import { PREVIOUS_RELEASE, preparePreviousRelease } from '../compat/previous-release.ts';

const NAME = 'db';
const BIN = path.resolve(import.meta.dirname, '../../bin');
const STEPS = [{ partition: 3 }, { pause: {} }, { partition: 0 }];

function historyHas(commit: string): boolean {
  try {
    execFileSync('git', ['-C', import.meta.dirname, 'cat-file', '-e', `${commit}^{commit}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const available = historyHas(PREVIOUS_RELEASE);
if (!available) console.warn(`[two-versions] skipped: commit ${PREVIOUS_RELEASE.slice(0, 7)} (the previous release) is not in this clone's history — a shallow clone? 'git fetch --unshallow' runs it`);

const neo = (stack: Stack, args: string[]) =>
  run('kubectl', ['neoset', ...args, '-n', stack.namespace], { env: { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH}`, KUBECONFIG: kubeconfigPath() } });
const canaryOf = (n: NeoSetObject) => (n.status?.canary?.revision === n.status?.updateRevision ? n.status?.canary : undefined);
const completedOn = (image: string, replicas: number) => (n: NeoSetObject, pods: { metadata: { name: string } }[]) =>
  n.status?.phase === 'Completed' && n.status?.currentRevision === n.status?.updateRevision && n.status?.readyReplicas === replicas && n.status?.currentImage === image && pods.length === replicas;

describe.skipIf(!available)(`two versions deciding together: ${PREVIOUS_RELEASE.slice(0, 7)} (v0.2) beside this release`, () => {
  let stack: Stack;
  let oldPump: Pump;
  const old: Partial<Record<'reconcile' | 'readiness' | 'admission', PreviousFunction>> = {};
  let newAdmission: { child: import('node:child_process').ChildProcess } | undefined;
  let dir = '';
  let previous = '';
  const configs: string[] = [];

  beforeAll(async () => {
    const started = Date.now();
    previous = await preparePreviousRelease((line) => console.log(`[two-versions] ${line}`));
    console.log(`[two-versions] previous release in ${previous} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    stack = await startStack({ prefix: 'two-versions', reconcileInstances: 1, readinessInstances: 1, copies: 1, shuffleWindowMs: 40 });
    const env = { KUBECONFIG: kubeconfigPath() };
    [old.reconcile, old.readiness] = await Promise.all([startPreviousFunction(previous, 'reconcile', env), startPreviousFunction(previous, 'readiness', env)]);
    // The same events, to the previous release's instances: a second pump on the namespace.
    oldPump = startPump({
      kubeConfig: stack.kc,
      namespace: stack.namespace,
      sinks: [
        { target: `${old.reconcile.url}/`, kinds: ['NeoSet', 'Pod', 'ping'] },
        { target: `${old.readiness.url}/`, kinds: ['Pod'] },
      ],
      copies: 1,
      shuffleWindowMs: 40,
      resyncMs: 1000,
    });
    await oldPump.ready;

    // Both admission servers judge every NeoSet write of the namespace.
    dir = await mkdtemp(join(tmpdir(), 'neoset-two-versions-'));
    const ca = await createCa('neoset-two-versions-ca');
    const serving = await issueServingCert(ca, ['127.0.0.1']);
    const tls = { TLS_CERT_FILE: join(dir, 'tls.crt'), TLS_KEY_FILE: join(dir, 'tls.key') };
    await writeFile(tls.TLS_CERT_FILE, serving.certPem);
    await writeFile(tls.TLS_KEY_FILE, serving.keyPem, { mode: 0o600 });
    old.admission = await startPreviousFunction(previous, 'admission', { ...env, ...tls });
    const fresh = await startAdmissionProcess(tls, []);
    newAdmission = fresh;
    for (const [version, baseUrl] of [
      ['v02', old.admission.url],
      ['new', `https://127.0.0.1:${fresh.port}`],
    ] as const) {
      const name = `two-versions-${version}-${stack.namespace}`;
      configs.push(name);
      const registered = await kubectl(['apply', '-f', '-'], { input: await testWebhookConfigurations({ name, baseUrl, caPem: ca.certPem, namespace: stack.namespace }) });
      expect(registered.code, registered.stderr).toBe(0);
    }
    // The API server picks the configurations up asynchronously: wait until both answered a dry-run.
    const deadline = Date.now() + 30_000;
    while (reviewsLogged(old.admission) === 0) {
      if (Date.now() > deadline) throw new Error('the previous release\'s admission webhook was never called');
      await stack.kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(neosetManifest({ name: 'probe', replicas: 1 })));
      await new Promise((r) => setTimeout(r, 250));
    }
  }, 600_000);

  afterAll(async () => {
    if (configs.length) await kubectl(['delete', 'mutatingwebhookconfiguration,validatingwebhookconfiguration', ...configs, '--ignore-not-found']);
    await oldPump?.stop();
    await Promise.all(Object.values(old).map((fn) => fn.stop()));
    newAdmission?.child.kill('SIGTERM');
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a 5-replica NeoSet with canary steps on 8.0 becomes 5 Ready pods', async () => {
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 5, image: 'mysql:8.0', updateStrategy: { canary: { steps: STEPS } } }));
    await untilStatus(stack, NAME, '5 ready on 8.0', completedOrIdle('mysql:8.0', 5));
  });

  it('8.1: the canary stops at its pause with pods 3 and 4 updated, the others untouched', async () => {
    await setImage(stack, NAME, 'mysql:8.1');
    const n = await untilStatus(stack, NAME, 'paused at step 2/3', (n, pods) => canaryOf(n)?.stepIndex === 1 && pods.slice(3).every((p) => settledOn(p, n.status?.updateRevision)) && n.status?.readyReplicas === 5);
    expect(n.status?.updatedReplicas).toBe(2);
    expect(stack.observer.pods(NAME).slice(0, 3).map(imageOf)).toEqual(Array(3).fill('mysql:8.0'));
  });

  it('promote: the rollout completes on 8.1', async () => {
    const promoted = await neo(stack, ['rollout', 'promote', NAME]);
    expect(promoted.code, promoted.stderr).toBe(0);
    await untilStatus(stack, NAME, 'completed on 8.1', completedOn('mysql:8.1', 5), 90_000);
    expect(stack.observer.pods(NAME).map(imageOf)).toEqual(Array(5).fill('mysql:8.1'));
  });

  it('rollout undo: back to 8.0 through the steps (promote --full), revision 1 reused', async () => {
    const before = stack.observer.neoset(NAME)!;
    const undone = await neo(stack, ['rollout', 'undo', NAME]);
    expect(undone.code, undone.stderr).toBe(0);
    await untilStatus(stack, NAME, 'the undo at its pause', (n) => n.status?.updateRevision !== before.status?.updateRevision && canaryOf(n)?.stepIndex === 1);
    const promoted = await neo(stack, ['rollout', 'promote', NAME, '--full']);
    expect(promoted.code, promoted.stderr).toBe(0);
    const n = await untilStatus(stack, NAME, 'completed on 8.0', completedOn('mysql:8.0', 5), 90_000);
    const revisions = JSON.parse((await stack.kubectl(['get', 'controllerrevisions', '-o', 'json'])).stdout).items;
    expect(revisions).toHaveLength(2); // one revision per template, whichever version made it
    expect(revisions.find((r: { metadata: { name: string } }) => r.metadata.name === n.status?.updateRevision)?.revision).toBe(3);
  });

  it('scale to 7, then to 3', async () => {
    await patchNeoSet(stack, NAME, { spec: { replicas: 7 } });
    await untilStatus(stack, NAME, '7 ready', completedOrIdle('mysql:8.0', 7), 90_000);
    await patchNeoSet(stack, NAME, { spec: { replicas: 3 } });
    await untilStatus(stack, NAME, '3 ready', completedOrIdle('mysql:8.0', 3), 90_000);
  });

  /** This release's writes by verb and resource, and v0.2's functions' writes. */
  async function writes() {
    const { apiRequests } = await import('../../shared/metrics/registry.ts');
    // One read of the counters: the total is their sum, so the two always agree.
    const byKind: Record<string, number> = {};
    for (const v of (await apiRequests.get()).values) {
      if (v.labels.verb === 'get') continue;
      const kind = `${v.labels.verb} ${v.labels.resource}`;
      byKind[kind] = (byKind[kind] ?? 0) + v.value;
    }
    const thisRelease = Object.values(byKind).reduce((sum, n) => sum + n, 0);
    return { byKind, thisRelease, v02: writesLogged(old.reconcile!) + writesLogged(old.readiness!) };
  }
  const since = (before: Awaited<ReturnType<typeof writes>>, after: Awaited<ReturnType<typeof writes>>) => ({
    thisRelease: after.thisRelease - before.thisRelease,
    v02: after.v02 - before.v02,
    kinds: Object.entries(after.byKind).filter(([k, n]) => n !== (before.byKind[k] ?? 0)).map(([k, n]) => `${k} +${n - (before.byKind[k] ?? 0)}`),
  });

  /**
   * Both versions' writes over 6 s (six resync ticks, each decided by each version), from the first
   * quiet 2 s on: a status the two versions fight over is rewritten every tick and is never quiet,
   * while the last settling write of a rollout (a claim bound, a condition's transition) may land
   * just after the status the test waited for.
   */
  async function writesWhileSettled() {
    const quietBy = Date.now() + 30_000;
    let before = await writes();
    for (;;) {
      await new Promise((r) => setTimeout(r, 2000));
      const now = await writes();
      const d = since(before, now);
      before = now;
      if (d.thisRelease === 0 && d.v02 === 0) break;
      console.log(`[two-versions] still settling: this release ${d.thisRelease} (${d.kinds.join(', ')}), v0.2 ${d.v02}`);
      if (Date.now() > quietBy) break;
    }
    await new Promise((r) => setTimeout(r, 6000));
    const d = since(before, await writes());
    if (d.thisRelease || d.v02) console.log(`[two-versions] writes while settled: ${d.kinds.join(', ')}; v0.2 ${d.v02}`);
    return { thisRelease: d.thisRelease, v02: d.v02 };
  }

  it('settled, both versions deciding every resync tick write nothing: neither undoes the other (6 s)', async () => {
    expect(await writesWhileSettled()).toEqual({ thisRelease: 0, v02: 0 });
  });

  it('a NeoSet with a claim template, settled: both versions write nothing either (6 s)', async () => {
    // A status field only one version writes is rewritten by each after the other: a status write
    // every tick by each, and a user's conditional status write (rollout promote) loses the race.
    // conditions[ClaimsResized] (issue 23 §3) was one until it was written only from the first claim
    // short of its request on (v0.2 keeps only its own conditions).
    const volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];
    await applyNeoSet(stack, neosetManifest({ name: 'claims', replicas: 2, image: 'mysql:8.0', spec: { volumeClaimTemplates } }));
    await untilStatus(stack, 'claims', '2 ready', completedOrIdle('mysql:8.0', 2));
    expect(await writesWhileSettled()).toEqual({ thisRelease: 0, v02: 0 });
  });

  it('every revision is named alike by both versions: one new template is one revision, whichever decides it first', async () => {
    // A name that differs between the versions is a second revision of one template when both
    // decide it before either has created it — the rollout then renumbers and restarts pods.
    const { templateHash: previousHash } = (await import(join(previous, 'shared/core/revisions/hash.ts'))) as { templateHash: typeof templateHash };
    const n = stack.observer.neoset(NAME)!;
    const revisions = JSON.parse((await stack.kubectl(['get', 'controllerrevisions', '-l', `neoset.neo.io/name=${NAME}`, '-o', 'json'])).stdout).items as { metadata: { name: string }; data: { spec: { template: unknown } } }[];
    for (const r of revisions) {
      const collisionCount = n.status?.collisionCount ?? 0;
      expect([`${NAME}-${templateHash(r.data.spec.template, collisionCount)}`, `${NAME}-${previousHash(r.data.spec.template, collisionCount)}`]).toEqual([r.metadata.name, r.metadata.name]);
    }
  });

  it('both versions took part: the previous release\'s functions wrote and admitted', () => {
    const writes = { reconcile: writesLogged(old.reconcile!), readiness: writesLogged(old.readiness!) };
    const admissions = reviewsLogged(old.admission!);
    console.log(`[two-versions] v0.2 reconcile wrote ${writes.reconcile}, readiness ${writes.readiness}; v0.2 admission answered ${admissions} reviews`);
    expect(writes.reconcile).toBeGreaterThan(0);
    expect(admissions).toBeGreaterThan(1);
    for (const fn of Object.values(old)) expect(fn.child.exitCode, `${fn.name} still running`).toBeNull();
  });

  it('no invariant was violated in any observed state', () => {
    console.log(`[two-versions] ${stack.observer.checks} observed states checked, ${stack.observer.violations.length} violations`);
    expect(stack.observer.checks).toBeGreaterThan(20);
    expect(stack.observer.violations).toEqual([]);
  });
});

/** Every pod Ready on `image` and nothing rolling (Idle before any rollout, Completed after one). */
function completedOrIdle(image: string, replicas: number) {
  return (n: NeoSetObject, pods: { metadata: { name: string } }[]) =>
    (n.status?.phase === 'Completed' || n.status?.phase === 'Idle') &&
    n.status?.readyReplicas === replicas &&
    n.status?.currentImage === image &&
    pods.length === replicas &&
    n.status?.observedGeneration === n.metadata.generation &&
    // Settled: the pods counted available too (the Available condition follows readyReplicas by a write).
    n.status?.availableReplicas === replicas &&
    n.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') === true;
}
