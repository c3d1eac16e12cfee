// Scaling (SPEC §4.3) and claims (§4.1): OrderedReady one ordinal at a time, Parallel all at once,
// failed and terminating pods, and the claims' retention policy.
import { describe, expect, it } from 'vitest';
import { API_VERSION, KIND } from '../../shared/api/names.ts';
import { decide } from '../../shared/core/decide.ts';
import { plan, settled, steps } from './helpers.ts';
import { World } from './world.ts';

const claims = [{ metadata: { name: 'data', labels: { disk: 'ssd' } }, spec: { resources: { requests: { storage: '1Gi' } } } }];
const neosetOwner = { apiVersion: API_VERSION, kind: KIND, name: 'web', uid: 'neoset-uid' };

describe('OrderedReady', () => {
  it('creates one ordinal per decision, the next only once the previous is Running and Ready', async () => {
    const w = new World({ replicas: 3 });
    expect(steps(plan(w))).toEqual(['createRevision', 'createPod:web-0']);
    await w.reconcile();
    expect(steps(plan(w))).toEqual([]); // web-0 Pending
    w.kubeletSync('web-0');
    expect(steps(plan(w))).toEqual(['setInPlaceReady:web-0']); // running: open its gate, still no web-1
    await w.reconcile();
    expect(steps(plan(w))).toEqual([]); // gate True, Ready not yet recomputed by the kubelet
    w.kubeletSync('web-0');
    expect(steps(plan(w))).toEqual(['createPod:web-1']);
  });

  it('a scale-up during a rollout waits while a pod is in its update, though its Ready condition still says True (the kubelet not yet caught up with the drain)', async () => {
    const w = await settled({ replicas: 3, podManagementPolicy: 'OrderedReady' });
    w.setImage('nginx:v2');
    await w.reconcile(); // web-2 drained: gate False, its Ready not yet recomputed
    expect(w.pod(2)!.status!.conditions!.find((c) => c.type === 'Ready')?.status).toBe('True');
    w.edit((s) => void (s.replicas = 4));
    expect(steps(plan(w)).filter((a) => a.startsWith('createPod'))).toEqual([]);
  });

  it('waits while a pod is not Ready, and never reuses a name held by a terminating pod', async () => {
    const w = await settled({ replicas: 3 });
    w.kubeletUnready('web-0');
    w.userDelete('web-2');
    expect(steps(plan(w))).toEqual([]);
    w.kubeletSettle(1); // web-0 ready again; web-2 gone
    expect(steps(plan(w))).toEqual(['createPod:web-2']);
  });

  it('deletes a failed pod first, and recreates it once it is gone', async () => {
    const w = await settled({ replicas: 3 });
    w.kubeletFail('web-1');
    expect(steps(plan(w))).toEqual(['deletePod:web-1']);
    await w.reconcile(); // a pod that has finished is deleted at once (no grace period to wait for)
    expect(w.pod(1)).toBeUndefined();
    expect(steps(plan(w))).toEqual(['createPod:web-1']);
  });

  it('scales down from the highest ordinal, one at a time, once the one above is gone', async () => {
    const w = await settled({ replicas: 5 });
    w.edit((s) => void (s.replicas = 2));
    expect(steps(plan(w))).toEqual(['deletePod:web-4']);
    await w.reconcile();
    expect(steps(plan(w))).toEqual([]);
    w.kubeletSettle(1);
    expect(steps(plan(w))).toEqual(['deletePod:web-3']);
  });

  it('does not scale down while a remaining pod is not Ready', async () => {
    const w = await settled({ replicas: 3 });
    w.edit((s) => void (s.replicas = 2));
    w.kubeletUnready('web-0');
    expect(steps(plan(w))).toEqual([]);
  });
});

describe('Parallel', () => {
  it('creates every missing pod at once, and deletes every condemned pod at once', async () => {
    const w = new World({ replicas: 3, podManagementPolicy: 'Parallel' });
    expect(steps(plan(w))).toEqual(['createRevision', 'createPod:web-0', 'createPod:web-1', 'createPod:web-2']);
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    w.edit((s) => void (s.replicas = 0));
    expect(steps(plan(w))).toEqual(['deletePod:web-2', 'deletePod:web-1', 'deletePod:web-0']);
  });

  it('deletes failed pods without waiting for the others', async () => {
    const w = await settled({ replicas: 3, podManagementPolicy: 'Parallel' });
    w.kubeletFail('web-2');
    w.kubeletUnready('web-0');
    expect(steps(plan(w))).toEqual(['deletePod:web-2']);
  });
});

describe('claims from volumeClaimTemplates', () => {
  it('creates the claim before its pod, with selector and name labels; the pod mounts it', async () => {
    const w = new World({ replicas: 1, volumeClaimTemplates: claims });
    const p = plan(w);
    expect(steps(p)).toEqual(['createRevision', 'createPVC:data-web-0', 'createPod:web-0']);
    expect(p.actions[1]).toMatchObject({
      pvc: { metadata: { name: 'data-web-0', namespace: 'default', labels: { disk: 'ssd', app: 'web', 'neoset.neo.io/name': 'web' } }, spec: claims[0].spec },
    });
    expect((p.actions[1] as { pvc: { metadata: object } }).pvc.metadata).not.toHaveProperty('ownerReferences');
    expect(p.actions[2]).toMatchObject({ pod: { spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } }] } } });
  });

  it('whenDeleted=Delete: the NeoSet owns every claim (not as controller)', async () => {
    const w = new World({ replicas: 1, volumeClaimTemplates: claims, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' } });
    expect(plan(w).actions[1]).toMatchObject({ pvc: { metadata: { ownerReferences: [neosetOwner] } } });
    expect(JSON.stringify(plan(w).actions[1])).not.toContain('"controller"');
  });

  it('whenScaled=Delete: the condemned pod becomes the claim owner before it is deleted; the claim goes with it', async () => {
    const w = await settled({ replicas: 2, volumeClaimTemplates: claims, persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete', whenDeleted: 'Delete' } });
    w.edit((s) => void (s.replicas = 1));
    const p = plan(w);
    expect(steps(p)).toEqual(['setPVCOwners:data-web-1', 'deletePod:web-1']);
    expect(p.actions[0]).toMatchObject({ ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web-1', uid: w.pod(1)!.metadata.uid }] });
    await w.reconcile();
    w.kubeletSettle(1);
    expect(w.pvcs.has('data-web-1')).toBe(false);
    expect(w.pvcs.has('data-web-0')).toBe(true);
  });

  it('whenScaled=Retain: the claim of a condemned ordinal stays, and is used again on scale-up', async () => {
    const w = await settled({ replicas: 2, volumeClaimTemplates: claims });
    w.edit((s) => void (s.replicas = 1));
    expect(steps(plan(w))).toEqual(['deletePod:web-1']);
    await w.settle();
    expect(w.pvcs.has('data-web-1')).toBe(true);
    w.edit((s) => void (s.replicas = 2));
    expect(steps(plan(w))).toEqual(['createPod:web-1']);
  });

  it('a claim left owned by a pod (scale-down interrupted, then scale-up) is given back to the policy', async () => {
    const w = await settled({ replicas: 2, volumeClaimTemplates: claims, persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete' } });
    w.edit((s) => void (s.replicas = 1));
    await w.reconcile({ crashAfter: 2 }); // the claim, then the claim's new owner web-1, which was not deleted
    w.edit((s) => void (s.replicas = 2));
    const p = plan(w);
    expect(steps(p)).toEqual(['setPVCOwners:data-web-1']);
    expect(p.actions[0]).toMatchObject({ ownerReferences: [] });
  });

  it('waits for a terminating claim before creating the pod that mounts it', async () => {
    const w = await settled({ replicas: 1, volumeClaimTemplates: claims });
    w.edit((s) => void (s.replicas = 2));
    w.pvcs.set('data-web-1', { metadata: { name: 'data-web-1', labels: { 'neoset.neo.io/name': 'web' }, deletionTimestamp: '2025-01-01T00:00:00Z' } });
    expect(steps(plan(w))).toEqual([]);
  });

  it('keeps owner references that are not NeoSet\'s', async () => {
    const w = await settled({ replicas: 1, volumeClaimTemplates: claims, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' } });
    const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'cm' };
    w.pvcs.get('data-web-0')!.metadata.ownerReferences = [other];
    expect(plan(w).actions).toEqual([
      { kind: 'setPVCOwners', pvc: expect.objectContaining({ name: 'data-web-0' }), ownerReferences: [other, neosetOwner] },
    ]);
  });
});

describe('a NeoSet being deleted', () => {
  it('gets no actions and no status', async () => {
    const w = await settled({ replicas: 2 });
    w.edit((s) => void (s.replicas = 5));
    w.neoset.metadata.deletionTimestamp = '2025-01-01T00:00:00Z'; // (written to the store before the next read)
    expect(decide(w.snapshot(), new Date(w.now))).toEqual({ actions: [], claim: false, status: null, requeueAfter: null });
  });
});
