// Claims that grow (SPEC §4.12): a raised storage request patches the PVCs of pods 0..replicas-1,
// highest ordinal first, within maxUnavailable (a pod whose claims resize is in its update until
// status.capacity reports the request), ordinals >= partition, not while paused; the resize
// machinery's conditions in ClaimsResized and Events; a failed resize fails the rollout.
import { describe, expect, it } from 'vitest';
import type { NeoSetSpecInput } from '../../shared/api/neoset.ts';
import { bindClaims, resizeClaim, resizingClaims } from './csi.ts';
import { plan, settled, steps } from './helpers.ts';
import type { World } from './world.ts';

const claims = (storage = '1Gi') => [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } }];

async function grown(spec: Partial<NeoSetSpecInput> = {}): Promise<World> {
  const w = await settled({ replicas: 3, volumeClaimTemplates: claims(), ...spec });
  bindClaims(w);
  await w.reconcile();
  w.edit((s) => void (s.volumeClaimTemplates[0].spec.resources = { requests: { storage: '2Gi' } }));
  return w;
}

const requests = (w: World) => [0, 1, 2].map((i) => (w.pvcs.get(`data-web-${i}`)?.spec as { resources: { requests: { storage: string } } }).resources.requests.storage);
const condition = (w: World, type: string) => w.neoset.status?.conditions?.find((c) => c.type === type);

describe('claims that grow (§4.12)', () => {
  it('a settled NeoSet with bound claims that never fell short: no ClaimsResized condition, nothing to do (an upgrade writes nothing)', async () => {
    const w = await settled({ replicas: 3, volumeClaimTemplates: claims() });
    bindClaims(w);
    await w.reconcile();
    expect(steps(plan(w))).toEqual([]);
    expect(condition(w, 'ClaimsResized')).toBeUndefined();
  });

  it('patches one claim at a time under maxUnavailable 1, highest ordinal first, each once the previous reports its capacity', async () => {
    const w = await grown();
    expect(steps(plan(w))).toEqual(['resizeClaim:data-web-2']);
    await w.reconcile();
    expect(requests(w)).toEqual(['1Gi', '1Gi', '2Gi']);
    expect(w.neoset.status).toMatchObject({ phase: 'RollingOut', updatedReplicas: 0, currentUpdatePods: [] });
    expect(condition(w, 'Progressing')).toMatchObject({ status: 'True' });
    expect(condition(w, 'ClaimsResized')).toMatchObject({ status: 'False', reason: 'Resizing', message: '0/3 claims report their requested storage; data-web-2: 1Gi of 2Gi (resizing); data-web-1: 1Gi of 2Gi (waiting for its turn); data-web-0: 1Gi of 2Gi (waiting for its turn)' });
    // web-2's claim resizes: its slot is taken, nothing else starts; a claim's status sends no
    // event, so the decision looks again in 5 s.
    expect(steps(plan(w))).toEqual([]);
    expect(plan(w).requeueAfter).toBe(5);
    resizeClaim(w, 'data-web-2', 'done');
    expect(steps(plan(w))).toEqual(['resizeClaim:data-web-1']);
    await w.reconcile();
    resizeClaim(w, 'data-web-1', 'done');
    await w.reconcile();
    expect(requests(w)).toEqual(['2Gi', '2Gi', '2Gi']);
    resizeClaim(w, 'data-web-0', 'done');
    await w.reconcile();
    expect(w.neoset.status).toMatchObject({ phase: 'Idle', updatedReplicas: 3, currentUpdatePods: [] });
    expect(condition(w, 'ClaimsResized')).toMatchObject({ status: 'True', message: '3/3 claims report their requested storage' });
    expect(w.eventReasons().filter((r) => r === 'SuccessfulResize')).toHaveLength(3);
    // The pods were never touched: same uids, no update state.
    expect(steps(plan(w))).toEqual([]);
  });

  it('the patch is conditional on the claim as read: a claim changed since is decided again, not overwritten', async () => {
    const w = await grown();
    const snapshot = w.observation();
    w.pvcs.get('data-web-2')!.metadata.annotations = { 'someone.example/touched': 'yes' };
    const r = await w.reconcile({ snapshot });
    expect(r.conflict).toBe(true);
    expect(requests(w)).toEqual(['1Gi', '1Gi', '1Gi']);
    await w.reconcile();
    expect(requests(w)).toEqual(['1Gi', '1Gi', '2Gi']);
  });

  it('maxUnavailable 2 patches two claims at once; an unavailable pod adds nothing to the budget', async () => {
    const w = await grown({ updateStrategy: { maxUnavailable: 2 } });
    expect(steps(plan(w))).toEqual(['resizeClaim:data-web-2', 'resizeClaim:data-web-1']);
    const one = await grown();
    one.kubeletUnready('web-0');
    // web-0 is down already: the budget is spent by it, and it alone may go (it adds nothing).
    expect(steps(plan(one))).toEqual(['resizeClaim:data-web-0']);
  });

  it('respects the partition and pause', async () => {
    const w = await grown({ updateStrategy: { partition: 2, maxUnavailable: 3 } });
    expect(steps(plan(w))).toEqual(['resizeClaim:data-web-2']);
    const paused = await grown({ updateStrategy: { pause: true } });
    expect(steps(plan(paused))).toEqual([]);
    await paused.reconcile();
    expect(paused.neoset.status?.phase).toBe('Paused');
    paused.edit((s) => void (s.updateStrategy.pause = false));
    expect(steps(plan(paused))).toEqual(['resizeClaim:data-web-2']);
  });

  it('under OnDelete nothing grows (nothing of a rollout starts); a claim resizing toward an older request is patched again on its slot', async () => {
    const onDelete = await grown({ updateStrategy: { type: 'OnDelete' } });
    expect(steps(plan(onDelete))).toEqual([]);
    const w = await grown();
    await w.reconcile(); // data-web-2 -> 2Gi, resizing
    w.edit((s) => void (s.volumeClaimTemplates[0].spec.resources = { requests: { storage: '3Gi' } }));
    // web-2 holds the one slot: it is patched on toward 3Gi, nothing else starts.
    expect(steps(plan(w))).toEqual(['resizeClaim:data-web-2']);
  });

  it('a pod whose claims resize counts for the pods\' budget: an image change starts only it', async () => {
    const w = await grown();
    await w.reconcile(); // data-web-2 patched, resizing
    w.setImage('nginx:v2');
    expect(steps(plan(w))).toEqual(['createRevision', 'markDraining:web-2']);
  });

  it('FileSystemResizePending is shown in ClaimsResized and an Event', async () => {
    const w = await grown();
    await w.reconcile();
    resizeClaim(w, 'data-web-2', 'FileSystemResizePending');
    await w.reconcile();
    expect(condition(w, 'ClaimsResized')).toMatchObject({ status: 'False', reason: 'FileSystemResizePending' });
    expect(w.eventReasons()).toContain('FileSystemResizePending');
    expect(steps(plan(w))).toEqual(['recordEvent:FileSystemResizePending']); // the same Event (one key): recorded once
  });

  it.each([
    ['error', 'ControllerResizeError: resize volume "pv-1" by resizer "fake.csi.neo.io" failed: out of space'],
    ['infeasible', 'ControllerResizeInfeasible'],
  ] as const)('a resize that fails (%s) fails the rollout with VolumeResizeFailed naming the claim and cause', async (how, cause) => {
    const w = await grown();
    await w.reconcile();
    resizeClaim(w, 'data-web-2', how);
    const p = plan(w);
    expect(p.status).toMatchObject({ phase: 'Failed' });
    await w.reconcile();
    const message = `claim data-web-2 (pod web-2): resize to 2Gi failed: ${cause}`;
    expect(condition(w, 'Progressing')).toMatchObject({ status: 'False', reason: 'VolumeResizeFailed', message: `0/3 updated; ${message}` });
    expect(condition(w, 'ClaimsResized')).toMatchObject({ status: 'False', reason: 'VolumeResizeFailed' });
    expect(w.eventReasons()).toContain('VolumeResizeFailed');
    // Nothing else is patched while it is Failed; once the volume grows the rollout goes on.
    expect(steps(plan(w)).filter((s) => s.startsWith('resizeClaim'))).toEqual([]);
    resizeClaim(w, 'data-web-2', 'done');
    expect(steps(plan(w))).toEqual(['resizeClaim:data-web-1']);
  });

  it('an unbound claim is not patched (the API server resizes bound claims only); it waits', async () => {
    const w = await settled({ replicas: 1, volumeClaimTemplates: claims() });
    w.edit((s) => void (s.volumeClaimTemplates[0].spec.resources = { requests: { storage: '2Gi' } }));
    expect(steps(plan(w))).toEqual([]);
    await w.reconcile();
    expect(condition(w, 'ClaimsResized')).toMatchObject({ status: 'False', reason: 'ClaimNotBound' });
    bindClaims(w);
    expect(steps(plan(w))).toEqual(['resizeClaim:data-web-0']);
  });

  it('never lowers a claim: one raised by hand beyond the template is done as it is', async () => {
    const w = await grown();
    (w.pvcs.get('data-web-2')!.spec as { resources: unknown }).resources = { requests: { storage: '5Gi' } };
    resizeClaim(w, 'data-web-2', 'done');
    expect(steps(plan(w))).toEqual(['resizeClaim:data-web-1']);
    expect(resizingClaims(w)).toEqual([]);
  });
});
