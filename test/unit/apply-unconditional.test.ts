// The applier never sends a write without a resourceVersion (SPEC §2: "never an empty one"): the API
// server would take it as unconditional. Objects come from the API server with one — reconcile's
// from lists, readiness's from a GET — so an empty one is a bug or a forged object: refused before
// any request, a failed outcome.
import { describe, expect, it } from 'vitest';
import { decide } from '../../shared/core/decide.ts';
import type { Action } from '../../shared/core/plan.ts';
import { applyPlan, applyPodWrites, UnconditionalWriteError } from '../../shared/k8s/apply.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { settled } from './helpers.ts';
import type { World } from './world.ts';

type Sent = { verb: string; path: string };

/** The world's API, keeping every request sent to it. */
function recording(w: World): { client: KubeClient; sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    client: {
      request: (verb, path, opts) => {
        sent.push({ verb, path });
        return w.api.client.request(verb, path, opts);
      },
    },
  };
}

const podWrites = (sent: Sent[]) => sent.filter((s) => s.verb !== 'GET' && /\/pods\//.test(s.path));
const owner = { name: 'web', namespace: 'default', uid: 'uid-web' };
const gate = { status: 'True' as const, reason: 'PodStarted', message: 'started', lastTransitionTime: '2025-01-01T00:00:00Z' };

describe('no write without a resourceVersion', () => {
  it('readiness writes (applyPodWrites): refused before any request, a failed outcome', async () => {
    const w = await settled({ replicas: 1 });
    const pod = w.pod(0)!;
    const { client, sent } = recording(w);
    for (const action of [
      { kind: 'setInPlaceReady', pod: { name: pod.metadata.name, uid: pod.metadata.uid!, resourceVersion: '' }, ...gate },
      { kind: 'finishInPlaceUpdate', pod: { name: pod.metadata.name, uid: pod.metadata.uid!, resourceVersion: '' }, revision: 'r', durationSeconds: 1, gate },
    ] satisfies Action[]) {
      const r = await applyPodWrites(client, owner, [action]);
      expect(r.outcome).toBe('failed');
      expect(r.written).toEqual([]);
      expect(r.error).toBeInstanceOf(UnconditionalWriteError);
      expect(r.error?.message).toContain('without a resourceVersion');
    }
    expect(sent).toEqual([]);
  });

  it("reconcile's plan (applyPlan) decided from pods with no resourceVersion: no pod write, a failed outcome", async () => {
    const w = await settled({ replicas: 2, updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: 10 } } });
    w.setImage('nginx:v2');
    const snapshot = w.snapshot();
    for (const p of snapshot.pods) delete p.metadata.resourceVersion;
    const plan = decide(snapshot, new Date(w.now));
    expect(plan.actions.map((a) => a.kind)).toContain('markDraining');
    const { client, sent } = recording(w);
    const r = await applyPlan(client, snapshot, plan);
    expect(r.outcome).toBe('failed');
    expect(r.error).toBeInstanceOf(UnconditionalWriteError);
    expect(r.written).not.toContain('markDraining');
    expect(podWrites(sent)).toEqual([]);
  });

  it('a delete with no resourceVersion precondition is refused as well', async () => {
    const w = await settled({ replicas: 1 });
    const pod = w.pod(0)!;
    const snapshot = w.snapshot();
    const { client, sent } = recording(w);
    const del: Action = { kind: 'deletePod', pod: { name: pod.metadata.name, uid: pod.metadata.uid!, resourceVersion: '' }, event: { type: 'Normal', reason: 'x', message: 'x' } };
    const r = await applyPlan(client, snapshot, { actions: [del], claim: false, status: null, requeueAfter: null });
    expect(r.outcome).toBe('failed');
    expect(r.error?.message).toMatch(/^DELETE web-0: 428 PreconditionRequired/);
    expect(podWrites(sent)).toEqual([]);
  });

  it('a status write for a NeoSet with no resourceVersion is refused', async () => {
    const w = await settled({ replicas: 1 });
    const snapshot = w.snapshot();
    delete snapshot.neoset.metadata.resourceVersion;
    const { client, sent } = recording(w);
    await expect(applyPlan(client, snapshot, { actions: [], claim: false, status: { ...snapshot.neoset.status, replicas: 7 } as never, requeueAfter: null })).resolves.toMatchObject({ outcome: 'failed' });
    expect(sent.filter((s) => s.verb !== 'GET' && s.path.includes('/neosets/'))).toEqual([]);
  });
});
