// knative/reconcile-policy.yaml on the real API server (issue 19, point 8): the ValidatingAdmissionPolicy
// that keeps the reconcile and readiness ServiceAccounts to NeoSets' own pods, claims and revisions,
// never in kube-system. First what it refuses, each write made by kubectl as the account; then what it
// allows: a whole life of a NeoSet — claims (one adopted by name), pods, in-place updates, revisions
// created, renumbered and pruned, a scale-down that hands a claim to its pod, and the adoption of
// orphans — by the functions with their ServiceAccounts' tokens, the policy installed: the API
// server's audit log shows no write of theirs refused.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../../dev/cluster/wait.ts';
import { ANNOTATION_RESIZE_ERROR, startVolumes } from '../../dev/kubelet/volumes.ts';
import { LABEL_NEOSET_NAME } from '../../shared/api/names.ts';
import { volumeClaimName } from '../../shared/core/pods/identity.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { auditLogPath, createTestNamespace, kubeConfig, kubectl, type TestNamespace } from '../cluster/harness.ts';
import { applyNeoSet, patchNeoSet, settledOn, untilEvents, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';
import { as, DENIED, installPolicies, neosetOwner, openGate, pod, POLICY, READINESS, RECONCILE, removePolicies, serviceAccountClient } from './policy-accounts.ts';

/** The functions' clients, with their ServiceAccounts' tokens. */
let clients: { reconcile: KubeClient; readiness: KubeClient };

beforeAll(async () => {
  // A plain pod create as reconcile is refused once the policy is in force.
  await installPolicies([{ what: 'the policy to refuse a plain pod', policy: POLICY, refused: (ns) => as(RECONCILE, ns, ['create', '-f', '-'], pod(`probe-${Date.now()}`)) }]);
  const [reconcile, readiness] = await Promise.all([serviceAccountClient('neoset-reconcile'), serviceAccountClient('neoset-readiness')]);
  clients = { reconcile, readiness };
});

afterAll(removePolicies);

describe('what the policy refuses the function accounts', () => {
  let ns: TestNamespace;
  let owner: { name: string; uid: string };
  const ours = () => ({ labels: { [LABEL_NEOSET_NAME]: owner.name }, ownerReferences: [neosetOwner(owner.name, owner.uid)] });
  beforeAll(async () => {
    ns = await createTestNamespace('policy-refusals');
    // A real NeoSet to own the test's pods (no function runs here: nothing reconciles it), so that
    // the garbage collector leaves them alone.
    const r = await kubectl(['-n', ns.name, 'create', '-f', '-', '-o', 'jsonpath={.metadata.uid}'], { input: JSON.stringify(neosetManifest({ name: 'owner', replicas: 1 })) });
    expect(r.code, r.stderr).toBe(0);
    owner = { name: 'owner', uid: r.stdout };
  });
  afterAll(async () => {
    await ns?.cleanup();
    await kubectl(['-n', 'kube-system', 'delete', 'pod', 'neoset-shaped', 'plain', '--ignore-not-found', '--wait=false']);
  });

  it('a pod create in kube-system by the reconcile ServiceAccount, even one shaped like a NeoSet pod', async () => {
    for (const name of ['neoset-shaped', 'plain']) {
      const r = await as(RECONCILE, 'kube-system', ['create', '-f', '-'], pod(name, name === 'plain' ? {} : ours()));
      expect(r.code, `${name}: ${r.stdout}`).not.toBe(0);
      expect(r.stderr).toContain(`${DENIED}NeoSet's functions never write pods, claims or revisions in kube-system, neoset-system, knative-serving or knative-eventing`);
      if (name === 'neoset-shaped') console.log(`kubectl --as=${RECONCILE} create -f pod.yaml -n kube-system: ${r.stderr.trim()}`);
    }
    const left = await kubectl(['-n', 'kube-system', 'get', 'pods', 'neoset-shaped', 'plain', '--ignore-not-found', '-o', 'name']);
    expect(left.stdout.trim(), 'pods created in kube-system').toBe('');
  });

  it('a pod create in an ordinary namespace without the label, without a controller ownerReference to that NeoSet, or without either', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['plain', {}],
      ['label-only', { labels: { [LABEL_NEOSET_NAME]: owner.name } }],
      ['owner-only', { ownerReferences: [neosetOwner(owner.name, owner.uid)] }],
      ['not-controller', { labels: { [LABEL_NEOSET_NAME]: owner.name }, ownerReferences: [neosetOwner(owner.name, owner.uid, false)] }],
      ['another-neoset', { labels: { [LABEL_NEOSET_NAME]: 'other' }, ownerReferences: [neosetOwner(owner.name, owner.uid)] }],
    ];
    for (const [name, metadata] of cases) {
      const r = await as(RECONCILE, ns.name, ['create', '-f', '-'], pod(name, metadata));
      expect(r.code, `${name}: ${r.stdout}`).not.toBe(0);
      expect(r.stderr, name).toContain(`${DENIED}NeoSet's functions may only create or update pods and ControllerRevisions that carry the neoset.neo.io/name label and a controller ownerReference to that NeoSet`);
    }
    // The same account may create a NeoSet's pod there: the label and the controller ownerReference.
    const allowed = await as(RECONCILE, ns.name, ['create', '-f', '-'], pod('owner-0', ours()));
    expect(allowed.code, allowed.stderr).toBe(0);
  });

  it("a patch, a pods/status patch and a delete of another's pod; readiness changing a NeoSet pod's spec; taking a pod from its NeoSet", async () => {
    expect((await kubectl(['-n', ns.name, 'create', '-f', '-'], { input: pod('theirs', { labels: { app: 'theirs' } }) })).code).toBe(0);
    const annotate = ['patch', 'pod', 'theirs', '--type=merge', '-p', '{"metadata":{"annotations":{"x":"y"}}}'];
    const image = ['patch', 'pod', 'theirs', '--type=strategic', '-p', '{"spec":{"containers":[{"name":"main","image":"mysql:9"}]}}'];
    const remove = ['delete', 'pod', 'theirs', '--wait=false'];
    // The first validation that fails is the one quoted: for a patch, the new object's (not the
    // NeoSet's either); for a delete, the old one's.
    const ownedOnly = `${DENIED}NeoSet's functions may only`;
    for (const [user, args] of [[RECONCILE, annotate], [RECONCILE, image], [RECONCILE, remove], [READINESS, annotate]] as const) {
      const r = await as(user, ns.name, [...args]);
      expect(r.code, `${user} ${args.join(' ')}: ${r.stdout}`).not.toBe(0);
      expect(r.stderr, `${user} ${args[0]} ${args.at(-1)}`).toContain(ownedOnly);
    }
    // The gate on pods/status, as the functions write it (kubectl would GET pods/status first, which
    // neither account may).
    for (const [who, client] of Object.entries(clients)) {
      const error = await openGate(client, ns.name, 'theirs').then(() => null, (err: Error) => err);
      expect(error?.message, `${who} patch pods/status`).toContain(ownedOnly);
    }
    const theirs = JSON.parse((await kubectl(['-n', ns.name, 'get', 'pod', 'theirs', '-o', 'json'])).stdout);
    expect(theirs.metadata.annotations ?? {}).not.toHaveProperty('x');
    expect(theirs.metadata.deletionTimestamp).toBeUndefined();

    // On the NeoSet's own pod: reconcile patches the image (an in-place update); readiness may open
    // the gate but not touch the spec.
    const imageOfOurs = ['patch', 'pod', 'owner-0', '--type=strategic', '-p', '{"spec":{"containers":[{"name":"main","image":"mysql:8.1"}]}}'];
    const byReadiness = await as(READINESS, ns.name, imageOfOurs);
    expect(byReadiness.stderr).toContain(`${DENIED}the NeoSet readiness function never changes a pod's spec`);
    await openGate(clients.readiness, ns.name, 'owner-0');
    expect((await as(RECONCILE, ns.name, imageOfOurs)).code).toBe(0);
    // A patch that leaves it without its controller ownerReference is refused: the new object counts too.
    const release = await as(RECONCILE, ns.name, ['patch', 'pod', 'owner-0', '--type=merge', '-p', '{"metadata":{"ownerReferences":null}}']);
    expect(release.stderr).toContain(`${DENIED}NeoSet's functions may only create or update pods and ControllerRevisions that carry`);
  });

  // (A change of a claim's spec, which the policy refuses too, cannot be tried here: the claims are
  // unbound — no provisioner — and the API server's own validation refuses it first.)
  it('claims: one without the label, a controller owner, and more than the label on a claim taken by name', async () => {
    const claim = (name: string, labels?: Record<string, string>) =>
      JSON.stringify({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, ...(labels ? { labels } : {}) }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    const unlabelled = await as(RECONCILE, ns.name, ['create', '-f', '-'], claim('data-x-0'));
    expect(unlabelled.stderr).toContain(`${DENIED}NeoSet's functions may only write PersistentVolumeClaims that carry the neoset.neo.io/name label`);
    expect((await as(RECONCILE, ns.name, ['create', '-f', '-'], claim('data-owner-0', { [LABEL_NEOSET_NAME]: owner.name }))).code).toBe(0);
    const controller = await as(RECONCILE, ns.name, ['patch', 'pvc', 'data-owner-0', '--type=merge', '-p', JSON.stringify({ metadata: { ownerReferences: [neosetOwner(owner.name, owner.uid)] } })]);
    expect(controller.stderr).toContain(`${DENIED}NeoSet's functions only make the NeoSet a claim is labelled with, or the pod of its ordinal, the owner of a PersistentVolumeClaim, never its controller`);
    expect((await as(RECONCILE, ns.name, ['patch', 'pvc', 'data-owner-0', '--type=merge', '-p', JSON.stringify({ metadata: { ownerReferences: [neosetOwner(owner.name, owner.uid, false)] } })])).code).toBe(0);
    // A claim someone else made with a template's name: reconcile may only label it (apply.ts createOrAdopt).
    expect((await kubectl(['-n', ns.name, 'create', '-f', '-'], { input: claim('data-owner-1') })).code).toBe(0);
    const more = await as(RECONCILE, ns.name, ['patch', 'pvc', 'data-owner-1', '--type=merge', '-p', JSON.stringify({ metadata: { labels: { [LABEL_NEOSET_NAME]: owner.name }, ownerReferences: [neosetOwner(owner.name, owner.uid, false)] } })]);
    expect(more.stderr).toContain(`${DENIED}NeoSet's functions never change a PersistentVolumeClaim's spec, and only label a claim`);
    expect((await as(RECONCILE, ns.name, ['label', 'pvc', 'data-owner-1', `${LABEL_NEOSET_NAME}=${owner.name}`])).code).toBe(0);
  });

  // §4.12 claims that grow: bound claims (dev/kubelet/volumes.ts binds them), whose resize fails at
  // once (the annotation), so that capacity stays 1Gi and the API server would let a request be
  // lowered again (RecoverVolumeExpansionFailure): what refuses that is the policy.
  it("claims that grow: a raise of a labelled claim's storage goes through; lowering it, or raising an unlabelled one, is refused", async () => {
    const volumes = await startVolumes({ kubeConfig: kubeConfig(), namespace: ns.name });
    try {
      const claim = (name: string, labels?: Record<string, string>) =>
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name, annotations: { [ANNOTATION_RESIZE_ERROR]: 'no space' }, ...(labels ? { labels } : {}) },
          spec: { storageClassName: 'standard', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        });
      expect((await kubectl(['-n', ns.name, 'create', '-f', '-'], { input: claim('grow-0', { [LABEL_NEOSET_NAME]: owner.name }) })).code).toBe(0);
      expect((await kubectl(['-n', ns.name, 'create', '-f', '-'], { input: claim('grow-1') })).code).toBe(0);
      await poll('both claims bound', async () => {
        const r = await kubectl(['-n', ns.name, 'get', 'pvc', 'grow-0', 'grow-1', '-o', 'jsonpath={.items[*].status.phase}']);
        return r.stdout === 'Bound Bound' ? true : undefined;
      }, { timeoutMs: 15_000, intervalMs: 100 });
      const storage = (name: string, value: string) => ['patch', 'pvc', name, '--type=merge', '-p', JSON.stringify({ spec: { resources: { requests: { storage: value } } } })];
      const raise = await as(RECONCILE, ns.name, storage('grow-0', '3Gi'));
      expect(raise.code, raise.stderr).toBe(0);
      const lower = await as(RECONCILE, ns.name, storage('grow-0', '2Gi'));
      expect(lower.stderr).toContain(`${DENIED}NeoSet's functions never change a PersistentVolumeClaim's spec`);
      // The same lowering by an administrator goes through: it is the policy that refuses it.
      const admin = await kubectl(['-n', ns.name, ...storage('grow-0', '2Gi')]);
      expect(admin.code, admin.stderr).toBe(0);
      const unlabelled = await as(RECONCILE, ns.name, storage('grow-1', '2Gi'));
      expect(unlabelled.stderr).toContain(`${DENIED}NeoSet's functions may only write PersistentVolumeClaims that carry the neoset.neo.io/name label`);
    } finally {
      // The claims go first, so that the driver's last pass reclaims their PVs.
      await kubectl(['-n', ns.name, 'delete', 'pvc', 'grow-0', 'grow-1', '--ignore-not-found', '--wait=true']);
      await volumes.stop();
    }
  });

  it('a ControllerRevision without a controller ownerReference to its NeoSet', async () => {
    const revision = (ownerReferences: unknown[]) =>
      JSON.stringify({ apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: `owner-${ownerReferences.length}`, labels: { [LABEL_NEOSET_NAME]: owner.name }, ownerReferences }, data: {}, revision: 1 });
    const r = await as(RECONCILE, ns.name, ['create', '-f', '-'], revision([]));
    expect(r.stderr).toContain(`${DENIED}NeoSet's functions may only create or update pods and ControllerRevisions`);
    expect((await as(RECONCILE, ns.name, ['create', '-f', '-'], revision([neosetOwner(owner.name, owner.uid)]))).code).toBe(0);
  });
});

interface AuditEvent {
  verb: string;
  user: { username: string };
  objectRef?: { resource: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code: number; message?: string };
}

describe('what the functions do under their ServiceAccounts, with the policy installed', () => {
  const NAME = 'pol';
  let stack: Stack;
  const claimTemplate = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  const manifest = (replicas: number) =>
    neosetManifest({
      name: NAME,
      replicas,
      spec: {
        podManagementPolicy: 'Parallel',
        revisionHistoryLimit: 1,
        volumeClaimTemplates: [claimTemplate],
        persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete', whenDeleted: 'Retain' },
      },
    });
  // While orphaned, the pods have no controller: the invariant checker says so, rightly.
  let orphanedAt = '';
  beforeAll(async () => {
    stack = await startStack({ prefix: 'policy-allows', reconcileClient: () => clients.reconcile, readinessClient: () => clients.readiness });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const template = (image: string) => ({ spec: { containers: [{ name: 'main', image, readinessProbe: { tcpSocket: { port: 3306 } } }] } });
  const rolledOut = (image: string) => (n: { status?: { phase?: string; updatedReplicas?: number; updateRevision?: string; currentImage?: string } }, pods: Parameters<typeof settledOn>[0][]) =>
    n.status?.phase === 'Completed' && n.status.currentImage === image && pods.length === 3 && pods.every((p) => settledOn(p, n.status?.updateRevision));

  it('creates the claims (one taken by name, labelled), the revision and the pods; updates them in place twice; rolls back (renumber) and prunes', async () => {
    // A claim with ordinal 0's name, made before the NeoSet, without its label: used and labelled.
    const taken = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: volumeClaimName('data', NAME, 0) }, spec: claimTemplate.spec };
    expect((await stack.kubectl(['create', '-f', '-'], JSON.stringify(taken))).code).toBe(0);
    await applyNeoSet(stack, manifest(3));
    await untilStatus(stack, NAME, '3 ready pods', (n) => n.status?.readyReplicas === 3, 60_000);
    const claims = JSON.parse((await stack.kubectl(['get', 'pvc', '-o', 'json'])).stdout).items as { metadata: { name: string; labels?: Record<string, string> } }[];
    expect(claims.map((c) => [c.metadata.name, c.metadata.labels?.[LABEL_NEOSET_NAME]]).sort()).toEqual([0, 1, 2].map((i) => [volumeClaimName('data', NAME, i), NAME]));

    for (const image of ['mysql:8.1', 'mysql:8.2']) {
      await patchNeoSet(stack, NAME, { spec: { template: template(image) } });
      await untilStatus(stack, NAME, `all on ${image}`, rolledOut(image), 90_000);
    }
    // Back to 8.1: its revision is reused (renumbered); 8.0's, beyond revisionHistoryLimit 1, pruned.
    await patchNeoSet(stack, NAME, { spec: { template: template('mysql:8.1') } });
    await untilStatus(stack, NAME, 'back on mysql:8.1', rolledOut('mysql:8.1'), 90_000);
    await untilEvents(stack, NAME, 'RevisionRenumbered', (list) => list.some((e) => e.reason === 'RevisionRenumbered'));
  });

  it('scales down: the condemned pod is made its claim owner (whenScaled Delete), then deleted', async () => {
    await patchNeoSet(stack, NAME, { spec: { replicas: 2 } });
    await untilStatus(stack, NAME, '2 pods', (n, pods) => pods.length === 2 && n.status?.replicas === 2, 60_000);
    await untilEvents(stack, NAME, 'SuccessfulDelete', (list) => list.some((e) => e.reason === 'SuccessfulDelete'));
  });

  it('adopts its orphans after `kubectl delete neo --cascade=orphan` and a re-apply', async () => {
    expect(stack.observer.violations).toEqual([]);
    orphanedAt = new Date().toISOString();
    expect((await stack.kubectl(['delete', 'neo', NAME, '--cascade=orphan', '--wait=true'])).code).toBe(0);
    await applyNeoSet(stack, manifest(2));
    const adopted = (list: { reason: string; message: string }[]) => list.some((e) => e.reason === 'SuccessfulAdopt' && e.message.includes('Pod')) && list.some((e) => e.reason === 'SuccessfulAdopt' && e.message.includes('ControllerRevision'));
    await untilEvents(stack, NAME, 'SuccessfulAdopt of pods and a revision', adopted, 30_000);
    await untilStatus(stack, NAME, 'adopted and ready', (n) => n.status?.readyReplicas === 2, 60_000);
  });

  it('no write of theirs was refused: no failure Event, and none in the API server audit log', async () => {
    const events = await stack.client.request<{ items: { type: string; reason: string; message: string }[] }>('GET', `/api/v1/namespaces/${stack.namespace}/events`);
    expect(events.items.filter((e) => e.type === 'Warning').map((e) => `${e.reason}: ${e.message}`)).toEqual([]);
    const audit = (await readFile(auditLogPath(), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditEvent)
      .filter((e) => e.objectRef?.namespace === stack.namespace && [RECONCILE, READINESS].includes(e.user.username));
    const refused = audit.filter((e) => (e.responseStatus?.code ?? 0) === 403).map((e) => `${e.user.username} ${e.verb} ${e.objectRef?.resource}/${e.objectRef?.subresource ?? ''} ${e.objectRef?.name}: ${e.responseStatus?.message}`);
    expect(refused).toEqual([]);
    const done = new Map<string, number>();
    for (const e of audit.filter((e) => (e.responseStatus?.code ?? 0) < 300)) {
      const key = `${e.user.username.split(':').at(-1)} ${e.verb} ${e.objectRef?.resource}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
      done.set(key, (done.get(key) ?? 0) + 1);
    }
    console.log(`writes the policy let through: ${[...done].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
    for (const key of ['neoset-reconcile create pods', 'neoset-reconcile patch pods', 'neoset-reconcile patch pods/status', 'neoset-reconcile delete pods', 'neoset-reconcile create controllerrevisions', 'neoset-reconcile patch controllerrevisions', 'neoset-reconcile delete controllerrevisions', 'neoset-readiness patch pods/status']) {
      expect(done.get(key), key).toBeGreaterThan(0);
    }
    const orphaned = ({ at, violation }: { at: string; violation: unknown }) => {
      const { invariant, message } = violation as { invariant: string; message: string };
      return at >= orphanedAt && invariant === 'Identity' && message.startsWith('controller ownerReference is not the NeoSet');
    };
    expect(stack.observer.violations.filter((v) => !orphaned(v))).toEqual([]);
  });
});
