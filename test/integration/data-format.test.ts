// Rollbacks that know what the volumes hold (issue 22 §5, SPEC §4.7) on the real control plane: the
// controller (test/e2e/stack.ts) rolls a NeoSet from data format 2 to 3; the admission server runs
// from its real entry point as a child process, called by the API server through the manifest's
// webhook configurations; `kubectl neoset` is run by the real kubectl. An undo back to format 2 is
// refused with the formats and the pods named (plugin and plain kubectl alike), `--dry-run` says
// what would happen and that admission refuses it, `--accept-data-format-downgrade` lets it through
// with the acknowledgement recorded on the NeoSet, and the pods go back in place.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueServingCert } from '../../dev/cluster/certs.ts';
import { kubeconfigPath, kubectl as adminKubectl, run as runCommand } from '../cluster/harness.ts';
import { testWebhookConfigurations } from '../cluster/webhooks.ts';
import { startAdmissionProcess, webhookClientCaFile } from '../cluster/admission-process.ts';
import { applyNeoSet, identities, imageOf, patchNeoSet, settledOn, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';
import { CASE_ENV } from '../unit/admission-cases.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin');
const NAME = 'db';
const FORMAT = 'neo.io/data-format';
const ACK = 'neoset.neo.io/data-format-downgrade';

let stack: Stack;
let server: ChildProcess;
let dir: string;
let configName: string;
const logLines: string[] = [];

const neo = (...args: string[]) =>
  runCommand('kubectl', ['neoset', ...args, '-n', stack.namespace], { env: { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH}`, KUBECONFIG: kubeconfigPath() } });

const template = (image: string, format: string) => ({
  metadata: { labels: { app: NAME }, annotations: { [FORMAT]: format } },
  spec: { containers: [{ name: 'main', image, readinessProbe: { tcpSocket: { port: 3306 } } }] },
});

/** Every pod settled on the update revision, which is also the current one. */
const rolledOut = (what: string, from?: string) =>
  untilStatus(stack, NAME, what, (n, pods) => {
    const rev = n.status?.updateRevision;
    return rev !== undefined && rev !== from && n.status?.currentRevision === rev && pods.length === 3 && pods.every((p) => settledOn(p, rev));
  });

async function stored(): Promise<any> {
  const r = await stack.kubectl(['get', 'neoset', NAME, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

beforeAll(async () => {
  stack = await startStack({ prefix: 'data-format' });
  configName = `neoset-data-format-test-${stack.namespace}`;
  dir = await mkdtemp(path.join(tmpdir(), 'neoset-data-format-'));
  const ca = await createCa('neoset-data-format-test-ca');
  const serving = await issueServingCert(ca, ['127.0.0.1']);
  await writeFile(path.join(dir, 'tls.crt'), serving.certPem);
  await writeFile(path.join(dir, 'tls.key'), serving.keyPem, { mode: 0o600 });
  // With the API server's client CA: its reviews are told the pods and formats that ran (SPEC §2.5).
  const started = await startAdmissionProcess({ ...CASE_ENV, TLS_CERT_FILE: path.join(dir, 'tls.crt'), TLS_KEY_FILE: path.join(dir, 'tls.key'), TLS_CLIENT_CA_FILE: webhookClientCaFile() }, logLines);
  server = started.child;
  const port = started.port;
  const configs = await testWebhookConfigurations({ name: configName, baseUrl: `https://127.0.0.1:${port}`, caPem: ca.certPem, namespace: stack.namespace });
  const registered = await adminKubectl(['apply', '-f', '-'], { input: configs });
  expect(registered.code, registered.stderr).toBe(0);
  // The API server picks webhook configurations up asynchronously: wait until a malformed format is refused.
  const probe = neosetManifest({ name: 'probe', replicas: 0 });
  (probe.spec as any).template.metadata.annotations = { [FORMAT]: 'three' };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await stack.kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(probe));
    if (r.code !== 0 && r.stderr.includes(`annotations[${FORMAT}]`)) break;
    if (Date.now() > deadline) throw new Error(`webhooks not active after 30 s: ${r.stderr}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}, 120_000);

afterAll(async () => {
  await adminKubectl(['delete', 'mutatingwebhookconfiguration,validatingwebhookconfiguration', configName, '--ignore-not-found']);
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('rollbacks that know what the volumes hold (SPEC §4.7)', () => {
  let v2 = '';
  let ids: ReturnType<typeof identities> | undefined;

  it('rolls out format 2, then format 3; rollout history shows each revision\'s DATA-FORMAT', async () => {
    const manifest = neosetManifest({ name: NAME, replicas: 3, image: 'mysql:8.0' });
    (manifest.spec as any).template = template('mysql:8.0', '2');
    await applyNeoSet(stack, manifest);
    const v1 = (await rolledOut('format 2 rolled out')).status!.updateRevision!;
    await patchNeoSet(stack, NAME, { spec: { template: template('mysql:8.4', '3') } });
    v2 = (await rolledOut('format 3 rolled out', v1)).status!.updateRevision!;
    ids = identities(stack.observer.pods(NAME));

    const r = await neo('rollout', 'history', NAME);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[1].split(/\s+/)).toEqual(['REVISION', 'NAME', 'STATUS', 'IMAGES', 'DATA-FORMAT', 'CHANGE-CAUSE']);
    expect(lines[2]).toMatch(/^1 +db-[a-z0-9]+ +main=mysql:8\.0 +2 +<none>$/);
    expect(lines[3]).toMatch(/^2 +db-[a-z0-9]+ +current,update +main=mysql:8\.4 +3 +<none>$/);
  });

  it('rollout undo --dry-run: revision 1\'s template and images, the downgrade, the pods patched in place, and that admission refuses it; nothing written', async () => {
    const before = await stored();
    const r = await neo('rollout', 'undo', NAME, '--dry-run');
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.slice(0, 5)).toEqual([
      `error: neoset.neo.io/${NAME} rollback to revision 1 (server dry run):`,
      `  Template:     revision 1 (${lines[1].match(/\((db-[a-z0-9]+)\)/)?.[1]})`,
      '  Images:       main=mysql:8.0 (now main=mysql:8.4)',
      `  Data format:  "3" (pods db-0, db-1, db-2 ran (revision 2)) -> "2": a DOWNGRADE; their volumes are kept, not accepted (--accept-data-format-downgrade sets ${ACK}: "3->2")`,
      '  Pods:         db-2, db-1, db-0 patched in place from revision 2',
    ]);
    expect(lines[5]).toMatch(/^ {2}Admission: {4}would refuse it: admission webhook "validate\.neosets\.neo\.io" denied the request: spec\.template\.metadata\.annotations\[neo\.io\/data-format\]: "2" is lower than "3" that pods db-0, db-1, db-2 ran \(revision 2\)/);
    const after = await stored();
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('rollout undo is refused by admission naming both formats and the pods; so is the same template written by plain kubectl', async () => {
    const r = await neo('rollout', 'undo', NAME);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'admission webhook "validate.neosets.neo.io" denied the request: spec.template.metadata.annotations[neo.io/data-format]: "2" is lower than "3" that pods db-0, db-1, db-2 ran (revision 2); an in-place rollback keeps their volumes, which format 3 wrote and an older version may not read: set annotation neoset.neo.io/data-format-downgrade: "3->2" on the NeoSet to proceed (kubectl neoset rollout undo --accept-data-format-downgrade)',
    );
    const patch = JSON.stringify({ spec: { template: template('mysql:8.0', '2') } });
    const plain = await stack.kubectl(['patch', 'neoset', NAME, '--type=merge', '-p', patch]);
    expect(plain.code).not.toBe(0);
    expect(plain.stderr).toContain('"2" is lower than "3" that pods db-0, db-1, db-2 ran (revision 2)');
    // An acknowledgement of another downgrade is not this one.
    const other = await stack.kubectl(['patch', 'neoset', NAME, '--type=merge', '-p', JSON.stringify({ metadata: { annotations: { [ACK]: '4->2' } }, spec: { template: template('mysql:8.0', '2') } })]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain(`(${ACK} is "4->2", not this downgrade)`);
    // With this downgrade's acknowledgement kubectl passes (a server dry run here) and prints admission's warning.
    const acked = await stack.kubectl(['patch', 'neoset', NAME, '--dry-run=server', '--type=merge', '-p', JSON.stringify({ metadata: { annotations: { [ACK]: '3->2' } }, spec: { template: template('mysql:8.0', '2') } })]);
    expect(acked.code, acked.stderr).toBe(0);
    expect(acked.stderr).toContain(`Warning: data format downgrade 3->2 accepted (${ACK}): "3" is the format that pods db-0, db-1, db-2 ran (revision 2); their volumes are kept`);
    expect((await stored()).spec.template.metadata.annotations[FORMAT]).toBe('3');
    expect(stack.observer.pods(NAME).map(imageOf)).toEqual(['mysql:8.4', 'mysql:8.4', 'mysql:8.4']);
  });

  it('rollout undo --dry-run --accept-data-format-downgrade: admission would allow it', async () => {
    const r = await neo('rollout', 'undo', NAME, '--dry-run', '--accept-data-format-downgrade');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain(`a DOWNGRADE; their volumes are kept, accepted (annotation ${ACK}: "3->2")`);
    expect(r.stdout).toContain('  Admission:    would allow it\n');
    expect((await stored()).metadata.annotations?.[ACK]).toBeUndefined();
  });

  it('rollout undo --accept-data-format-downgrade rolls back with the acknowledgement recorded; the pods go back in place', async () => {
    const r = await neo('rollout', 'undo', NAME, '--accept-data-format-downgrade');
    expect(r.stdout).toBe(`neoset.neo.io/${NAME} rolled back to revision 1 (main=mysql:8.0), accepting data format downgrade 3->2 (annotation ${ACK})\n`);
    // Admission's warning, relayed by the API server's Warning header, on stderr as kubectl prints it.
    expect(r.stderr).toContain(`Warning: data format downgrade 3->2 accepted (${ACK}): "3" is the format that pods db-0, db-1, db-2 ran (revision 2); their volumes are kept\n`);
    expect(r.code).toBe(0);
    const n = await stored();
    expect(n.metadata.annotations[ACK]).toBe('3->2');
    expect(n.spec.template.metadata.annotations[FORMAT]).toBe('2');
    await rolledOut('rolled back to format 2', v2);
    expect(stack.observer.pods(NAME).map(imageOf)).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.0']);
    // In place: the same pods (uid, IP), not recreated.
    expect(identities(stack.observer.pods(NAME))).toEqual(ids);
    const history = await neo('rollout', 'history', NAME);
    expect(history.stdout).toMatch(/^2 +\S+ +main=mysql:8\.4 +3 /m);
    expect(history.stdout).toMatch(/^3 +\S+ +current,update +main=mysql:8\.0 +2 /m);
    // The admission server logged the accepted downgrade's warning with the write.
    const validated = logLines.filter((l) => l.includes('"webhook":"validate"') && l.includes(`"name":"${NAME}"`) && l.includes('"allowed":true'));
    expect(validated.some((l) => /"warnings":[1-9]/.test(l))).toBe(true);
  });
});
