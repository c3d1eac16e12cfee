// Issue 34, point 7 (SPEC §2.5): a stolen function token can do only that function's job. On the real
// API server, with knative/reconcile-policy.yaml's two policies installed, each write made as the
// account (kubectl --as, or a client with its token): readiness may open its gate and end an update
// (the state annotation removed), and change no label, owner, finalizer, other annotation or status;
// reconcile never changes owners it did not set (but to adopt an orphan); and neither reconcile's
// creates nor admission's dry-runs get a privileged, host-namespace or hostPath pod in a namespace that
// did not opt in. Last, the functions under their tokens roll out a hostNetwork NeoSet in a namespace
// that opted in, and are refused its next pod once the label is gone. Their other writes under the same
// policies: reconcile-policy.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiDryRunPod } from '../../functions/admission/dry-run.ts';
import { ordinalPod } from '../../shared/admission/pod.ts';
import { LABEL_PRIVILEGED_PODS } from '../../shared/admission/privileged-pods.ts';
import type { NeoSet } from '../../shared/api/neoset.ts';
import { ANNOTATION_INPLACE_STATE, CONDITION_INPLACE_READY, LABEL_NEOSET_NAME, LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { installCrds } from '../../dev/cluster/crd.ts';
import { poll } from '../../dev/cluster/wait.ts';
import { SYSTEM_NAMESPACE } from '../../dev/manifests.ts';
import { createTestNamespace, kubeConfig, kubectl, type TestNamespace } from '../cluster/harness.ts';
import { applyNeoSet, patchNeoSet, settledOn, untilEvents, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';
import { ADMISSION, as, DENIED, denied, FAST_TICK_POLICY, installPolicies, neosetOwner, openGate, pod, POLICY, PRIVILEGED_POLICY, READINESS, RECONCILE, removePolicies, serviceAccountClient } from './policy-accounts.ts';

const PRIVILEGED_DENIED = denied(PRIVILEGED_POLICY);
/** The privileges a NeoSet's template may ask for only where its namespace opted in, and what the policy says of each. */
const PRIVILEGES: [string, Record<string, unknown>, string][] = [
  ['privileged', { containers: [{ name: 'main', image: 'mysql:8.0', securityContext: { privileged: true } }] }, 'privileged containers need the namespace label'],
  ['privileged-init', { initContainers: [{ name: 'init', image: 'busybox', securityContext: { privileged: true } }] }, 'privileged containers need the namespace label'],
  ['host-network', { hostNetwork: true }, 'host namespaces (hostNetwork, hostPID, hostIPC) need the namespace label'],
  ['host-pid', { hostPID: true }, 'host namespaces (hostNetwork, hostPID, hostIPC) need the namespace label'],
  ['host-ipc', { hostIPC: true }, 'host namespaces (hostNetwork, hostPID, hostIPC) need the namespace label'],
  ['host-path', { volumes: [{ name: 'root', hostPath: { path: '/' } }] }, 'hostPath volumes need the namespace label'],
];

let clients: { reconcile: KubeClient; readiness: KubeClient; admission: KubeClient };

beforeAll(async () => {
  await installPolicies([
    { what: 'the policy to refuse a plain pod', policy: POLICY, refused: (ns) => as(RECONCILE, ns, ['create', '-f', '-'], pod(`probe-${Date.now()}`)) },
    { what: 'the policy to refuse a hostNetwork pod', policy: PRIVILEGED_POLICY, refused: (ns) => as(ADMISSION, ns, ['create', '--dry-run=server', '-f', '-'], pod('probe', {}, { hostNetwork: true })) },
  ]);
  const [reconcile, readiness, admission] = await Promise.all(['neoset-reconcile', 'neoset-readiness', 'neoset-admission'].map(serviceAccountClient));
  clients = { reconcile, readiness, admission };
});

afterAll(removePolicies);

/** A namespace with a real NeoSet `owner` (nothing reconciles it) to own the test's pods, so that the garbage collector leaves them alone. */
async function withOwner(prefix: string, labels: Record<string, string> = {}) {
  const ns = await createTestNamespace(prefix);
  if (Object.keys(labels).length > 0) expect((await kubectl(['label', 'namespace', ns.name, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)])).code).toBe(0);
  const r = await kubectl(['-n', ns.name, 'create', '-f', '-', '-o', 'jsonpath={.metadata.uid}'], { input: JSON.stringify(neosetManifest({ name: 'owner', replicas: 1 })) });
  expect(r.code, r.stderr).toBe(0);
  const uid = r.stdout;
  return { ns, uid, ours: (extra: Record<string, unknown> = {}) => ({ labels: { [LABEL_NEOSET_NAME]: 'owner', [LABEL_REVISION_HASH]: 'owner-old' }, ownerReferences: [neosetOwner('owner', uid)], ...extra }) };
}

describe('a stolen readiness token: its gate and the end of an update, nothing else', () => {
  let ns: TestNamespace;
  let owner: Awaited<ReturnType<typeof withOwner>>;
  /** A NeoSet's pod in an update: the state annotation, the gate False, the kubelet's Ready False. */
  const inUpdate = async (name: string) => {
    const created = await kubectl(['-n', ns.name, 'create', '-f', '-'], { input: pod(name, owner.ours({ annotations: { [ANNOTATION_INPLACE_STATE]: '{"revision":"owner-new"}', other: 'kept' } }), { readinessGates: [{ conditionType: CONDITION_INPLACE_READY }] }) });
    expect(created.code, created.stderr).toBe(0);
    const conditions = [{ type: CONDITION_INPLACE_READY, status: 'False' }, { type: 'Ready', status: 'False' }];
    const status = await kubectl(['-n', ns.name, 'patch', 'pod', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { phase: 'Running', conditions, containerStatuses: [{ name: 'main', image: 'mysql:8.0', imageID: '', ready: false, restartCount: 0, started: true, state: { running: {} } }] } })]);
    expect(status.code, status.stderr).toBe(0);
  };
  beforeAll(async () => {
    owner = await withOwner('pins-readiness');
    ns = owner.ns;
    await inUpdate('owner-0');
  });
  afterAll(() => ns?.cleanup());

  it("refuses the issue's two patches: the controller-revision-hash label (the pod would count as updated) and the ownerReference's uid (handed to the garbage collector)", async () => {
    const label = await as(READINESS, ns.name, ['patch', 'pod', 'owner-0', '--type=merge', '-p', JSON.stringify({ metadata: { labels: { [LABEL_REVISION_HASH]: 'owner-new' } } })]);
    console.log(`kubectl --as=${READINESS} patch pod owner-0 (controller-revision-hash): ${label.stderr.trim() || label.stdout.trim()}`);
    expect(label.stderr).toContain(`${DENIED}the NeoSet readiness function never changes a pod's labels or finalizers`);
    const stolen = neosetOwner('owner', '00000000-0000-0000-0000-000000000000');
    const uid = await as(READINESS, ns.name, ['patch', 'pod', 'owner-0', '--type=merge', '-p', JSON.stringify({ metadata: { ownerReferences: [stolen] } })]);
    console.log(`kubectl --as=${READINESS} patch pod owner-0 (ownerReferences uid): ${uid.stderr.trim() || uid.stdout.trim()}`);
    expect(uid.stderr).toContain(`${DENIED}NeoSet's functions never change the ownerReferences of a pod or ControllerRevision they did not set`);
    const stored = JSON.parse((await kubectl(['-n', ns.name, 'get', 'pod', 'owner-0', '-o', 'json'])).stdout);
    expect(stored.metadata.labels[LABEL_REVISION_HASH]).toBe('owner-old');
    expect(stored.metadata.ownerReferences[0].uid).toBe(owner.uid);
  });

  it('refuses a finalizer, another annotation, the state annotation written, and a label through pods/status', async () => {
    const cases: [string, unknown, string][] = [
      ['a finalizer', { metadata: { finalizers: ['example.com/hold'] } }, "never changes a pod's labels or finalizers"],
      ['another annotation', { metadata: { annotations: { other: 'changed' } } }, 'changes no annotation of a pod but removing'],
      ['a new annotation', { metadata: { annotations: { added: 'x' } } }, 'changes no annotation of a pod but removing'],
      ['the state annotation rewritten', { metadata: { annotations: { [ANNOTATION_INPLACE_STATE]: '{"revision":"forged"}' } } }, 'changes no annotation of a pod but removing'],
    ];
    for (const [what, patch, message] of cases) {
      const r = await as(READINESS, ns.name, ['patch', 'pod', 'owner-0', '--type=merge', '-p', JSON.stringify(patch)]);
      expect(r.stderr, what).toContain(`${DENIED}the NeoSet readiness function ${message}`);
    }
    // Metadata may change through pods/status too (the functions' markDraining does): a label there.
    const viaStatus = await clients.readiness.request('PATCH', paths.podStatus(ns.name, 'owner-0'), { patch: 'merge', body: { metadata: { labels: { [LABEL_REVISION_HASH]: 'owner-new' } } } }).then(() => null, (err: Error) => err);
    expect(viaStatus?.message).toContain(`${DENIED}the NeoSet readiness function never changes a pod's labels or finalizers`);
  });

  it("refuses any status but its gate: the kubelet's Ready condition, a container's readiness, the phase", async () => {
    const cases: [string, unknown][] = [
      ['Ready', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }],
      ['containerStatuses', { status: { containerStatuses: [{ name: 'main', image: 'mysql:8.1', imageID: '', ready: true, restartCount: 1, started: true, state: { running: {} } }] } }],
      ['phase', { status: { phase: 'Succeeded' } }],
    ];
    for (const [what, body] of cases) {
      const error = await clients.readiness.request('PATCH', paths.podStatus(ns.name, 'owner-0'), { patch: 'strategic', body }).then(() => null, (err: Error) => err);
      expect(error?.message, what).toContain(`${DENIED}the NeoSet readiness function changes no status of a pod but its InPlaceUpdateReady condition`);
    }
  });

  it('allows its job: the gate opened (pods/status), and the update ended by removing the state annotation, with the gate or on the pod', async () => {
    await openGate(clients.readiness, ns.name, 'owner-0');
    const done = { metadata: { annotations: { [ANNOTATION_INPLACE_STATE]: null } }, status: { conditions: [{ type: CONDITION_INPLACE_READY, status: 'True', reason: 'InPlaceUpdateDone' }] } };
    await clients.readiness.request('PATCH', paths.podStatus(ns.name, 'owner-0'), { patch: 'strategic', body: done });
    await inUpdate('owner-1');
    const onPod = await as(READINESS, ns.name, ['patch', 'pod', 'owner-1', '--type=merge', '-p', JSON.stringify({ metadata: { annotations: { [ANNOTATION_INPLACE_STATE]: null } } })]);
    expect(onPod.code, onPod.stderr).toBe(0);
    const stored = JSON.parse((await kubectl(['-n', ns.name, 'get', 'pod', 'owner-0', 'owner-1', '-o', 'json'])).stdout).items;
    for (const p of stored) {
      expect(p.metadata.annotations, p.metadata.name).toEqual({ other: 'kept' });
      expect(p.metadata.labels[LABEL_REVISION_HASH]).toBe('owner-old');
    }
    expect(stored[0].status.conditions.find((c: { type: string }) => c.type === CONDITION_INPLACE_READY)).toMatchObject({ status: 'True', reason: 'InPlaceUpdateDone' });
  });
});

describe('a stolen reconcile token: no owner it did not set', () => {
  let ns: TestNamespace;
  let owner: Awaited<ReturnType<typeof withOwner>>;
  /** Another's owner reference: a real ConfigMap, so that the garbage collector leaves what it owns alone. */
  const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'theirs', uid: '' };
  beforeAll(async () => {
    owner = await withOwner('pins-reconcile');
    ns = owner.ns;
    const configMap = await kubectl(['-n', ns.name, 'create', 'configmap', 'theirs', '-o', 'jsonpath={.metadata.uid}']);
    expect(configMap.code, configMap.stderr).toBe(0);
    other.uid = configMap.stdout;
    expect((await kubectl(['-n', ns.name, 'create', '-f', '-'], { input: pod('owner-0', owner.ours()) })).code).toBe(0);
  });
  afterAll(() => ns?.cleanup());

  const patchOwners = (kind: string, name: string, ownerReferences: unknown[]) =>
    as(RECONCILE, ns.name, ['patch', kind, name, '--type=merge', '-p', JSON.stringify({ metadata: { ownerReferences } })]);
  const OWNERS = `${DENIED}NeoSet's functions never change the ownerReferences of a pod or ControllerRevision they did not set`;

  it("refuses, on a NeoSet's pod, the controller reference's uid changed, and an owner added", async () => {
    const uid = await patchOwners('pod', 'owner-0', [neosetOwner('owner', '00000000-0000-0000-0000-000000000000')]);
    console.log(`kubectl --as=${RECONCILE} patch pod owner-0 (ownerReferences uid): ${uid.stderr.trim() || uid.stdout.trim()}`);
    expect(uid.stderr).toContain(OWNERS);
    expect((await patchOwners('pod', 'owner-0', [neosetOwner('owner', owner.uid), other])).stderr).toContain(OWNERS);
  });

  it('refuses a pod or a revision created with an owner beside the NeoSet', async () => {
    const extra = await as(RECONCILE, ns.name, ['create', '-f', '-'], pod('owner-1', owner.ours({ ownerReferences: [neosetOwner('owner', owner.uid), other] })));
    expect(extra.stderr).toContain(OWNERS);
    const revision = JSON.stringify({ apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'owner-r', labels: { [LABEL_NEOSET_NAME]: 'owner' }, ownerReferences: [neosetOwner('owner', owner.uid), other] }, data: {}, revision: 1 });
    expect((await as(RECONCILE, ns.name, ['create', '-f', '-'], revision)).stderr).toContain(OWNERS);
  });

  it("adopts an orphan by adding exactly the NeoSet's controller reference; refuses one more owner, or another's changed", async () => {
    const orphan = { labels: { [LABEL_NEOSET_NAME]: 'owner' }, ownerReferences: [other] };
    expect((await kubectl(['-n', ns.name, 'create', '-f', '-'], { input: pod('owner-2', orphan) })).code).toBe(0);
    const ours = neosetOwner('owner', owner.uid);
    const another = { ...other, name: 'another', uid: '44444444-4444-4444-4444-444444444444' };
    expect((await patchOwners('pod', 'owner-2', [...orphan.ownerReferences, ours, another])).stderr).toContain(OWNERS);
    expect((await patchOwners('pod', 'owner-2', [{ ...other, uid: '22222222-2222-2222-2222-222222222222' }, ours])).stderr).toContain(OWNERS);
    const adopted = await patchOwners('pod', 'owner-2', [...orphan.ownerReferences, ours]);
    expect(adopted.code, adopted.stderr).toBe(0);
  });

  it("on a claim, removes only the NeoSet's own references and adds only its NeoSet's and its ordinal's pod's", async () => {
    const neoset = neosetOwner('owner', owner.uid, false);
    const claim = JSON.stringify({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-owner-0', labels: { [LABEL_NEOSET_NAME]: 'owner' }, ownerReferences: [other, neoset] }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    expect((await kubectl(['-n', ns.name, 'create', '-f', '-'], { input: claim })).code).toBe(0);
    const removed = await patchOwners('pvc', 'data-owner-0', [neoset]);
    expect(removed.stderr).toContain(`${DENIED}NeoSet's functions never remove an owner of a PersistentVolumeClaim they did not set`);
    const anotherPod = { apiVersion: 'v1', kind: 'Pod', name: 'owner-1', uid: '33333333-3333-3333-3333-333333333333' };
    const added = await patchOwners('pvc', 'data-owner-0', [other, neoset, anotherPod]);
    expect(added.stderr).toContain(`${DENIED}NeoSet's functions only make the NeoSet a claim is labelled with, or the pod of its ordinal, the owner`);
    // whenScaled Delete: the NeoSet's reference replaced by its ordinal's pod's (volume-claims.ts).
    const condemned = await patchOwners('pvc', 'data-owner-0', [other, { ...anotherPod, name: 'owner-0' }]);
    expect(condemned.code, condemned.stderr).toBe(0);
  });
});

describe('a stolen reconcile token: no pod more privileged than its namespace allows', () => {
  let plain: Awaited<ReturnType<typeof withOwner>>;
  let optedIn: Awaited<ReturnType<typeof withOwner>>;
  let podSecurityOnly: Awaited<ReturnType<typeof withOwner>>;
  beforeAll(async () => {
    plain = await withOwner('pins-privilege');
    optedIn = await withOwner('pins-privilege-allowed', { [LABEL_PRIVILEGED_PODS]: 'allowed' });
    // PodSecurity's own label, at its most permissive: no opt-in of ours.
    podSecurityOnly = await withOwner('pins-privilege-pss', { 'pod-security.kubernetes.io/enforce': 'privileged' });
  });
  afterAll(async () => {
    for (const o of [plain, optedIn, podSecurityOnly]) await o?.ns.cleanup();
  });

  it('refuses each privilege to a create by reconcile and a dry-run by admission where the namespace did not opt in; a plain pod passes', async () => {
    for (const [ns, name] of [[plain, 'plain'], [podSecurityOnly, 'pod-security']] as const) {
      for (const [what, spec, message] of PRIVILEGES) {
        const created = await as(RECONCILE, ns.ns.name, ['create', '-f', '-'], pod(`owner-${what}`, ns.ours(), spec));
        if (what === 'host-path' && name === 'plain') console.log(`kubectl --as=${RECONCILE} create (hostPath): ${created.stderr.trim() || created.stdout.trim()}`);
        expect(created.stderr, `${name} ${what}`).toContain(`${PRIVILEGED_DENIED}${message} ${LABEL_PRIVILEGED_PODS}=allowed`);
        const dryRun = await as(ADMISSION, ns.ns.name, ['create', '--dry-run=server', '-f', '-'], pod(`owner-${what}`, {}, spec));
        expect(dryRun.stderr, `${name} ${what} dry-run`).toContain(`${PRIVILEGED_DENIED}${message}`);
      }
      const left = await kubectl(['-n', ns.ns.name, 'get', 'pods', '-o', 'name']);
      expect(left.stdout.trim(), `${name}: pods created`).toBe('');
    }
    const created = await as(RECONCILE, plain.ns.name, ['create', '-f', '-'], pod('owner-0', plain.ours()));
    expect(created.code, created.stderr).toBe(0);
    const dryRun = await as(ADMISSION, plain.ns.name, ['create', '--dry-run=server', '-f', '-'], pod('dry-plain'));
    expect(dryRun.code, dryRun.stderr).toBe(0);
  });

  it(`allows them where the namespace carries ${LABEL_PRIVILEGED_PODS}=allowed`, async () => {
    for (const [what, spec] of PRIVILEGES) {
      const created = await as(RECONCILE, optedIn.ns.name, ['create', '-f', '-'], pod(`owner-${what}`, optedIn.ours(), spec));
      expect(created.code, `${what}: ${created.stderr}`).toBe(0);
      const dryRun = await as(ADMISSION, optedIn.ns.name, ['create', '--dry-run=server', '-f', '-'], pod(`dry-${what}`, {}, spec));
      expect(dryRun.code, `${what} dry-run: ${dryRun.stderr}`).toBe(0);
    }
  });

  it("the admission function's dry-run of ordinal 0's pod, as its ServiceAccount, tells the NeoSet's author the field and the label", async () => {
    const neoset = (spec: Record<string, unknown>) => {
      const n = neosetManifest({ name: 'web', replicas: 1 }) as unknown as NeoSet;
      n.spec.volumeClaimTemplates = [];
      Object.assign(n.spec.template.spec, spec);
      return n;
    };
    const dryRun = apiDryRunPod(clients.admission);
    const hostNetwork = await dryRun(ordinalPod(neoset({ hostNetwork: true }), 'web', plain.ns.name, 0), AbortSignal.timeout(10_000));
    console.log(`admission's dry-run of a hostNetwork template: ${JSON.stringify(hostNetwork)}`);
    expect(hostNetwork).toMatchObject({ ok: false, code: 403 });
    expect(hostNetwork.ok === false && hostNetwork.message).toBe(`spec.template.spec: host namespaces (hostNetwork, hostPID, hostIPC) need the namespace label ${LABEL_PRIVILEGED_PODS}=allowed, which a cluster administrator sets`);
    expect(await dryRun(ordinalPod(neoset({ hostNetwork: true }), 'web', optedIn.ns.name, 0), AbortSignal.timeout(10_000))).toEqual({ ok: true });
    expect(await dryRun(ordinalPod(neoset({}), 'web', plain.ns.name, 0), AbortSignal.timeout(10_000))).toEqual({ ok: true });
  });
});

describe('the functions under their tokens, a hostNetwork NeoSet', () => {
  const NAME = 'net';
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ prefix: 'pins-privileged-rollout', reconcileClient: () => clients.reconcile, readinessClient: () => clients.readiness });
    expect((await kubectl(['label', 'namespace', stack.namespace, `${LABEL_PRIVILEGED_PODS}=allowed`])).code).toBe(0);
  });
  afterAll(() => stack?.stop());

  const template = (image: string) => ({ metadata: { labels: { app: NAME } }, spec: { hostNetwork: true, containers: [{ name: 'main', image, readinessProbe: { tcpSocket: { port: 3306 } } }] } });

  it('rolls out where the namespace opted in; with the label gone, its next pod is refused and said so (FailedCreate)', async () => {
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 2, spec: { template: template('mysql:8.0') } }));
    await untilStatus(stack, NAME, '2 ready pods', (n) => n.status?.readyReplicas === 2, 60_000);
    await patchNeoSet(stack, NAME, { spec: { template: template('mysql:8.1') } });
    await untilStatus(stack, NAME, 'all on mysql:8.1', (n, pods) => n.status?.phase === 'Completed' && n.status.currentImage === 'mysql:8.1' && pods.length === 2 && pods.every((p) => settledOn(p, n.status?.updateRevision)), 90_000);

    expect((await kubectl(['label', 'namespace', stack.namespace, `${LABEL_PRIVILEGED_PODS}-`])).code).toBe(0);
    await patchNeoSet(stack, NAME, { spec: { replicas: 3 } });
    const events = await untilEvents(stack, NAME, 'FailedCreate', (list) => list.some((e) => e.reason === 'FailedCreate'), 30_000);
    const failed = events.find((e) => e.reason === 'FailedCreate')!;
    console.log(`${failed.type} ${failed.reason}: ${failed.message}`);
    expect(failed.message).toContain('net-2');
    expect(failed.message).toContain('403 Forbidden');
    const pods = await stack.kubectl(['get', 'pods', '-o', 'name']);
    expect(pods.stdout.trim().split('\n').sort()).toEqual(['pod/net-0', 'pod/net-1']);
  });
});

describe('a stolen reconcile token and the fast tick (SPEC §2.4): one PingSource, into the neoset Broker, every minute', () => {
  const FAST = 'neoset-rollout-tick';
  const pingSource = (name: string, spec: Record<string, unknown> = {}) =>
    JSON.stringify({ apiVersion: 'sources.knative.dev/v1', kind: 'PingSource', metadata: { name }, spec: { schedule: '* * * * *', contentType: 'application/json', data: '{}', sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'neoset' } }, ...spec } });
  const asReconcile = (args: string[], input?: string) => as(RECONCILE, SYSTEM_NAMESPACE, args, input);
  beforeAll(async () => {
    await installCrds(kubeConfig(), new URL('../fixtures/knative-crds/eventing-pingsource.yaml', import.meta.url).pathname, { timeoutMs: 60_000 });
    // The policy is compiled asynchronously, as the others (installPolicies): until it refuses a foreign name.
    await poll('the fast-tick policy to refuse another name', async () => {
      const r = await asReconcile(['create', '--dry-run=server', '-f', '-'], pingSource('probe'));
      return r.code !== 0 && r.stderr.includes(denied(FAST_TICK_POLICY)) ? true : undefined;
    }, { timeoutMs: 30_000, intervalMs: 250 });
  });
  afterAll(() => kubectl(['-n', SYSTEM_NAMESPACE, 'delete', 'pingsources', '--all', '--ignore-not-found', '--wait=false']));

  it('refuses another name, a faster schedule, data, a sink elsewhere, a spec changed later; RBAC refuses the resync PingSource and other namespaces', async () => {
    const refused: [string, Promise<{ code: number; stderr: string }>, string][] = [
      ['another name', asReconcile(['create', '-f', '-'], pingSource('elsewhere')), 'writes one PingSource, neoset-system/neoset-rollout-tick'],
      ['every second', asReconcile(['create', '-f', '-'], pingSource(FAST, { schedule: '*/1 * * * * *' })), 'ticks every minute'],
      ['data', asReconcile(['create', '-f', '-'], pingSource(FAST, { data: '{"forged":true}' })), 'ticks every minute'],
      ['a sink URI', asReconcile(['create', '-f', '-'], pingSource(FAST, { sink: { uri: 'http://attacker.example/' } })), 'ticks every minute'],
      ['another Broker', asReconcile(['create', '-f', '-'], pingSource(FAST, { sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'neoset', namespace: 'tenant' } } })), 'ticks every minute'],
    ];
    for (const [what, result, message] of refused) {
      const r = await result;
      expect(r.stderr, what).toContain(denied(FAST_TICK_POLICY));
      expect(r.stderr, what).toContain(message);
    }
    const created = await asReconcile(['create', '-f', '-'], pingSource(FAST));
    expect(created.code, created.stderr).toBe(0);
    const stamped = await asReconcile(['patch', 'pingsource', FAST, '--type=merge', '-p', JSON.stringify({ metadata: { annotations: { 'neoset.neo.io/needed-at': new Date().toISOString() } } })]);
    expect(stamped.code, stamped.stderr).toBe(0);
    const faster = await asReconcile(['patch', 'pingsource', FAST, '--type=merge', '-p', JSON.stringify({ spec: { schedule: '*/1 * * * * *' } })]);
    expect(faster.stderr).toContain(`${denied(FAST_TICK_POLICY)}the NeoSet reconcile function changes only the fast tick's annotations`);
    const resync = await asReconcile(['delete', 'pingsource', 'neoset-resync']);
    expect(resync.stderr).toMatch(/forbidden/);
    const otherNamespace = await as(RECONCILE, 'default', ['create', '-f', '-'], pingSource(FAST));
    expect(otherNamespace.stderr).toMatch(/forbidden/);
    const deleted = await asReconcile(['delete', 'pingsource', FAST]);
    expect(deleted.code, deleted.stderr).toBe(0);
  });
});
