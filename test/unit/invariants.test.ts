// The invariant checker (SPEC §7) flags each kind of bad state or transition, and stays quiet on
// good ones — including when, as in the e2e tests, it only gets the NeoSet and its pods.
import { describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_STATE, LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import { checkInvariants, type Invariant } from '../../shared/core/invariants.ts';
import type { InPlaceState } from '../../shared/core/plan.ts';
import { newPod } from '../../shared/core/pods.ts';
import { rfc3339 } from '../../shared/core/time.ts';
import type { Observation } from '../../shared/core/invariant-view.ts';
import { settled } from './helpers.ts';
import type { World } from './world.ts';

const found = (w: World, previous?: Observation): Invariant[] => checkInvariants({ ...w.observation(), previous }).map((v) => v.invariant);

function draining(w: World, name: string, extra: Partial<InPlaceState> = {}): void {
  const pod = w.pods.get(name)!;
  const state: InPlaceState = { revision: w.neoset.status!.updateRevision!, phase: 'Draining', generation: 1, drainStartedAt: rfc3339(w.now), ...extra };
  pod.metadata.annotations = { ...pod.metadata.annotations, [ANNOTATION_INPLACE_STATE]: JSON.stringify(state) };
}

/** A settled NeoSet with a new template whose revision and status are written. */
function rolling(spec: Parameters<typeof settled>[0] = {}): World {
  const w = settled({ replicas: 4, ...spec });
  w.setImage('nginx:v2');
  w.reconcile({ crashAfter: 1 }); // createRevision only
  w.neoset.status = { ...w.neoset.status, updateRevision: [...w.revisions.values()].find((r) => r.revision === 2)!.metadata.name };
  return w;
}

describe('checkInvariants', () => {
  it('finds nothing along a correct rollout, with or without revisions, claims and time', () => {
    const w = settled({ replicas: 3, volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: {} }] });
    w.setImage('nginx:v2');
    const all: Invariant[] = [];
    w.settle(100, (previous, current) => {
      all.push(...checkInvariants({ ...current, previous }).map((v) => v.invariant));
      const bare = { neoset: current.neoset, pods: current.pods };
      all.push(...checkInvariants({ ...bare, previous: { neoset: previous.neoset, pods: previous.pods } }).map((v) => v.invariant));
    });
    expect(all).toEqual([]);
  });

  it('Malformed: a NeoSet that does not parse', () => {
    expect(checkInvariants({ neoset: { kind: 'NeoSet' }, pods: [] })[0].invariant).toBe('Malformed');
  });

  it('Identity: a pod without the readiness gate, with another controller, or a name that is not an ordinal', () => {
    const w = settled({ replicas: 2 });
    w.pod(0)!.spec.readinessGates = [];
    w.pod(1)!.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'x', controller: true }];
    w.pods.set('web-extra', { ...structuredClone(w.pod(0)!), metadata: { ...w.pod(0)!.metadata, name: 'web-extra' } });
    expect(found(w)).toEqual(['Identity', 'Identity', 'Identity']);
  });

  it('RevisionInUse: a pod on a revision that is not stored', () => {
    const w = settled({ replicas: 1 });
    w.pod(0)!.metadata.labels![LABEL_REVISION_HASH] = 'web-pruned';
    expect(found(w)).toEqual(['RevisionInUse']);
  });

  it('MaxUnavailable: starting more updates than the budget leaves', () => {
    const w = rolling({ updateStrategy: { maxUnavailable: 2 } });
    w.kubeletUnready('web-0');
    const previous = w.observation();
    draining(w, 'web-3');
    expect(found(w, previous)).toEqual([]);
    draining(w, 'web-2');
    expect(found(w, previous)).toEqual(['MaxUnavailable']);
  });

  it('MaxUnavailable holds under kubelet failures: pods failing is not the update\'s doing', () => {
    const w = rolling({ updateStrategy: { maxUnavailable: 1 } });
    const previous = w.observation();
    for (const name of ['web-0', 'web-1', 'web-2']) w.kubeletUnready(name);
    expect(found(w, previous)).toEqual([]);
  });

  it('Rescue: an update outside the budget on a pod that was available', () => {
    const w = rolling();
    w.kubeletUnready('web-2');
    const previous = w.observation();
    draining(w, 'web-2', { rescue: true });
    draining(w, 'web-1', { rescue: true });
    expect(checkInvariants({ ...w.observation(), previous })).toEqual([expect.objectContaining({ invariant: 'Rescue', object: 'web-1' })]);
  });

  it('Pause: an update started while paused', () => {
    const w = rolling();
    w.edit((s) => void (s.updateStrategy.pause = true));
    const previous = w.observation();
    draining(w, 'web-3');
    expect(found(w, previous)).toEqual(['Pause']);
  });

  it('Partition: a pod below partition moved to updateRevision', () => {
    const w = rolling({ updateStrategy: { partition: 3 } });
    const previous = w.observation();
    w.pod(1)!.metadata.labels![LABEL_REVISION_HASH] = w.neoset.status!.updateRevision!;
    expect(found(w, previous)).toEqual(['Partition']);
  });

  it('NewPodRevision: a scale-up pod created on updateRevision mid-rollout (in-place change)', () => {
    const w = rolling();
    const previous = w.observation();
    const update = [...w.revisions.values()].find((r) => r.revision === 2)!;
    w.edit((s) => void (s.replicas = 5));
    const pod = newPod(w.neoset, 4, update.metadata.name, w.neoset.spec.template);
    w.pods.set(pod.metadata.name, { ...pod, metadata: { ...pod.metadata, uid: 'new' } });
    expect(found(w, previous)).toEqual(['NewPodRevision']);
  });

  it('OrderedReady: a pod created while a lower ordinal is not Ready', () => {
    const w = settled({ replicas: 2 });
    w.kubeletUnready('web-0');
    const previous = w.observation();
    w.edit((s) => void (s.replicas = 3));
    const pod = newPod(w.neoset, 2, w.neoset.status!.updateRevision!, w.neoset.spec.template);
    w.pods.set(pod.metadata.name, { ...pod, metadata: { ...pod.metadata, uid: 'new' } });
    expect(found(w, previous)).toEqual(['OrderedReady']);
  });

  it('OrderedReady: a condemned pod deleted while a higher ordinal exists', () => {
    const w = settled({ replicas: 3 });
    w.edit((s) => void (s.replicas = 1));
    const previous = w.observation();
    w.userDelete('web-1');
    expect(found(w, previous)).toEqual(['OrderedReady']);
  });

  it('Drain: images patched while the pod is still in the endpoints', () => {
    const w = rolling({ updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: 30 } } });
    draining(w, 'web-3');
    const previous = w.observation();
    draining(w, 'web-3', { phase: 'Updating', startedAt: rfc3339(w.now + 10_000) });
    expect(found(w, previous)).toEqual(['Drain', 'Drain']); // gate still True, and before the grace period ended
  });

  it('InPlaceDone: the state removed before the new container is ready', () => {
    const w = rolling();
    const pod = w.pod(3)!;
    const cs = pod.status!.containerStatuses![0];
    draining(w, 'web-3', { phase: 'Updating', startedAt: rfc3339(w.now), targetImages: { app: 'nginx:v2' }, previousImageIDs: { app: cs.imageID } });
    pod.spec.containers[0].image = 'nginx:v2';
    w.kubeletSync('web-3'); // restarted on v2, not ready
    const previous = w.observation();
    delete pod.metadata.annotations![ANNOTATION_INPLACE_STATE];
    expect(found(w, previous)).toEqual(['InPlaceDone']);
  });

  it('Terminating: a terminating pod written again', () => {
    const w = settled({ replicas: 2 });
    w.userDelete('web-1');
    const previous = w.observation();
    draining(w, 'web-1');
    expect(found(w, previous)).toEqual(['Terminating']);
  });

  it('CurrentRevision: advanced before every pod runs the update revision', () => {
    const w = rolling();
    const previous = w.observation();
    w.neoset.status = { ...w.neoset.status, currentRevision: w.neoset.status!.updateRevision };
    expect(found(w, previous)).toEqual(['CurrentRevision']);
  });

  it('ClaimOwnership: a pod created before its claim', () => {
    const w = settled({ replicas: 1, volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: {} }] });
    const previous = w.observation();
    w.edit((s) => void (s.replicas = 2));
    const pod = newPod(w.neoset, 1, w.neoset.status!.updateRevision!, w.neoset.spec.template);
    w.pods.set(pod.metadata.name, { ...pod, metadata: { ...pod.metadata, uid: 'new' } });
    expect(checkInvariants({ ...w.observation(), previous })).toEqual([expect.objectContaining({ invariant: 'ClaimOwnership', object: 'd-web-1' })]);
  });
});
