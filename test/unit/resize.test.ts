// Resources in place (SPEC §4.9): a template change of containers' cpu/memory goes through the
// pods/resize subresource, chained on the image patch that records it; done when the kubelet reports
// the new values and no resize condition remains.
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/core/objects.ts';
import { chain, type settled } from './helpers.ts';
import { stateOf, World } from './world.ts';

const cpu = (requests: string, limits = '500m') => ({ requests: { cpu: requests, memory: '64Mi' }, limits: { cpu: limits, memory: '128Mi' } });

/** The template's first container resources (and resizePolicy) set; settled on them. */
async function withResources(policy: 'NotRequired' | 'RestartContainer' = 'NotRequired', spec: Parameters<typeof settled>[0] = {}): Promise<World> {
  const w = new World({ replicas: 5, updateStrategy: { maxUnavailable: 2 }, ...spec });
  setResources(w, cpu('100m'), policy);
  if ((await w.settle()) < 0) throw new Error('did not settle');
  return w;
}

function setResources(w: World, resources: object, policy?: string): void {
  w.edit((s) => {
    const c = s.template.spec.containers[0] as Record<string, unknown>;
    c.resources = resources;
    if (policy) c.resizePolicy = [{ resourceName: 'cpu', restartPolicy: policy }];
  });
}

const uidsNames = ['web-0', 'web-1', 'web-2', 'web-3', 'web-4'];

/** Reconcile and let the kubelet catch up until nothing moves; every write of every plan, in order. */
async function drive(w: World): Promise<string[]> {
  const writes: string[] = [];
  for (let round = 0; round < 100; round++) {
    const r = await w.reconcile();
    writes.push(...chain(r.plan));
    const before = JSON.stringify([...w.pods.values()].map((p) => p.status));
    w.kubeletSettle(1);
    const quiet = before === JSON.stringify([...w.pods.values()].map((p) => p.status));
    if (r.plan.actions.length === 0 && quiet) {
      if (r.plan.requeueAfter === null) return writes;
      w.advance(r.plan.requeueAfter);
    }
  }
  throw new Error('did not settle');
}

const status = (p: Pod) => p.status!.containerStatuses![0];
const pods = (w: World) => [...w.pods.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
const unavailable = (w: World) => pods(w).filter((p) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True').length;

describe('resources in place (§4.9)', () => {
  it('cpu 100m -> 200m, NotRequired: every pod resized in place, same UID and restartCount, 200m reported, budget kept', async () => {
    const w = await withResources();
    const before = pods(w).map((p) => [p.metadata.uid, status(p).restartCount]);
    setResources(w, cpu('200m'));
    const first = await w.reconcile();
    // Drain (state + gate), the patch recording the target, the resize: one chain per pod, budget 2.
    expect(chain(first.plan).filter((s) => s.endsWith('web-4'))).toEqual(['markDraining:web-4', 'patchImages:web-4', 'resizePod:web-4']);
    expect(chain(first.plan).filter((s) => s.startsWith('resizePod'))).toHaveLength(2);
    expect(stateOf(w.pod(4))!.targetResources).toEqual({ app: { resources: cpu('200m') } });
    let worst = 0;
    expect(await w.settle(200, () => (worst = Math.max(worst, unavailable(w))))).toBeGreaterThan(0);
    expect(worst).toBeLessThanOrEqual(2);
    expect(pods(w).map((p) => [p.metadata.uid, status(p).restartCount])).toEqual(before);
    expect(pods(w).map((p) => status(p).resources!.requests!.cpu)).toEqual(Array(5).fill('200m'));
    expect(pods(w).every((p) => stateOf(p) === null && !p.status!.conditions!.some((c) => c.type.startsWith('PodResize')))).toBe(true);
    expect(w.neoset.status!.phase).toBe('Completed');
  });

  it('RestartContainer: the kubelet restarts the container, restartCount + 1, and the update waits for it', async () => {
    const w = await withResources('RestartContainer');
    const before = pods(w).map((p) => status(p).restartCount);
    setResources(w, cpu('200m'), 'RestartContainer');
    await w.settle();
    expect(pods(w).map((p) => status(p).restartCount)).toEqual(before.map((n) => n + 1));
    expect(w.neoset.status!.phase).toBe('Completed');
  });

  it('an image and memory change together: one in-place update per pod (one patch, one resize), no recreate', async () => {
    const w = await withResources();
    const uids = pods(w).map((p) => p.metadata.uid);
    w.edit((s) => {
      const c = s.template.spec.containers[0] as Record<string, unknown>;
      c.image = 'nginx:v2';
      c.resources = { requests: { cpu: '100m', memory: '96Mi' }, limits: { cpu: '500m', memory: '192Mi' } };
    });
    const writes = await drive(w);
    expect(pods(w).map((p) => p.metadata.uid)).toEqual(uids);
    expect(pods(w).map((p) => [status(p).image, status(p).resources!.limits!.memory])).toEqual(Array(5).fill(['docker.io/library/nginx:v2', '192Mi']));
    // Per pod: one drain, one patch (image + the recorded resize), one resize, one finish.
    for (const name of uidsNames) {
      expect(writes.filter((s) => s.endsWith(`:${name}`) && s !== `setInPlaceReady:${name}`)).toEqual([
        `markDraining:${name}`,
        `patchImages:${name}`,
        `resizePod:${name}`,
        `finishInPlaceUpdate:${name}`,
      ]);
    }
  });

  it('beyond the node allocatable: the API server refuses the resize, the rollout fails at once (ResizeInfeasible), a rollback recovers', async () => {
    const w = await withResources();
    w.api.setNodeAllocatable({ cpu: '8', memory: '32Gi' });
    const v1 = w.neoset.status!.updateRevision!;
    const n1 = [...w.revisions.values()].find((r) => r.metadata.name === v1)!.revision;
    setResources(w, cpu('9', '9'));
    await w.reconcile(); // starts 2 (the budget); both resizes refused, the refusal recorded on each pod
    const touched = pods(w).filter((p) => stateOf(p) !== null);
    expect(touched.map((p) => p.metadata.name)).toEqual(['web-3', 'web-4']);
    expect(stateOf(touched[0])!.resizeRefused).toMatch(/node didn't have enough allocatable resources: cpu, requested: 9000, allocatable: 8000/);
    const failed = await w.reconcile();
    expect(failed.plan.status).toMatchObject({ phase: 'Failed' });
    const progressing = w.neoset.status!.conditions!.find((c) => c.type === 'Progressing')!;
    expect(progressing).toMatchObject({ status: 'False', reason: 'ResizeInfeasible' });
    expect(progressing.message).toMatch(/pod web-\d: resize .* infeasible: .*allocatable/);
    await w.run(5);
    expect(pods(w).filter((p) => stateOf(p) !== null)).toHaveLength(2); // nothing more started
    expect(w.rollbackTo(n1)).toBe(true);
    expect(await w.settle()).toBeGreaterThan(0);
    expect(w.neoset.status!.phase).toBe('Completed');
    expect(pods(w).map((p) => status(p).resources!.requests!.cpu)).toEqual(Array(5).fill('100m'));
  });

  it('the kubelet says Infeasible: Failed with its message; Deferred waits within timeoutSeconds', async () => {
    const w = await withResources();
    w.resizeVerdict = () => 'Deferred';
    setResources(w, cpu('300m'));
    await w.run(5);
    expect(w.neoset.status!.phase).toBe('RollingOut');
    expect(w.pod(4)!.status!.conditions!.find((c) => c.type === 'PodResizePending')).toMatchObject({ reason: 'Deferred' });
    w.resizeVerdict = () => 'Infeasible';
    await w.run(2);
    expect(w.neoset.status!.phase).toBe('Failed');
    expect(w.neoset.status!.conditions!.find((c) => c.type === 'Progressing')).toMatchObject({
      reason: 'ResizeInfeasible',
      message: expect.stringContaining('Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"'),
    });
    w.resizeVerdict = undefined;
  });

  it('a QoS class change is not a resize: recreated under InPlaceIfPossible, Failed (InPlaceOnlyBlocked) under InPlaceOnly', async () => {
    const w = await withResources();
    const uids = pods(w).map((p) => p.metadata.uid);
    setResources(w, { requests: { cpu: '500m', memory: '128Mi' }, limits: { cpu: '500m', memory: '128Mi' } }); // Burstable -> Guaranteed
    const r = await w.reconcile();
    expect(r.plan.actions.some((a) => a.kind === 'resizePod')).toBe(false);
    await w.settle();
    expect(pods(w).map((p) => p.metadata.uid).filter((u) => uids.includes(u))).toEqual([]);

    const only = await withResources('NotRequired', { updateStrategy: { type: 'InPlaceOnly', maxUnavailable: 2 } });
    setResources(only, { requests: { cpu: '500m', memory: '128Mi' }, limits: { cpu: '500m', memory: '128Mi' } });
    await only.run(2);
    expect(only.neoset.status!.conditions!.find((c) => c.type === 'Progressing')).toMatchObject({
      reason: 'InPlaceOnlyBlocked',
      message: expect.stringContaining('spec.containers[0].resources (QoS class Burstable -> Guaranteed)'),
    });
  });
});
