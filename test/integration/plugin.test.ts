// `kubectl neoset` as users run it: the real kubectl finds bin/kubectl-neoset on PATH and runs it
// against the real control plane, with the controller functions running (test/e2e/stack.ts). The
// seeds' canary flow is done entirely with the plugin, and every output and exit code is asserted.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeConfig, kubeconfigPath, run as runCommand } from '../cluster/harness.ts';
import { createCa, issueServingCert } from '../../dev/cluster/certs.ts';
import { installCrds } from '../../dev/cluster/crd.ts';
import { startFunction, type RunningFunction } from '../../dev/functions.ts';
import { applyNeoSet, identities, imageOf, patchNeoSet, settledOn, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';
import { listRevisions, readNeoSet } from '../../bin/neoset/neosets.ts';
import { undoPatch } from '../../shared/core/revisions/rollback.ts';
import { promotePatch } from '../../shared/core/update/promotion.ts';
import { ATTEMPTS, writeNeoSet } from '../../bin/neoset/write.ts';
import { setPause } from '../../bin/neoset/commands/pause.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin');
const REPO_ROOT = path.resolve(import.meta.dirname, '../..');
const CHANGE_CAUSE = 'kubernetes.io/change-cause';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command with bin/ first on PATH and the test cluster's KUBECONFIG, as a user would. */
function run(command: string, args: string[]): Promise<Run> {
  return runCommand(command, args, { env: { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH}`, KUBECONFIG: kubeconfigPath() } });
}

const kubectl = (args: string[]) => run('kubectl', args);

/** kubectl on a terminal: util-linux script(1) runs it on a pseudo-terminal and copies its output. */
async function kubectlOnTerminal(args: string[]): Promise<Run> {
  const r = await run('script', ['-qec', ['kubectl', ...args].join(' '), '/dev/null']);
  return { ...r, stdout: r.stdout.replaceAll('\r\n', '\n') };
}

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);

describe('kubectl finds the plugin', () => {
  it('kubectl plugin list shows kubectl-neoset, executable and not shadowed', async () => {
    const r = await kubectl(['plugin', 'list']);
    expect(r.stdout).toContain(path.join(BIN, 'kubectl-neoset'));
    // kubectl warns on stderr about a plugin that is not executable or is overshadowed by another.
    expect(r.stderr).not.toMatch(/kubectl-neoset/);
  });

  it('kubectl neoset rollout status --help prints the help and exits 0', async () => {
    const r = await kubectl(['neoset', 'rollout', 'status', '--help']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^Show the status of the rollout\./);
    expect(r.stdout).toContain('--timeout=0s:');
    expect(r.stdout).toContain('Usage:\n  kubectl neoset rollout status NAME [options]');
  });

  it('a bad argument is exit 2 naming it; a missing NeoSet is exit 3', async () => {
    const bad = await kubectl(['neoset', 'rollout', 'status', 'mysql', '--timeout=soon']);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toBe(
      `error: invalid value "soon" for --timeout: a duration such as 30s, 5m or 1h30m (0 waits forever)\nSee 'kubectl neoset rollout status --help' for usage.\n`,
    );
    const missing = await kubectl(['neoset', 'rollout', 'history', 'nothing-here', '-n', 'default']);
    expect(missing).toEqual({ code: 3, stdout: '', stderr: 'error: neosets.neo.io "nothing-here" not found in namespace "default"\n' });
  });
});

describe("the seeds' canary flow, done with kubectl neoset", () => {
  const NAME = 'mysql';
  const GRACE_SECONDS = 6;
  const HELD_GRACE_SECONDS = 15;
  let stack: Stack;
  let neo: (...args: string[]) => Promise<Run>;
  let v1 = '';
  let v2 = '';
  const images = () => stack.observer.pods(NAME).map(imageOf);

  beforeAll(async () => {
    stack = await startStack({ prefix: 'plugin' });
    neo = (...args) => kubectl(['neoset', ...args, '-n', stack.namespace]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('rollout status: a new 5-replica NeoSet rolls out complete', async () => {
    // A grace period keeps each pod in its in-place update long enough to be seen there — by `get`
    // too, a process of its own that loads client-node: 1.5 s idle here, 2.7 s with a build running
    // (ci26: with 3 s it read '<none>').
    const manifest = neosetManifest({ name: NAME, replicas: 5, image: 'mysql:8.0', updateStrategy: { maxUnavailable: 2, inPlaceUpdateStrategy: { gracePeriodSeconds: GRACE_SECONDS } } });
    (manifest.metadata as Record<string, unknown>).annotations = { [CHANGE_CAUSE]: 'mysql 8.0' };
    await applyNeoSet(stack, manifest);
    const r = await neo('rollout', 'status', NAME, '--timeout=60s');
    const n = stack.observer.neoset(NAME)!;
    v1 = n.status!.updateRevision!;
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(lastLine(r.stdout)).toBe(`roll out complete: 5 pods at revision ${v1}...`);
  });

  it('rollout status --timeout exits 1 while a staged canary is paused', async () => {
    // The user stages 8.1 for the canary (partition 4 = only mysql-4), paused, with a change-cause.
    await patchNeoSet(stack, NAME, {
      metadata: { annotations: { [CHANGE_CAUSE]: 'canary of mysql 8.1' } },
      spec: {
        template: { spec: { containers: [{ name: 'main', image: 'mysql:8.1', readinessProbe: { tcpSocket: { port: 3306 } } }] } },
        updateStrategy: { partition: 4, pause: true },
      },
    });
    const r = await neo('rollout', 'status', NAME, '--timeout=3s');
    expect(r.code).toBe(1);
    expect(lastLine(r.stdout)).toBe('Waiting for partitioned roll out to finish (paused): 0 out of 1 new pods have been updated...');
    expect(r.stderr).toBe(
      `error: timed out after 3s waiting for neoset.neo.io/${NAME} to roll out: Waiting for partitioned roll out to finish (paused): 0 out of 1 new pods have been updated...\n`,
    );
    expect(images()).toEqual(Array(5).fill('mysql:8.0'));
  });

  it('rollout resume starts the canary: only mysql-4 is updated, in place', async () => {
    const ids = identities(stack.observer.pods(NAME));
    expect(await neo('rollout', 'resume', NAME)).toEqual({ code: 0, stdout: `neoset.neo.io/${NAME} resumed\n`, stderr: '' });
    const r = await neo('rollout', 'status', NAME, '--timeout=60s');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(lastLine(r.stdout)).toBe('partitioned roll out complete: 1 new pods have been updated...');
    expect(images()).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.0', 'mysql:8.0', 'mysql:8.1']);
    expect(identities(stack.observer.pods(NAME))).toEqual(ids);
    v2 = stack.observer.neoset(NAME)!.status!.updateRevision!;
  });

  it('rollout pause holds the canary for observation; pausing twice says so', async () => {
    expect(await neo('rollout', 'pause', NAME)).toEqual({ code: 0, stdout: `neoset.neo.io/${NAME} paused\n`, stderr: '' });
    expect(await neo('rollout', 'pause', NAME)).toEqual({ code: 0, stdout: `neoset.neo.io/${NAME} is already paused\n`, stderr: '' });
    await untilStatus(stack, NAME, 'phase Paused', (n) => n.status?.phase === 'Paused');
    const r = await neo('get', NAME);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [header, row] = r.stdout.trimEnd().split('\n');
    expect(header.split(/\s+/)).toEqual(['NAME', 'REPLICAS', 'READY', 'UPDATED', 'PHASE', 'CURRENT', 'TARGET', 'AGE', 'UPDATING']);
    expect(row.split(/\s+/)).toEqual([NAME, '5', '5', '1', 'Paused', 'mysql:8.0', 'mysql:8.1', expect.stringMatching(/^\d+s$/), '<none>']);
  });

  it('rollout promote: the next batch (partition 4 -> 2 with maxUnavailable 2) and resume; get and the live display show it', async () => {
    // The live display is a process of its own that loads client-node before its first frame: with a
    // 6 s grace period, CI under load (ci36) saw the batch done before that frame — one frame, no
    // redraw. This batch is held longer; the grace period is set back for the steps after it.
    await patchNeoSet(stack, NAME, { spec: { updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: HELD_GRACE_SECONDS } } } });
    expect(await neo('rollout', 'promote', NAME)).toEqual({ code: 0, stdout: `neoset.neo.io/${NAME} promoted: partition 4 -> 2, resumed\n`, stderr: '' });
    const live = kubectlOnTerminal(['neoset', 'rollout', 'status', NAME, '-n', stack.namespace, '--timeout=60s']);
    await untilStatus(stack, NAME, 'a batch in flight', (n) => (n.status?.currentUpdatePods?.length ?? 0) > 0);
    const get = await neo('get', NAME);
    expect(get.stdout.trimEnd().split('\n')[1].split(/\s+/).at(-1)).toMatch(/^mysql-[23](,mysql-[23])?$/);
    const r = await live;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('\x1b[5A'); // the display was redrawn in place: cursor up over its 5 lines
    expect(r.stdout).toMatch(/ {2}updating {2}mysql-[23]/);
    expect(r.stdout).toMatch(/\n {2}updated {3}\[#+-*\] 3\/5 {2}\(partition 2: 3 to update\)\n/);
    expect(lastLine(r.stdout)).toBe('partitioned roll out complete: 3 new pods have been updated...');
    expect(stack.observer.neoset(NAME)!.spec.updateStrategy).toMatchObject({ partition: 2, pause: false });
    expect(images()).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.1', 'mysql:8.1', 'mysql:8.1']);
    await patchNeoSet(stack, NAME, { spec: { updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: GRACE_SECONDS } } } });
  });

  it('rollout pause and resume', async () => {
    expect((await neo('rollout', 'pause', NAME)).stdout).toBe(`neoset.neo.io/${NAME} paused\n`);
    await untilStatus(stack, NAME, 'paused observed', (n) => n.spec.updateStrategy.pause);
    expect((await neo('rollout', 'resume', NAME)).stdout).toBe(`neoset.neo.io/${NAME} resumed\n`);
    expect(await neo('rollout', 'resume', NAME)).toEqual({ code: 0, stdout: `neoset.neo.io/${NAME} is not paused\n`, stderr: '' });
    await untilStatus(stack, NAME, 'resumed, Canary', (n) => !n.spec.updateStrategy.pause && n.status?.phase === 'Canary');
  });

  it('rollout promote --full finishes the rollout', async () => {
    expect(await neo('rollout', 'promote', NAME, '--full')).toEqual({ code: 0, stdout: `neoset.neo.io/${NAME} promoted: partition 2 -> 0\n`, stderr: '' });
    const r = await neo('rollout', 'status', NAME, '--timeout=60s');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(lastLine(r.stdout)).toBe(`roll out complete: 5 pods at revision ${v2}...`);
    expect(images()).toEqual(Array(5).fill('mysql:8.1'));
    expect(await neo('rollout', 'promote', NAME)).toEqual({ code: 0, stdout: `neoset.neo.io/${NAME} is already fully promoted (partition 0, not paused)\n`, stderr: '' });
  });

  /** `rollout history` as rows of cells (columns are separated by at least 2 spaces; STATUS may be empty). */
  async function historyRows(): Promise<string[][]> {
    const r = await neo('rollout', 'history', NAME);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`neoset.neo.io/${NAME}`);
    expect(lines[1].split(/\s+/)).toEqual(['REVISION', 'NAME', 'STATUS', 'IMAGES', 'DATA-FORMAT', 'CHANGE-CAUSE']);
    return lines.slice(2).map((l) => l.split(/\s{2,}/));
  }

  it('rollout history lists both revisions with their images, and which is current and which the update revision', async () => {
    const rows = await historyRows();
    // No neo.io/data-format on these templates: the column says so (README "Rollback and data formats").
    expect(rows.map((r) => r.slice(0, -1))).toEqual([
      ['1', v1, 'main=mysql:8.0', '<none>'],
      ['2', v2, 'current,update', 'main=mysql:8.1', '<none>'],
    ]);
    const one = await neo('rollout', 'history', NAME, '--revision=1');
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(new RegExp(`^neoset.neo.io/${NAME} with revision #1\\nName: +${v1}\\nImages: +main=mysql:8.0\\nData format: +<none>\\nChange-cause: .*\\nPod Template:\\n`));
    // The stored template has its keys sorted (revisions.ts: kube-apiserver compares it byte for byte).
    expect(one.stdout).toContain('      - image: mysql:8.0\n        name: main\n');
    const none = await neo('rollout', 'history', NAME, '--revision=7');
    expect(none).toEqual({ code: 3, stdout: '', stderr: `error: revision 7 not found for neoset.neo.io/${NAME} (revisions: 1, 2)\n` });
  });

  it("rollout history shows each revision's change-cause, copied from the NeoSet's annotation when the revision was created", async () => {
    expect((await historyRows()).map((r) => r.at(-1))).toEqual(['mysql 8.0', 'canary of mysql 8.1']);
  });

  it('rollout undo --to-revision=1 brings every pod back to 8.0 in place; undoing again says it is already there', async () => {
    const ids = identities(stack.observer.pods(NAME));
    const cause = (await historyRows())[0].at(-1);
    expect(await neo('rollout', 'undo', NAME, '--to-revision=1')).toEqual({ code: 0, stdout: `neoset.neo.io/${NAME} rolled back to revision 1 (main=mysql:8.0)\n`, stderr: '' });
    const r = await neo('rollout', 'status', NAME, '--timeout=60s');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(lastLine(r.stdout)).toBe(`roll out complete: 5 pods at revision ${v1}...`);
    expect(images()).toEqual(Array(5).fill('mysql:8.0'));
    expect(stack.observer.pods(NAME).every((p) => settledOn(p, v1))).toBe(true);
    expect(identities(stack.observer.pods(NAME))).toEqual(ids);
    // As `kubectl rollout undo` does for a Deployment, the NeoSet takes the revision's change-cause.
    expect(stack.observer.neoset(NAME)!.metadata.annotations?.[CHANGE_CAUSE]).toBe(cause === '<none>' ? undefined : cause);

    // The controller renumbered revision 1 to 3: it is the current one and undo has nothing to do.
    expect((await historyRows()).map((r) => r.slice(0, -1))).toEqual([
      ['2', v2, 'main=mysql:8.1', '<none>'],
      ['3', v1, 'current,update', 'main=mysql:8.0', '<none>'],
    ]);
    expect(await neo('rollout', 'undo', NAME, '--to-revision=3')).toEqual({
      code: 0,
      stdout: `neoset.neo.io/${NAME} skipped rollback (current template already matches revision 3)\n`,
      stderr: '',
    });
  });

  it('a write computed from a stale read is refused by the API server: nothing changes, and the message says so', async () => {
    const stale = await readNeoSet(stack.client, stack.namespace, NAME);
    const revisions = await listRevisions(stack.client, stale);
    await patchNeoSet(stack, NAME, { metadata: { labels: { touched: 'by-someone-else' } } });
    const message = `neoset.neo.io/${NAME} was changed by someone else while this command ran; nothing was written: run it again`;
    await expect(writeNeoSet(stack.client, stale, { patch: 'json', body: undoPatch(stale, revisions[0]) })).rejects.toThrow(message);
    await expect(writeNeoSet(stack.client, stale, { patch: 'merge', body: promotePatch(stale, { from: 0, to: 0, resumes: true }) })).rejects.toThrow(message);
  });

  it("pause decides again when someone else's write lands between its read and its write — the controller's, mid-rollout — and still stops on a change to what it decided on", async () => {
    const OTHER = 'interleaved';
    await applyNeoSet(stack, neosetManifest({ name: OTHER, replicas: 1, image: 'mysql:8.0' }));
    // The client the command uses, with someone else's write put before each of its first `times` PATCHes.
    const interleaved = (before: () => Promise<unknown>, times: number): KubeClient => ({
      async request(verb, p, opts) {
        if (verb === 'PATCH' && times-- > 0) await before();
        return stack.client.request(verb, p, opts);
      },
    });
    const labelled = (i: number) => () => patchNeoSet(stack, OTHER, { metadata: { labels: { touched: `by-someone-else-${i}` } } });
    let n = 0;
    expect(await setPause({ client: interleaved(() => labelled(n++)(), 1), namespace: stack.namespace }, OTHER, true)).toBe(`neoset.neo.io/${OTHER} paused`);
    expect((await readNeoSet(stack.client, stack.namespace, OTHER)).spec.updateStrategy.pause).toBe(true);
    // Someone else's write before every attempt: it gives up after ATTEMPTS and says so, nothing written.
    const message = `neoset.neo.io/${OTHER} was changed by someone else while this command ran; nothing was written: run it again`;
    await expect(setPause({ client: interleaved(() => labelled(n++)(), ATTEMPTS), namespace: stack.namespace }, OTHER, false)).rejects.toThrow(message);
    expect((await readNeoSet(stack.client, stack.namespace, OTHER)).spec.updateStrategy.pause).toBe(true);
    // What pause decided on changed in between (someone else resumed): it stops at once.
    const resumedBySomeoneElse = () => patchNeoSet(stack, OTHER, { spec: { updateStrategy: { pause: false } } });
    const attempts: string[] = [];
    const once = interleaved(resumedBySomeoneElse, 1);
    const counting: KubeClient = { request: (verb, p, opts) => (verb === 'PATCH' && attempts.push(p), once.request(verb, p, opts)) };
    await expect(setPause({ client: counting, namespace: stack.namespace }, OTHER, false)).rejects.toThrow(message);
    expect(attempts).toHaveLength(1);
    expect((await readNeoSet(stack.client, stack.namespace, OTHER)).spec.updateStrategy.pause).toBe(false);
    await stack.client.request('DELETE', paths.neoset(stack.namespace, OTHER));
  });

  it('no invariant was violated in any observed state', () => {
    expect(stack.observer.violations).toEqual([]);
  });
});

describe('rollout status on a failed rollout', () => {
  const NAME = 'broken';
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ prefix: 'plugin-failed' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('exits 1 and prints the reason', async () => {
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3, image: 'mysql:8.0', updateStrategy: { inPlaceUpdateStrategy: { timeoutSeconds: 3 } } }));
    await untilStatus(stack, NAME, '3 ready pods', (n) => n.status?.readyReplicas === 3);
    await patchNeoSet(stack, NAME, { spec: { template: { spec: { containers: [{ name: 'main', image: 'mysql:8.1-crashloop', readinessProbe: { tcpSocket: { port: 3306 } } }] } } } });
    const r = await kubectl(['neoset', 'rollout', 'status', NAME, '-n', stack.namespace, '--timeout=60s']);
    const n = stack.observer.neoset(NAME)!;
    const progressing = n.status?.conditions?.find((c) => c.type === 'Progressing');
    expect(n.status?.phase).toBe('Failed');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: neoset.neo.io/${NAME} rollout failed: ${progressing?.reason}: ${progressing?.message}\n`);
    expect(progressing?.reason).toBe('ProgressDeadlineExceeded');
  });
});

describe('kubectl neoset version: the plugin and the functions', () => {
  const VERSION = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const SYSTEM = 'neoset-system';
  let dir: string;
  const functions: RunningFunction[] = [];
  let createdSystem = false;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'neoset-version-'));
    const ca = await createCa();
    const cert = await issueServingCert(ca);
    const write = (name: string, pem: string) => (writeFileSync(path.join(dir, name), pem, { mode: 0o600 }), path.join(dir, name));
    const tls = { certFile: write('tls.crt', cert.certPem), keyFile: write('tls.key', cert.keyPem), caPem: ca.certPem };
    // The dev stack's functions: processes from source on local ports (dev/functions.ts, as npm run dev starts them).
    for (const name of ['reconcile', 'readiness', 'admission'] as const) {
      functions.push(await startFunction({ name, port: 0, kubeconfig: kubeconfigPath(), logPath: path.join(dir, `${name}.log`), ...(name === 'admission' ? { tls } : {}) }));
    }
    // An install from knative/ as far as a control plane without Knative Serving's controllers takes
    // it: the Knative Service CRD (test/fixtures), the ksvc neoset-reconcile and the admission
    // Deployment (0 replicas: nothing runs them) and Service, each as the manifest writes it.
    await installCrds(kubeConfig(), path.join(REPO_ROOT, 'test/fixtures/knative-crds/serving-service.yaml'), { timeoutMs: 60_000 });
    createdSystem = (await kubectl(['get', 'namespace', SYSTEM])).code !== 0;
    if (createdSystem) expect((await kubectl(['create', 'namespace', SYSTEM])).code).toBe(0);
    const docs = ['reconcile.yaml', 'admission.yaml', 'admission-webhooks.yaml'].flatMap((f) => parseAllDocuments(readFileSync(path.join(REPO_ROOT, 'knative', f), 'utf8')).map((d) => d.toJS()));
    const pick = (kind: string, name: string) => docs.find((d) => d?.kind === kind && d.metadata.name === name);
    const admission = { ...pick('Deployment', 'neoset-admission'), spec: { ...pick('Deployment', 'neoset-admission').spec, replicas: 0 } };
    const applied = await runCommand('kubectl', ['apply', '-f', '-'], {
      env: { ...process.env, KUBECONFIG: kubeconfigPath() },
      input: [pick('Service', 'neoset-reconcile'), admission, pick('Service', 'neoset-admission')].map((d) => stringify(d)).join('---\n'),
    });
    expect(applied.code, applied.stderr).toBe(0);
  }, 180_000);
  afterAll(async () => {
    for (const f of functions) await f.process.stop();
    await kubectl(['-n', SYSTEM, 'delete', 'services.serving.knative.dev/neoset-reconcile', 'deployment/neoset-admission', 'service/neoset-admission', '--ignore-not-found', '--wait=false']);
    // Waited for: a later file applies knative/'s identities into neoset-system, refused while it terminates.
    if (createdSystem) await kubectl(['delete', 'namespace', SYSTEM, '--ignore-not-found', '--wait=true', '--timeout=120s']);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('--client prints the plugin version only', async () => {
    expect(await kubectl(['neoset', 'version', '--client'])).toEqual({ code: 0, stdout: `Plugin version: ${VERSION}\n`, stderr: '' });
  });

  it("on the dev stack (--function-url): every function's /healthz names the version", async () => {
    const urls = functions.flatMap((f) => ['--function-url', `${f.name}=${f.url}`]);
    const r = await kubectl(['neoset', 'version', ...urls]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(`Plugin version: ${VERSION}`);
    expect(lines[1]).toMatch(/^FUNCTION\s+VERSION\s+FROM$/);
    for (const [i, f] of functions.entries()) expect(lines[2 + i]).toMatch(new RegExp(`^${f.name}\\s+${VERSION.replaceAll('.', '\\.')}\\s+GET ${f.url}/healthz$`));
    process.stdout.write(`kubectl neoset version on the dev stack's functions:\n${r.stdout}`);
  });

  it('in the cluster: the ksvc\'s image tag, admission\'s Deployment tag when its service proxy has no endpoint, and "unreachable" with why for what is not installed; exit 0', async () => {
    const r = await kubectl(['neoset', 'version']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    process.stdout.write(`kubectl neoset version in the cluster:\n${r.stdout}`);
    const row = (fn: string) => r.stdout.split('\n').find((l) => l.startsWith(`${fn} `))!.split(/\s{3,}/);
    expect(row('reconcile')).toEqual(['reconcile', VERSION, `image tag of ksvc ${SYSTEM}/neoset-reconcile (no ready revision)`]);
    expect(row('readiness')[1]).toBe('unreachable');
    expect(row('readiness')[2]).toBe(`no ksvc or deployment ${SYSTEM}/neoset-readiness (not installed, or run elsewhere, as by npm run dev -- --bridge: pass --function-url)`);
    expect(row('admission')[1]).toBe(VERSION);
    expect(row('admission')[2]).toMatch(/^image tag of deployment neoset-system\/neoset-admission \(service proxy: Error from server \(ServiceUnavailable\): .*\)$/);
  });

  it('an API server that cannot be reached is exit 3, after the plugin version', async () => {
    const kubeconfig = path.join(dir, 'nowhere.kubeconfig');
    writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n');
    const r = await kubectl(['neoset', 'version', '--kubeconfig', kubeconfig]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe(`Plugin version: ${VERSION}\n`);
    expect(r.stderr).toMatch(/^error: cannot reach the API server: .*ECONNREFUSED/);
  });
});
