// Claims that grow (issue 23 point 3, SPEC §4.12) on the real control plane: the controller
// (test/e2e/stack.ts), the simulated storage of dev/kubelet/volumes.ts (StorageClass `standard` with
// allowVolumeExpansion, PVs bound to the claims, resizes reported after a delay), so that the API
// server's own PVC validation and PersistentVolumeClaimResize admission run on every patch, and the
// admission server as the API server calls it. 3 pods, 1Gi -> 2Gi under maxUnavailable 1: a sampler
// of pods and claims sees at most one pod unavailable or resizing at any moment (and the oracle's
// rules hold between samples); every claim reports 2Gi; the pods keep their UIDs. A shrink and a
// change of accessModes are refused by the webhook with the field path. A resize that fails
// (ControllerResizeError) fails the rollout with VolumeResizeFailed naming the claim; once the
// failure is gone the rollout goes on. And the API server's own resize admission refuses a raise on
// a class that does not allow expansion: NeoSet reports the refusal (ReplicaFailure, FailedUpdate).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../../dev/cluster/wait.ts';
import { ANNOTATION_RESIZE_ERROR, PROVISIONER } from '../../dev/kubelet/volumes.ts';
import type { PersistentVolumeClaim, Pod } from '../../shared/core/objects.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { checkInvariants, type Observation } from '../oracle/index.ts';
import { startTestAdmission, type TestAdmission } from '../cluster/test-admission.ts';
import { applyNeoSet, identities, inPlace, isReady, untilEvents, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';

const NAME = 'grow';
const CLAIMS = [0, 1, 2].map((i) => `data-${NAME}-${i}`);

let stack: Stack;
let admission: TestAdmission;

type Claim = PersistentVolumeClaim & { spec: { resources: { requests: { storage: string } } }; status?: { phase?: string; capacity?: { storage?: string } } };
const requestOf = (c: Claim) => c.spec.resources.requests.storage;
const capacityOf = (c: Claim) => c.status?.capacity?.storage;

async function claims(): Promise<Claim[]> {
  return (await stack.client.request<{ items: Claim[] }>('GET', paths.pvcs(stack.namespace))).items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

const storagePatch = (storage: string) => ['patch', 'neoset', NAME, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/volumeClaimTemplates/0/spec/resources/requests/storage', value: storage }])];

/**
 * Samples pods, claims and the NeoSet every 50 ms: the most pods at once that are unavailable (not
 * Ready, an update in flight) or whose claims resize (requested > capacity), the order in which the
 * claims' requests were raised, and the oracle's verdict between consecutive samples.
 */
function sampler(storage: string) {
  let max = 0;
  let busiest: string[] = [];
  const raised: string[] = [];
  const violations: string[] = [];
  let previous: Observation | undefined;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const [neoset, pods, pvcs] = await Promise.all([
        stack.client.request<unknown>('GET', paths.neoset(stack.namespace, NAME)),
        stack.client.request<{ items: Pod[] }>('GET', paths.pods(stack.namespace)).then((l) => l.items),
        claims(),
      ]);
      const busy = new Set(pods.filter((p) => !isReady(p) || inPlace(p)).map((p) => p.metadata.name));
      for (const c of pvcs) if (capacityOf(c) !== requestOf(c)) busy.add(c.metadata.name.replace(/^data-/, ''));
      if (busy.size > max) (max = busy.size), (busiest = [...busy]);
      for (const c of pvcs) if (requestOf(c) === storage && !raised.includes(c.metadata.name)) raised.push(c.metadata.name);
      const now: Observation = { neoset, pods, pvcs, at: Date.now() };
      for (const v of checkInvariants({ ...now, ...(previous ? { previous } : {}) })) violations.push(`${v.invariant}: ${v.message}`);
      previous = now;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { max, busiest, raised, violations };
    },
  };
}

beforeAll(async () => {
  // The kubelet with its storage, as the dev stack starts it (each resize stage 400 ms).
  stack = await startStack({ prefix: 'claim-growth', resyncMs: 500, volumes: { resizeDelayMs: 400 } });
  // Active once a NeoSet over the replicas quota (our rule, not the schema's) is refused by it.
  const probe = neosetManifest({ name: 'probe', replicas: 1001 });
  admission = await startTestAdmission({
    name: 'claim-growth',
    namespace: stack.namespace,
    active: async () => {
      const r = await stack.kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(probe));
      return r.code !== 0 && r.stderr.includes('spec.replicas: 1001 is over the quota');
    },
  });
}, 120_000);

afterAll(async () => {
  if (stack) await stack.client.request('DELETE', `/apis/storage.k8s.io/v1/storageclasses/rigid-${stack.namespace}`).catch(() => undefined);
  await admission?.stop();
  await stack?.stop();
  // The PVs went with their claims (volumes.ts reclaims, also on stop): none left on the shared control plane.
  if (stack) {
    // (The pv-protection controller lets a Released PV go within a moment.)
    const left = async () => {
      const pvs = await stack.client.request<{ items: { metadata: { name: string }; spec: { claimRef?: { namespace?: string } } }[] }>('GET', '/api/v1/persistentvolumes');
      return pvs.items.filter((pv) => pv.spec.claimRef?.namespace === stack.namespace).map((pv) => pv.metadata.name);
    };
    await poll('the PVs gone', async () => ((await left()).length === 0 ? true : undefined), { timeoutMs: 10_000, intervalMs: 100 }).catch(() => undefined);
    expect(await left()).toEqual([]);
  }
});

describe('claims that grow (SPEC §4.12)', () => {
  let ids: ReturnType<typeof identities> = {};

  it('3 pods, 1Gi -> 2Gi under maxUnavailable 1: one pod at a time, highest ordinal first, every claim reports 2Gi, the pods keep their UIDs', async () => {
    const template = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3, spec: { volumeClaimTemplates: [template] }, updateStrategy: { maxUnavailable: 1 } }));
    // No ClaimsResized yet: it appears with the first claim short of its request (claims-condition.ts).
    await untilStatus(stack, NAME, '3 ready, claims bound at 1Gi', (n) => n.status?.readyReplicas === 3 && !n.status.conditions?.some((c) => c.type === 'ClaimsResized'));
    await poll('the claims bound at 1Gi', async () => ((await claims()).every((c) => c.status?.phase === 'Bound' && capacityOf(c) === '1Gi') ? true : undefined));
    const before = await claims();
    expect(before.map((c) => [c.metadata.name, c.status?.phase, capacityOf(c), c.spec.storageClassName])).toEqual(CLAIMS.map((n) => [n, 'Bound', '1Gi', 'standard']));
    ids = identities(stack.observer.pods(NAME));
    expect(Object.keys(ids)).toHaveLength(3);

    const sample = sampler('2Gi');
    const started = Date.now();
    const r = await stack.kubectl(storagePatch('2Gi'));
    expect(r.code, r.stderr).toBe(0);
    await untilStatus(stack, NAME, 'every claim reports 2Gi', (n) => n.status?.conditions?.some((c) => c.type === 'ClaimsResized' && c.status === 'True') === true && n.status.updatedReplicas === 3, 60_000);
    const seconds = (Date.now() - started) / 1000;
    const { max, busiest, raised, violations } = await sample.stop();

    const after = await claims();
    expect(after.map((c) => [c.metadata.name, requestOf(c), capacityOf(c)])).toEqual(CLAIMS.map((n) => [n, '2Gi', '2Gi']));
    for (const c of after) {
      const pv = await stack.client.request<{ spec: { capacity: { storage: string } } }>('GET', `/api/v1/persistentvolumes/${c.spec.volumeName}`);
      expect(pv.spec.capacity.storage).toBe('2Gi');
    }
    expect(max, `busiest sample: ${busiest.join(', ')}`).toBe(1);
    expect(raised).toEqual([...CLAIMS].reverse());
    expect(violations).toEqual([]);
    expect(identities(stack.observer.pods(NAME))).toEqual(ids);
    const events = await untilEvents(stack, NAME, 'three resizes', (es) => es.filter((e) => e.reason === 'SuccessfulResize').length === 3);
    // (Listed by name: the order is the sampler's `raised`.)
    expect(events.filter((e) => e.reason === 'SuccessfulResize').map((e) => e.message).sort()).toEqual(
      CLAIMS.map((c) => `resize Claim ${c} for Pod ${c.replace(/^data-/, '')} in NeoSet ${NAME}: storage 1Gi -> 2Gi`),
    );
    expect(events.some((e) => e.reason === 'FileSystemResizePending')).toBe(true);
    console.log(`1Gi -> 2Gi on 3 claims: ${seconds.toFixed(1)} s, at most ${max} pod unavailable or resizing at once`);
  }, 90_000);

  it('a shrink and any other change of a claim template are refused by the webhook with the field path', async () => {
    const shrink = await stack.kubectl(storagePatch('1Gi'));
    expect(shrink.code).not.toBe(0);
    expect(shrink.stderr).toContain('spec.volumeClaimTemplates[0].spec.resources.requests.storage: 1Gi is less than 2Gi: a claim cannot shrink');
    const modes = await stack.kubectl(['patch', 'neoset', NAME, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/volumeClaimTemplates/0/spec/accessModes', value: ['ReadWriteMany'] }])]);
    expect(modes.code).not.toBe(0);
    expect(modes.stderr).toContain('spec.volumeClaimTemplates[0].spec.accessModes: field is immutable (was ["ReadWriteOnce"], now ["ReadWriteMany"])');
    expect((await claims()).map(requestOf)).toEqual(['2Gi', '2Gi', '2Gi']);
  });

  it('a resize that fails (ControllerResizeError) fails the rollout with VolumeResizeFailed naming the claim; once it is gone the rollout goes on', async () => {
    const failing = CLAIMS[1];
    const annotated = await stack.kubectl(['annotate', 'pvc', failing, `${ANNOTATION_RESIZE_ERROR}=out of space on the fake pool`]);
    expect(annotated.code, annotated.stderr).toBe(0);
    const r = await stack.kubectl(storagePatch('3Gi'));
    expect(r.code, r.stderr).toBe(0);
    const message = `claim ${failing} (pod ${NAME}-1): resize to 3Gi failed: ControllerResizeError: out of space on the fake pool`;
    const failed = await untilStatus(stack, NAME, 'Failed for the resize', (n) => n.status?.phase === 'Failed', 60_000);
    expect(failed.status?.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'False', reason: 'VolumeResizeFailed', message: expect.stringContaining(message) });
    expect(failed.status?.conditions?.find((c) => c.type === 'ClaimsResized')).toMatchObject({ status: 'False', reason: 'VolumeResizeFailed' });
    await untilEvents(stack, NAME, 'the Warning', (es) => es.some((e) => e.type === 'Warning' && e.reason === 'VolumeResizeFailed' && e.message === message));
    // While Failed nothing more is patched: ordinal 2 grew before, ordinal 0 waits.
    expect((await claims()).map((c) => [requestOf(c), capacityOf(c)])).toEqual([['2Gi', '2Gi'], ['3Gi', '2Gi'], ['3Gi', '3Gi']]);

    const cleared = await stack.kubectl(['annotate', 'pvc', failing, `${ANNOTATION_RESIZE_ERROR}-`]);
    expect(cleared.code, cleared.stderr).toBe(0);
    await untilStatus(stack, NAME, 'every claim reports 3Gi', (n) => n.status?.phase !== 'Failed' && n.status?.conditions?.some((c) => c.type === 'ClaimsResized' && c.status === 'True') === true, 60_000);
    expect((await claims()).map(capacityOf)).toEqual(['3Gi', '3Gi', '3Gi']);
    expect(identities(stack.observer.pods(NAME))).toEqual(ids);
  }, 90_000);

  it("the API server's resize admission refuses a raise on a class without allowVolumeExpansion: reported as ReplicaFailure and a FailedUpdate Event", async () => {
    const rigid = `rigid-${stack.namespace}`;
    await stack.client.request('POST', '/apis/storage.k8s.io/v1/storageclasses', {
      body: { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: rigid }, provisioner: PROVISIONER, allowVolumeExpansion: false, volumeBindingMode: 'Immediate' },
    });
    const template = { metadata: { name: 'data' }, spec: { storageClassName: rigid, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    await applyNeoSet(stack, neosetManifest({ name: 'rigid', replicas: 1, spec: { volumeClaimTemplates: [template] } }));
    await untilStatus(stack, 'rigid', 'ready', (n) => n.status?.readyReplicas === 1);
    const rigidClaim = () => stack.client.request<Claim>('GET', paths.pvc(stack.namespace, 'data-rigid-0'));
    await poll('the claim bound', async () => ((await rigidClaim()).status?.phase === 'Bound' ? true : undefined));
    const raise = await stack.kubectl(['patch', 'neoset', 'rigid', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/volumeClaimTemplates/0/spec/resources/requests/storage', value: '2Gi' }])]);
    expect(raise.code, raise.stderr).toBe(0);
    const refused = 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize';
    const n = await untilStatus(stack, 'rigid', 'the refusal reported', (x) => x.status?.conditions?.some((c) => c.type === 'ReplicaFailure' && c.status === 'True') === true, 30_000);
    // The refusal's code and reason (SPEC §2.5), not the API server's words (the reconcile log has them).
    const failure = n.status?.conditions?.find((c) => c.type === 'ReplicaFailure')?.message;
    expect(failure).toMatch(/: 403 Forbidden$/);
    expect(failure).not.toContain(refused);
    await untilEvents(stack, 'rigid', 'FailedUpdate', (es) => es.some((e) => e.type === 'Warning' && e.reason === 'FailedUpdate' && e.message === failure));
    const claim = await stack.client.request<Claim>('GET', paths.pvc(stack.namespace, 'data-rigid-0'));
    expect([requestOf(claim), capacityOf(claim)]).toEqual(['1Gi', '1Gi']);
  }, 60_000);
});
