// knative/user-roles.yaml on the real API server: each ClusterRole bound (RoleBinding) to a
// ServiceAccount of a test namespace, then `kubectl auth can-i` for what the plugin's commands
// request (bin/neoset), and the plugin itself run with each one's token: a viewer reads but cannot
// pause, a rollout operator pauses, resumes, promotes and undoes but cannot create or delete NeoSets
// (nor pods), an editor may do all of it to NeoSets and still create no pod directly.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlApply, kustomize } from '../../dev/manifests.ts';
import { API_VERSION, KIND, LABEL_NEOSET_NAME } from '../../shared/api/names.ts';
import { createTestNamespace, kubeConfig, kubeconfigPath, kubectl, run, type TestNamespace } from '../cluster/harness.ts';
import { neosetManifest } from '../e2e/stack.ts';

const PLUGIN = path.resolve(import.meta.dirname, '../../bin/kubectl-neoset');
const ROLES = { viewer: 'neoset-view', operator: 'neoset-rollout-operator', editor: 'neoset-edit' } as const;
type Person = keyof typeof ROLES;
const NAME = 'roles';

let ns: TestNamespace;
let dir: string;
const user = (person: Person) => `system:serviceaccount:${ns.name}:${person}`;
const kubeconfigs = {} as Record<Person, string>;

beforeAll(async () => {
  const roles = kustomize().filter((m) => m.kind === 'ClusterRole' && Object.values(ROLES).includes(m.metadata.name as never));
  expect(roles.map((r) => r.metadata.name).sort()).toEqual(Object.values(ROLES).sort());
  await kubectlApply(kubeconfigPath(), roles, 'applying knative/user-roles.yaml');
  ns = await createTestNamespace('user-roles');
  dir = mkdtempSync(path.join(tmpdir(), 'neoset-user-roles-'));
  const cluster = kubeConfig().getCurrentCluster()!;
  for (const [person, role] of Object.entries(ROLES) as [Person, string][]) {
    expect((await kubectl(['-n', ns.name, 'create', 'serviceaccount', person])).code).toBe(0);
    const bound = await kubectl(['-n', ns.name, 'create', 'rolebinding', person, `--clusterrole=${role}`, `--serviceaccount=${ns.name}:${person}`]);
    expect(bound.code, bound.stderr).toBe(0);
    const token = await kubectl(['-n', ns.name, 'create', 'token', person, '--duration=1h']);
    kubeconfigs[person] = path.join(dir, `${person}.kubeconfig`);
    writeFileSync(
      kubeconfigs[person],
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'test', cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData, 'certificate-authority': cluster.caFile } }],
        users: [{ name: person, user: { token: token.stdout.trim() } }],
        contexts: [{ name: person, context: { cluster: 'test', user: person, namespace: ns.name } }],
        'current-context': person,
      }),
      { mode: 0o600 },
    );
  }
  // A NeoSet with two revisions (made by hand: no controller runs here), for history and undo.
  const created = await kubectl(['-n', ns.name, 'create', '-f', '-', '-o', 'jsonpath={.metadata.uid}'], {
    input: JSON.stringify(neosetManifest({ name: NAME, replicas: 2, image: 'mysql:8.1', updateStrategy: { partition: 2 } })),
  });
  expect(created.code, created.stderr).toBe(0);
  const template = (image: string) => ({ metadata: { labels: { app: NAME } }, spec: { containers: [{ name: 'main', image, readinessProbe: { tcpSocket: { port: 3306 } } }] } });
  for (const [revision, image] of [[1, 'mysql:8.0'], [2, 'mysql:8.1']] as const) {
    const r = await kubectl(['-n', ns.name, 'create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: {
          name: `${NAME}-${revision}`,
          labels: { app: NAME, [LABEL_NEOSET_NAME]: NAME },
          ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: NAME, uid: created.stdout, controller: true, blockOwnerDeletion: true }],
        },
        data: { spec: { template: template(image) } },
        revision,
      }),
    });
    expect(r.code, r.stderr).toBe(0);
  }
});

afterAll(async () => {
  await ns?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
  for (const role of Object.values(ROLES)) await kubectl(['delete', 'clusterrole', role, '--ignore-not-found', '--wait=false']);
});

/** `kubectl auth can-i VERB RESOURCE` as `person` in the test namespace: 'yes' or 'no'. */
async function canI(person: Person, verb: string, resource: string): Promise<string> {
  const r = await kubectl(['auth', 'can-i', verb, resource, '-n', ns.name, `--as=${user(person)}`]);
  return r.stdout.trim();
}

// The requests of bin/neoset: get / rollout status (get, list neosets), rollout history and undo
// (list controllerrevisions), the dashboard (list + watch of neosets, pods, controllerrevisions,
// events), pause / resume / promote / undo (patch neosets), promote / abort / retry with canary steps
// (patch neosets/status) — and what no role here grants: creating pods directly.
const ASKED: [string, string][] = [
  ['get', 'neosets.neo.io'],
  ['list', 'neosets.neo.io'],
  ['watch', 'neosets.neo.io'],
  ['list', 'controllerrevisions.apps'],
  ['watch', 'pods'],
  ['watch', 'events'],
  ['patch', 'neosets.neo.io'],
  ['patch', 'neosets.neo.io/status'],
  ['create', 'neosets.neo.io'],
  ['delete', 'neosets.neo.io'],
  ['update', 'neosets.neo.io/scale'],
  ['create', 'pods'],
  ['delete', 'pods'],
];

const ANSWERS: Record<Person, string[]> = {
  viewer: ['yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'no', 'no', 'no', 'no', 'no', 'no', 'no'],
  operator: ['yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'no', 'no', 'no', 'no', 'no'],
  editor: ['yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'yes', 'no', 'no'],
};

describe('knative/user-roles.yaml', () => {
  it('kubectl auth can-i, for the requests of the plugin, as a user bound to each role', async () => {
    for (const person of Object.keys(ROLES) as Person[]) {
      const answers = await Promise.all(ASKED.map(([verb, resource]) => canI(person, verb, resource)));
      expect(Object.fromEntries(ASKED.map(([v, r], i) => [`${v} ${r}`, answers[i]])), ROLES[person]).toEqual(Object.fromEntries(ASKED.map(([v, r], i) => [`${v} ${r}`, ANSWERS[person][i]])));
    }
  });

  it('aggregates into the built-in view (neoset-view), edit and admin (neoset-edit); the rollout operator into none', () => {
    const labels = Object.fromEntries(kustomize().filter((m) => Object.values(ROLES).includes(m.metadata.name as never)).map((m) => [m.metadata.name, m.metadata.labels ?? {}]));
    const aggregates = (name: string) => Object.keys(labels[name]).filter((l) => l.startsWith('rbac.authorization.k8s.io/aggregate-to-')).map((l) => l.split('aggregate-to-')[1]).sort();
    expect(aggregates('neoset-view')).toEqual(['view']);
    expect(aggregates('neoset-edit')).toEqual(['admin', 'edit']);
    expect(aggregates('neoset-rollout-operator')).toEqual([]);
  });

  const plugin = (person: Person, args: string[]) => run(PLUGIN, [...args, `--kubeconfig=${kubeconfigs[person]}`, '-n', ns.name]);

  it('the plugin as a viewer: get, rollout status and history answer; rollout pause is refused (exit 3), nothing written', async () => {
    expect(await plugin('viewer', ['get'])).toMatchObject({ code: 0, stderr: '' });
    expect(await plugin('viewer', ['rollout', 'history', NAME])).toMatchObject({ code: 0, stderr: '' });
    expect((await plugin('viewer', ['rollout', 'status', NAME, '--watch=false'])).stderr).toBe('');
    const pause = await plugin('viewer', ['rollout', 'pause', NAME]);
    expect(pause.code).toBe(3);
    expect(pause.stderr).toContain(`Error from server (Forbidden): neosets.neo.io "${NAME}" is forbidden: User "${user('viewer')}" cannot patch resource "neosets" in API group "neo.io"`);
    const paused = await kubectl(['-n', ns.name, 'get', 'neo', NAME, '-o', 'jsonpath={.spec.updateStrategy.pause}']);
    expect(paused.stdout).not.toBe('true');
  });

  it('the plugin as a rollout operator: pause, resume, promote and undo go through; creating or deleting a NeoSet does not', async () => {
    expect((await plugin('operator', ['rollout', 'pause', NAME])).stdout).toBe(`neoset.neo.io/${NAME} paused\n`);
    expect((await plugin('operator', ['rollout', 'resume', NAME])).stdout).toBe(`neoset.neo.io/${NAME} resumed\n`);
    expect((await plugin('operator', ['rollout', 'promote', NAME])).stdout).toBe(`neoset.neo.io/${NAME} promoted: partition 2 -> 1\n`);
    expect((await plugin('operator', ['rollout', 'undo', NAME, '--to-revision=1'])).stdout).toBe(`neoset.neo.io/${NAME} rolled back to revision 1 (main=mysql:8.0)\n`);
    const asOperator = (args: string[], input?: string) => kubectl(['-n', ns.name, `--as=${user('operator')}`, ...args], { input });
    const create = await asOperator(['create', '-f', '-'], JSON.stringify(neosetManifest({ name: 'another' })));
    expect(create.stderr).toContain(`cannot create resource "neosets" in API group "neo.io"`);
    expect((await asOperator(['delete', 'neo', NAME])).stderr).toContain(`cannot delete resource "neosets" in API group "neo.io"`);
  });

  it('as an editor: create and delete a NeoSet; a pod of its own is still refused', async () => {
    const asEditor = (args: string[], input?: string) => kubectl(['-n', ns.name, `--as=${user('editor')}`, ...args], { input });
    expect((await asEditor(['create', '-f', '-'], JSON.stringify(neosetManifest({ name: 'another' })))).code).toBe(0);
    expect((await plugin('editor', ['rollout', 'pause', 'another'])).stdout).toBe('neoset.neo.io/another paused\n');
    expect((await asEditor(['delete', 'neo', 'another', '--wait=false'])).code).toBe(0);
    const pod = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'direct' }, spec: { containers: [{ name: 'main', image: 'mysql:8.0' }] } });
    expect((await asEditor(['create', '-f', '-'], pod)).stderr).toContain('cannot create resource "pods"');
  });
});
