// The oracle (SPEC §7) flags each kind of bad state or transition and stays quiet on good ones —
// including when, as in the e2e tests, it only gets the NeoSet and its pods. The worlds are built by
// hand where the rule is about a decision, so that a case does not depend on what the core decides.
import { describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_STATE, CONDITION_INPLACE_READY, LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import type { Pod } from '../../shared/core/objects.ts';
import { settled } from '../unit/helpers.ts';
import type { World } from '../unit/world.ts';
import { checkInvariants, type Invariant, type Observation } from './index.ts';

const at = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
const found = (w: World, previous?: Observation): Invariant[] => checkInvariants({ ...w.observation(), previous }).map((v) => v.invariant);
const update = (w: World) => w.neoset.status!.updateRevision!;
const current = (w: World) => w.neoset.status!.currentRevision!;

/** Writes a state annotation as the SPEC documents it (§4.4), Draining now unless told otherwise. */
function inPlace(w: World, name: string, extra: Record<string, unknown> = {}): void {
  const pod = w.pods.get(name)!;
  const state = { revision: update(w), phase: 'Draining', drainStartedAt: at(w.now), ...extra };
  pod.metadata.annotations = { ...pod.metadata.annotations, [ANNOTATION_INPLACE_STATE]: JSON.stringify(state) };
}

function setCondition(pod: Pod, type: string, status: 'True' | 'False', since: number): void {
  const conditions = (pod.status!.conditions ??= []);
  const c = conditions.find((x) => x.type === type);
  if (c) Object.assign(c, { status, lastTransitionTime: at(since) });
  else conditions.push({ type, status, lastTransitionTime: at(since) });
}

/** Stores the current spec.template as a new revision (§4.2) and names it in status as updateRevision. */
function storeTemplate(w: World): string {
  const first = [...w.revisions.values()][0];
  const number = Math.max(...[...w.revisions.values()].map((r) => r.revision)) + 1;
  const name = `web-r${number}`;
  w.revisions.set(name, { ...structuredClone(first), metadata: { ...structuredClone(first.metadata), name, uid: name }, data: { spec: { template: structuredClone(w.neoset.spec.template) } }, revision: number });
  w.neoset.status = { ...w.neoset.status, updateRevision: name };
  return name;
}

/** A settled NeoSet with a new template stored as the update revision: a rollout in progress. */
async function rolling(spec: Parameters<typeof settled>[0] = {}): Promise<World> {
  const w = await settled({ replicas: 4, ...spec });
  w.setImage('nginx:v2');
  storeTemplate(w);
  return w;
}

/** A pod of `w` as a new object (another uid) on `revision`. */
function newPodOn(w: World, ordinal: number, revision: string): void {
  const pod = structuredClone(w.pod(0)!);
  const name = `web-${ordinal}`;
  pod.metadata = { ...pod.metadata, name, uid: `new-${ordinal}`, labels: { ...pod.metadata.labels, 'neoset.neo.io/pod-name': name, 'apps.kubernetes.io/pod-index': String(ordinal), [LABEL_REVISION_HASH]: revision } };
  pod.metadata.annotations = {};
  pod.spec = { ...pod.spec, hostname: name };
  pod.status = { phase: 'Pending' };
  w.pods.set(name, pod);
}

describe('oracle: every state', () => {
  it('finds nothing along a correct rollout, with or without revisions, claims and time', async () => {
    const w = await settled({ replicas: 3, volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: {} }] });
    w.setImage('nginx:v2');
    const all: Invariant[] = [];
    await w.settle(100, (previous, now) => {
      all.push(...checkInvariants({ ...now, previous }).map((v) => v.invariant));
      all.push(...checkInvariants({ neoset: now.neoset, pods: now.pods, previous: { neoset: previous.neoset, pods: previous.pods } }).map((v) => v.invariant));
    });
    expect(all).toEqual([]);
  });

  it('Malformed: a NeoSet that does not parse', async () => {
    expect(checkInvariants({ neoset: { kind: 'NeoSet' }, pods: [] })[0].invariant).toBe('Malformed');
  });

  it('Identity: a pod without the readiness gate, with another controller, or a name that is not an ordinal', async () => {
    const w = await settled({ replicas: 2 });
    w.pod(0)!.spec.readinessGates = [];
    w.pod(1)!.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'x', controller: true }];
    w.pods.set('web-extra', { ...structuredClone(w.pod(0)!), metadata: { ...w.pod(0)!.metadata, name: 'web-extra' } });
    expect(found(w)).toEqual(['Identity', 'Identity', 'Identity']);
  });

  it('RevisionInUse: a pod on a revision that is not stored', async () => {
    const w = await settled({ replicas: 1 });
    w.pod(0)!.metadata.labels![LABEL_REVISION_HASH] = 'web-pruned';
    expect(found(w)).toEqual(['RevisionInUse']);
  });

  it('ClaimOwnership: the NeoSet as a claim\'s controller', async () => {
    const w = await settled({ replicas: 1, volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: {} }] });
    w.pvcs.get('d-web-0')!.metadata.ownerReferences = [{ apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'web', uid: 'neoset-uid', controller: true }];
    expect(found(w)).toEqual(['ClaimOwnership']);
  });

  it('MaxUnavailable without a previous state: in-flight updates on wanted revisions count, a stuck pod\'s does not', async () => {
    const w = await rolling({ updateStrategy: { maxUnavailable: 1 } });
    inPlace(w, 'web-3');
    expect(found(w)).toEqual([]);
    inPlace(w, 'web-2');
    expect(found(w)).toEqual(['MaxUnavailable']);
    w.pod(2)!.metadata.labels![LABEL_REVISION_HASH] = 'web-abandoned';
    w.revisions.set('web-abandoned', { ...structuredClone([...w.revisions.values()][0]), metadata: { name: 'web-abandoned' }, revision: 99 });
    w.kubeletUnready('web-2');
    expect(found(w)).toEqual([]);
  });
});

describe('oracle: the budget and rescues (§4.4 revised)', () => {
  it('MaxUnavailable: starting more updates than the budget leaves', async () => {
    const w = await rolling({ updateStrategy: { maxUnavailable: 2 } });
    w.kubeletUnready('web-0');
    const previous = w.observation();
    inPlace(w, 'web-3');
    expect(found(w, previous)).toEqual([]);
    inPlace(w, 'web-2');
    expect(found(w, previous)).toEqual(['MaxUnavailable']);
  });

  it('MaxUnavailable: a start claimed before a scale-up lands after it (updates in flight finish); a claim beyond the budget is judged when it appears', async () => {
    const w = await rolling({ updateStrategy: { maxUnavailable: 1 } });
    const claim = (names: string[]) => w.mutateNeoSet((n) => void (n.status = { ...n.status!, currentUpdatePods: names }));
    const before = w.observation();
    claim(['web-3']);
    expect(found(w, before)).toEqual([]); // one slot, claimed
    w.edit((s) => void (s.replicas = 6)); // web-4, web-5 missing: unavailable
    const scaled = w.observation();
    inPlace(w, 'web-3'); // the claimed drain lands after the scale
    expect(found(w, scaled)).toEqual([]);
    // A second claim while web-3's update and the missing pods fill the budget is a budget breach.
    const more = w.observation();
    claim(['web-3', 'web-2']);
    expect(found(w, more)).toEqual(['MaxUnavailable']);
  });

  it('MaxUnavailable holds under kubelet failures: pods failing is not the update\'s doing', async () => {
    const w = await rolling({ updateStrategy: { maxUnavailable: 1 } });
    const previous = w.observation();
    for (const name of ['web-0', 'web-1', 'web-2']) w.kubeletUnready(name);
    expect(found(w, previous)).toEqual([]);
  });

  it('a rescue-eligible start outside the budget passes: not Ready, on neither current nor update revision', async () => {
    const w = await rolling({ updateStrategy: { maxUnavailable: 1 } });
    const broken = update(w);
    w.pod(2)!.metadata.labels![LABEL_REVISION_HASH] = broken;
    w.kubeletUnready('web-2');
    w.setImage('nginx:v3'); // a fix-forward: the broken revision is abandoned
    storeTemplate(w);
    const previous = w.observation();
    inPlace(w, 'web-2');
    inPlace(w, 'web-3');
    expect(found(w, previous)).toEqual([]);
  });

  it('rescues alone start however many pods are down: they take no budget', async () => {
    const w = await rolling({ updateStrategy: { maxUnavailable: 1 } });
    const broken = update(w);
    for (const i of [1, 2]) {
      w.pod(i)!.metadata.labels![LABEL_REVISION_HASH] = broken;
      w.kubeletUnready(`web-${i}`);
    }
    w.kubeletUnready('web-0');
    w.setImage('nginx:v3');
    storeTemplate(w);
    const previous = w.observation();
    inPlace(w, 'web-2');
    inPlace(w, 'web-1');
    expect(found(w, previous)).toEqual([]);
  });

  it('Rescue: a Pending pod on currentRevision is no rescue; its start takes the budget', async () => {
    const w = await rolling({ updateStrategy: { maxUnavailable: 1 } });
    w.pods.delete('web-1');
    newPodOn(w, 1, current(w));
    const previous = w.observation();
    inPlace(w, 'web-1');
    inPlace(w, 'web-3');
    const violations = checkInvariants({ ...w.observation(), previous });
    expect(violations).toEqual([expect.objectContaining({ invariant: 'Rescue', object: 'web-1' })]);
    expect(violations[0].message).toMatch(/not Ready but runs/);
  });

  it('Rescue: a Ready pod inside minReadySeconds is no rescue (it serves traffic)', async () => {
    const w = await rolling({ minReadySeconds: 30, updateStrategy: { maxUnavailable: 1 } });
    w.advance(60);
    setCondition(w.pod(2)!, 'Ready', 'True', w.now - 10_000);
    const previous = w.observation();
    inPlace(w, 'web-2');
    inPlace(w, 'web-3');
    expect(checkInvariants({ ...w.observation(), previous })).toEqual([expect.objectContaining({ invariant: 'Rescue', object: 'web-2' })]);
  });

  it('Rescue: a not-Ready pod on updateRevision is no rescue either (the rollout still wants that revision)', async () => {
    const w = await rolling({ updateStrategy: { maxUnavailable: 1 } });
    w.pod(2)!.metadata.labels![LABEL_REVISION_HASH] = update(w);
    w.kubeletUnready('web-2');
    const previous = w.observation();
    inPlace(w, 'web-2');
    inPlace(w, 'web-3');
    expect(checkInvariants({ ...w.observation(), previous })).toEqual([expect.objectContaining({ invariant: 'Rescue', object: 'web-2' })]);
  });

  it('MaxUnavailable, not Rescue, when the budget is exceeded by pods that were available', async () => {
    const w = await rolling({ updateStrategy: { maxUnavailable: 1 } });
    w.kubeletUnready('web-0');
    const previous = w.observation();
    inPlace(w, 'web-3');
    const violations = checkInvariants({ ...w.observation(), previous });
    expect(violations.map((v) => v.invariant)).toEqual(['MaxUnavailable']);
    expect(violations[0].message).toMatch(/ordinals \[0\] already, started web-3/);
  });

  it('Pause: any start while paused in both states, a rescue included', async () => {
    const w = await rolling();
    w.pod(2)!.metadata.labels![LABEL_REVISION_HASH] = update(w);
    w.kubeletUnready('web-2');
    w.setImage('nginx:v3');
    storeTemplate(w);
    w.edit((s) => void (s.updateStrategy.pause = true));
    const previous = w.observation();
    inPlace(w, 'web-2');
    expect(found(w, previous)).toEqual(['Pause']);
  });

  it('Pause: a start is allowed when either state is unpaused', async () => {
    const w = await rolling();
    w.edit((s) => void (s.updateStrategy.pause = true));
    const previous = w.observation();
    w.edit((s) => void (s.updateStrategy.pause = false));
    inPlace(w, 'web-3');
    expect(found(w, previous)).toEqual([]);
  });
});

describe('oracle: revisions', () => {
  it('Partition: a pod below partition moved to updateRevision', async () => {
    const w = await rolling({ updateStrategy: { partition: 3 } });
    const previous = w.observation();
    w.pod(1)!.metadata.labels![LABEL_REVISION_HASH] = update(w);
    expect(found(w, previous)).toEqual(['Partition']);
  });

  it('Partition: a start below a partition raised in both states; allowed while one state still had it lower', async () => {
    const w = await rolling({ updateStrategy: { partition: 0 } });
    const lower = w.observation();
    w.edit((s) => void (s.updateStrategy.partition = 3));
    const raised = w.observation();
    inPlace(w, 'web-2');
    expect(found(w, lower)).toEqual([]);
    expect(found(w, raised)).toEqual(['Partition']);
  });

  it('Retarget: an in-place update sent back to an older revision', async () => {
    const w = await rolling({ updateStrategy: { maxUnavailable: 2 } });
    const older = update(w);
    w.setImage('nginx:v3');
    storeTemplate(w);
    inPlace(w, 'web-3');
    const previous = w.observation();
    inPlace(w, 'web-3', { revision: older });
    expect(found(w, previous)).toEqual(['Retarget']);
    inPlace(w, 'web-3', { revision: update(w) });
    expect(found(w, previous)).toEqual([]);
  });

  it('NewPodRevision: a scale-up pod on updateRevision below partition mid-rollout; on currentRevision it is fine', async () => {
    const w = await rolling({ updateStrategy: { partition: 5 } });
    const previous = w.observation();
    w.edit((s) => void (s.replicas = 5));
    newPodOn(w, 4, update(w));
    expect(found(w, previous)).toEqual(['NewPodRevision']);
    newPodOn(w, 4, current(w));
    expect(found(w, previous)).toEqual([]);
  });

  it('NewPodRevision: on updateRevision at an ordinal >= partition when not paused (§4.3 recreate), not while paused', async () => {
    const w = await rolling();
    w.pods.delete('web-3');
    const previous = w.observation();
    newPodOn(w, 3, update(w));
    expect(found(w, previous)).toEqual([]);
    w.pods.delete('web-3');
    w.edit((s) => void (s.updateStrategy.pause = true));
    const paused = w.observation();
    newPodOn(w, 3, update(w));
    expect(found(w, paused)).toEqual(['NewPodRevision']);
  });

  it('CurrentRevision: advanced before every pod runs the update revision', async () => {
    const w = await rolling();
    const previous = w.observation();
    w.neoset.status = { ...w.neoset.status, currentRevision: update(w) };
    expect(found(w, previous)).toEqual(['CurrentRevision']);
  });
});

describe('oracle: scaling', () => {
  it('OrderedReady: a pod created while a lower ordinal is not Ready', async () => {
    const w = await settled({ replicas: 2 });
    w.kubeletUnready('web-0');
    const previous = w.observation();
    w.edit((s) => void (s.replicas = 3));
    newPodOn(w, 2, update(w));
    expect(found(w, previous)).toEqual(['OrderedReady']);
  });

  it('OrderedReady: a condemned pod deleted while a higher ordinal exists', async () => {
    const w = await settled({ replicas: 3 });
    w.edit((s) => void (s.replicas = 1));
    const previous = w.observation();
    w.userDelete('web-1');
    expect(found(w, previous)).toEqual(['OrderedReady']);
  });

  it('ClaimOwnership: a pod created before its claim', async () => {
    const w = await settled({ replicas: 1, volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: {} }] });
    const previous = w.observation();
    w.edit((s) => void (s.replicas = 2));
    newPodOn(w, 1, update(w));
    w.pod(1)!.spec.volumes = [{ name: 'd', persistentVolumeClaim: { claimName: 'd-web-1' } }];
    expect(checkInvariants({ ...w.observation(), previous })).toEqual([expect.objectContaining({ invariant: 'ClaimOwnership', object: 'd-web-1' })]);
  });
});

describe('oracle: one pod\'s in-place update', () => {
  /** web-3 drained: gate False since `gateFalse`, state Draining since `drainedAt`. */
  async function drained(grace: number, drainedAt: number, gateFalse: number): Promise<{ w: World; previous: Observation }> {
    const w = await rolling({ updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: grace } } });
    inPlace(w, 'web-3', { drainStartedAt: at(drainedAt) });
    setCondition(w.pod(3)!, CONDITION_INPLACE_READY, 'False', gateFalse);
    return { w, previous: w.observation() };
  }

  it('Drain: images patched while the pod is still in the endpoints, and before the grace period', async () => {
    const w = await rolling({ updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: 30 } } });
    inPlace(w, 'web-3');
    const previous = w.observation();
    inPlace(w, 'web-3', { phase: 'Updating', startedAt: at(w.now + 10_000) });
    expect(found(w, previous)).toEqual(['Drain']); // gate still True
  });

  it('Drain: grace runs from the gate turning False, not from drainStartedAt, to the whole second', async () => {
    const T = Date.parse('2025-01-01T01:00:00Z');
    const { w, previous } = await drained(30, T - 60_000, T);
    inPlace(w, 'web-3', { drainStartedAt: at(T - 60_000), phase: 'Updating', startedAt: at(T + 10_000) });
    expect(found(w, previous)).toEqual(['Drain']);
    inPlace(w, 'web-3', { drainStartedAt: at(T - 60_000), phase: 'Updating', startedAt: at(T + 29_000) });
    expect(found(w, previous)).toEqual(['Drain']);
    inPlace(w, 'web-3', { drainStartedAt: at(T - 60_000), phase: 'Updating', startedAt: at(T + 30_000) });
    expect(found(w, previous)).toEqual([]);
  });

  it('Drain: a gate never written counts as False since the pod was created (it never was in the endpoints)', async () => {
    const w = await rolling({ updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: 5 } } });
    const pod = w.pod(3)!;
    pod.status!.conditions = pod.status!.conditions!.filter((c) => c.type !== CONDITION_INPLACE_READY);
    pod.metadata.creationTimestamp = at(w.now);
    inPlace(w, 'web-3');
    const previous = w.observation();
    inPlace(w, 'web-3', { phase: 'Updating', startedAt: at(w.now + 2000) });
    expect(found(w, previous)).toEqual(['Drain']);
    inPlace(w, 'web-3', { phase: 'Updating', startedAt: at(w.now + 5000) });
    expect(found(w, previous)).toEqual([]);
  });

  it('Drain: the gate opened while the update is in flight, its container not restarted on the new image', async () => {
    const T = Date.parse('2025-01-01T01:00:00Z');
    const { w } = await drained(0, T, T);
    const cs = w.pod(3)!.status!.containerStatuses![0];
    inPlace(w, 'web-3', { drainStartedAt: at(T), phase: 'Updating', startedAt: at(T), targetImages: { app: 'nginx:v2' }, previousImageIDs: { app: cs.imageID } });
    const previous = w.observation();
    setCondition(w.pod(3)!, CONDITION_INPLACE_READY, 'True', T + 1000);
    expect(found(w, previous)).toEqual(['Drain']);
  });

  /** web-3 Updating to nginx:v2 (gate False since the drain), its image patched; the kubelet has not restarted it yet. */
  async function patched(spec: Parameters<typeof settled>[0] = {}): Promise<World> {
    const w = await rolling(spec);
    const cs = w.pod(3)!.status!.containerStatuses![0];
    inPlace(w, 'web-3', { phase: 'Updating', startedAt: at(w.now), targetImages: { app: 'nginx:v2' }, previousImageIDs: { app: cs.imageID }, previousContainerIDs: { app: cs.containerID } });
    setCondition(w.pod(3)!, CONDITION_INPLACE_READY, 'False', w.now);
    w.pod(3)!.spec.containers[0].image = 'nginx:v2';
    return w;
  }

  it('Drain: the gate reopens once every changed container runs its new image, restarted — before its probe passes, not before the restart', async () => {
    const w = await patched();
    const previous = w.observation();
    setCondition(w.pod(3)!, CONDITION_INPLACE_READY, 'True', w.now);
    expect(found(w, previous)).toEqual(['Drain']); // still the old container
    w.kubeletSync('web-3'); // restarted on v2, not ready
    expect(w.pod(3)!.status!.containerStatuses![0].ready).toBe(false);
    expect(found(w, previous)).toEqual([]);
    const opened = w.observation();
    w.kubeletSync('web-3'); // ready on v2: Ready at once
    expect(found(w, opened)).toEqual([]);
  });

  it('Drain: a retry that restarts the deadline (a new startedAt, same target) with the gate open on the restart is no image patch', async () => {
    const w = await patched();
    w.kubeletSync('web-3'); // restarted on v2, not ready
    setCondition(w.pod(3)!, CONDITION_INPLACE_READY, 'True', w.now);
    const previous = w.observation();
    const pod = w.pod(3)!;
    const state = JSON.parse(pod.metadata.annotations![ANNOTATION_INPLACE_STATE]);
    w.now += 30_000;
    pod.metadata.annotations![ANNOTATION_INPLACE_STATE] = JSON.stringify({ ...state, startedAt: at(w.now) });
    expect(found(w, previous)).toEqual([]);
    // Another target under the open gate is a patch while the pod is in the endpoints.
    const retarget = w.observation();
    const again = w.pod(3)!; // (w.pod: an observation reads the pods anew)
    again.metadata.annotations![ANNOTATION_INPLACE_STATE] = JSON.stringify({ ...state, targetImages: { app: 'nginx:v3' }, startedAt: at(w.now) });
    again.spec.containers[0].image = 'nginx:v3';
    expect(found(w, retarget)).toEqual(['Drain']);
  });

  it('MaxUnavailable: a pod whose gate opened on its restart holds its budget slot until its probe passed and it is available — not until its state is gone', async () => {
    const w = await patched({ updateStrategy: { maxUnavailable: 1 } });
    w.kubeletSync('web-3'); // restarted on v2, not ready
    setCondition(w.pod(3)!, CONDITION_INPLACE_READY, 'True', w.now);
    const previous = w.observation();
    inPlace(w, 'web-2');
    expect(found(w, previous)).toEqual(['MaxUnavailable']);
    delete w.pod(2)!.metadata.annotations![ANNOTATION_INPLACE_STATE];
    w.kubeletSync('web-3'); // probe passed, Ready; the state still on it (the finish write not yet made)
    expect(w.pod(3)!.status!.conditions!.find((c) => c.type === 'Ready')?.status).toBe('True');
    const ready = w.observation();
    inPlace(w, 'web-2');
    expect(found(w, ready)).toEqual([]);
  });

  it('MaxUnavailable: done and Ready but inside minReadySeconds, the pod with its state still holds its slot', async () => {
    const w = await patched({ minReadySeconds: 30, updateStrategy: { maxUnavailable: 1 } });
    w.kubeletSync('web-3'); // restarted on v2, not ready
    setCondition(w.pod(3)!, CONDITION_INPLACE_READY, 'True', w.now);
    w.kubeletSync('web-3'); // Ready now
    const ready = w.observation();
    inPlace(w, 'web-2');
    expect(found(w, ready)).toEqual(['MaxUnavailable']);
    delete w.pod(2)!.metadata.annotations![ANNOTATION_INPLACE_STATE];
    w.advance(30);
    const available = w.observation();
    inPlace(w, 'web-2');
    expect(found(w, available)).toEqual([]);
  });

  it('MaxUnavailable: a done and available pod re-targeted (its drainStartedAt kept) leaves service again: with another start, past the budget', async () => {
    const w = await patched({ updateStrategy: { maxUnavailable: 1 } });
    w.kubeletSync('web-3');
    setCondition(w.pod(3)!, CONDITION_INPLACE_READY, 'True', w.now);
    w.kubeletSync('web-3'); // done and available, state still on it
    const done = w.observation();
    const state = JSON.parse(w.pod(3)!.metadata.annotations![ANNOTATION_INPLACE_STATE]);
    w.setImage('nginx:v3');
    const v3 = storeTemplate(w);
    w.pod(3)!.metadata.annotations![ANNOTATION_INPLACE_STATE] = JSON.stringify({ revision: v3, phase: 'Draining', drainStartedAt: state.drainStartedAt });
    setCondition(w.pod(3)!, CONDITION_INPLACE_READY, 'False', w.now);
    expect(found(w, done)).toEqual([]); // the re-target alone fits
    inPlace(w, 'web-2', { revision: v3 });
    expect(found(w, done)).toEqual(['MaxUnavailable']);
  });

  it('CurrentRevision: a pod done and available with its state still on it is not in flight; one whose probe has not passed is', async () => {
    const w = await rolling({ replicas: 1 });
    const from = current(w);
    const cs = w.pod(0)!.status!.containerStatuses![0];
    inPlace(w, 'web-0', { phase: 'Updating', startedAt: at(w.now), targetImages: { app: 'nginx:v2' }, previousImageIDs: { app: cs.imageID }, previousContainerIDs: { app: cs.containerID } });
    setCondition(w.pod(0)!, CONDITION_INPLACE_READY, 'False', w.now);
    w.pod(0)!.spec.containers[0].image = 'nginx:v2';
    w.pod(0)!.metadata.labels![LABEL_REVISION_HASH] = update(w);
    w.kubeletSync('web-0'); // restarted on v2, not ready
    setCondition(w.pod(0)!, CONDITION_INPLACE_READY, 'True', w.now);
    const restarted = w.observation();
    w.neoset.status = { ...w.neoset.status, currentRevision: update(w) };
    expect(found(w, restarted)).toEqual(['CurrentRevision']);
    w.neoset.status = { ...w.neoset.status, currentRevision: from };
    w.kubeletSync('web-0'); // probe passed: Ready, the state still on it
    const ready = w.observation();
    w.neoset.status = { ...w.neoset.status, currentRevision: update(w) };
    expect(found(w, ready)).toEqual([]);
  });

  it('InPlaceDone: the state removed before the new container is ready', async () => {
    const w = await rolling();
    const pod = w.pod(3)!;
    const cs = pod.status!.containerStatuses![0];
    inPlace(w, 'web-3', { phase: 'Updating', startedAt: at(w.now), targetImages: { app: 'nginx:v2' }, previousImageIDs: { app: cs.imageID } });
    pod.spec.containers[0].image = 'nginx:v2';
    w.kubeletSync('web-3'); // restarted on v2, not ready
    const previous = w.observation();
    delete w.pod(3)!.metadata.annotations![ANNOTATION_INPLACE_STATE]; // (w.pod: a kubelet sync wrote the pod since)
    expect(found(w, previous)).toEqual(['InPlaceDone']);
    w.kubeletSync('web-3'); // ready on v2
    expect(found(w, previous)).toEqual([]);
  });

  it('InPlaceDone: a drain abandoned before any change is fine; one that changed images must be done', async () => {
    const w = await rolling();
    inPlace(w, 'web-3');
    const previous = w.observation();
    delete w.pod(3)!.metadata.annotations![ANNOTATION_INPLACE_STATE];
    expect(found(w, previous)).toEqual([]);
    w.pod(3)!.spec.containers[0].image = 'nginx:v2';
    expect(found(w, previous)).toEqual(['InPlaceDone']);
    w.kubeletSync('web-3');
    w.kubeletSync('web-3'); // patched and done between the two observations (§2.0 chain)
    expect(found(w, previous)).toEqual([]);
  });

  it('Terminating: a terminating pod written again', async () => {
    const w = await settled({ replicas: 2 });
    w.userDelete('web-1');
    const previous = w.observation();
    inPlace(w, 'web-1');
    expect(found(w, previous)).toEqual(['Terminating']);
  });
});

describe('oracle: automated canary (§4.11)', () => {
  const steps = [{ partition: 3 }, { pause: { duration: '30s' } }, { partition: 0 }];
  /** A rollout with canary steps, status.canary at `stepIndex`, started at `startedAt`. */
  async function canaryAt(stepIndex: number, startedAt: number): Promise<World> {
    const w = await rolling({ updateStrategy: { canary: { steps } } });
    w.neoset.status = { ...w.neoset.status, canary: { revision: update(w), stepIndex, stepStartedAt: at(startedAt) } };
    return w;
  }

  it("Partition: the steps' partition holds (a start below it), not spec.updateStrategy.partition", async () => {
    const w = await canaryAt(0, w0());
    const previous = w.observation();
    inPlace(w, 'web-1');
    expect(found(w, previous)).toEqual(['Partition']);
  });

  it('CanaryStep: a timed pause passed before its time, or a partition step passed with its pods not updated; a promote may', async () => {
    const w = await canaryAt(1, w0());
    const previous = w.observation();
    w.advance(10);
    w.neoset.status = { ...w.neoset.status, canary: { ...w.neoset.status!.canary!, stepIndex: 2, stepStartedAt: at(w.now) } };
    expect(found(w, { ...previous, at: w.now })).toEqual(['CanaryStep']);
    w.advance(25);
    expect(found(w, previous)).toEqual([]);
    const p = await canaryAt(0, w0());
    const before = p.observation();
    p.neoset.status = { ...p.neoset.status, canary: { ...p.neoset.status!.canary!, stepIndex: 1 } };
    expect(found(p, before)).toEqual(['CanaryStep']);
    p.neoset.status = { ...p.neoset.status, canary: { ...p.neoset.status!.canary!, stepIndex: 1, request: 'promote' } };
    expect(found(p, before)).toEqual([]);
  });

  it('Abort: a start toward the update revision while aborted; back to the current revision is fine', async () => {
    const w = await canaryAt(0, w0());
    w.neoset.status = { ...w.neoset.status, canary: { ...w.neoset.status!.canary!, abort: { reason: 'Aborted', message: 'by hand', at: at(w.now) } } };
    const previous = w.observation();
    inPlace(w, 'web-3');
    expect(found(w, previous)).toEqual(['Abort']);
    inPlace(w, 'web-3', { revision: current(w) });
    expect(found(w, previous)).toEqual([]);
  });
});

/** The worlds' start time (test/unit/world.ts T0). */
const w0 = () => Date.parse('2025-01-01T00:00:00Z');
