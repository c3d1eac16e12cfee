// The oracle's §4.12 start and reserved ordinals: it flags a pod created out of range (below start,
// on a reserved ordinal), a start or claim below the partition counted in positions, and condemned
// pods deleted out of order — and stays quiet on the same moves done right. States built by hand.
import { describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_STATE } from '../../shared/api/names.ts';
import { settled } from '../unit/helpers.ts';
import type { World } from '../unit/world.ts';
import { checkInvariants, type Invariant, type Observation } from './index.ts';

const found = (w: World, previous?: Observation): Invariant[] => checkInvariants({ ...w.observation(), previous }).map((v) => v.invariant);

/** A copy of pod `from` as a new pod (another uid) of `ordinal`, Pending. */
function newPod(w: World, from: number, ordinal: number): void {
  const pod = structuredClone(w.pod(from)!);
  const name = `web-${ordinal}`;
  pod.metadata = { ...pod.metadata, name, uid: `new-${ordinal}`, labels: { ...pod.metadata.labels, 'neoset.neo.io/pod-name': name, 'apps.kubernetes.io/pod-index': String(ordinal) } };
  pod.spec = { ...pod.spec, hostname: name };
  pod.status = { phase: 'Pending' };
  w.pods.set(name, pod);
}

const terminate = (w: World, ordinal: number) => void (w.pod(ordinal)!.metadata.deletionTimestamp = new Date(w.now).toISOString());

describe('oracle: start and reserved ordinals (§4.12)', () => {
  it('Ordinals: a pod created on a reserved ordinal, or below start; one in range is fine', async () => {
    const w = await settled({ replicas: 3, reserveOrdinals: [1] });
    expect([...w.pods.keys()].sort()).toEqual(['web-0', 'web-2', 'web-3']);
    const previous = w.observation();
    newPod(w, 0, 1);
    expect(found(w, previous)).toEqual(['Ordinals']);
    w.pods.delete('web-1');
    w.pods.delete('web-3');
    const gone = w.observation();
    newPod(w, 0, 3);
    expect(found(w, gone)).toEqual([]);

    const s = await settled({ replicas: 2, ordinals: { start: 5 } });
    const before = s.observation();
    newPod(s, 5, 0);
    expect(found(s, before)).toContain('Ordinals');
  });

  it('Partition counts positions: with start 5 and partition 1, a start on web-5 is below it, on web-6 it is not', async () => {
    const w = await settled({ replicas: 3, ordinals: { start: 5 }, updateStrategy: { partition: 1, maxUnavailable: 3 } });
    const revision = w.neoset.status!.updateRevision!;
    const previous = w.observation();
    const drain = (ordinal: number) => {
      const pod = w.pod(ordinal)!;
      pod.metadata.annotations = { ...pod.metadata.annotations, [ANNOTATION_INPLACE_STATE]: JSON.stringify({ revision, phase: 'Draining', drainStartedAt: new Date(w.now).toISOString().replace(/\.\d+Z$/, 'Z') }) };
    };
    drain(6);
    expect(found(w, previous)).toEqual([]);
    drain(5);
    expect(found(w, previous)).toEqual(['Partition']);
  });

  it('OrderedReady: after start 5 -> 0 the condemned go only once the new range is Ready, highest first', async () => {
    const w = await settled({ replicas: 2, ordinals: { start: 5 } });
    w.edit((s) => void (s.ordinals = { start: 0 }));
    const previous = w.observation();
    terminate(w, 6);
    expect(found(w, previous)).toEqual(['OrderedReady']); // web-0, web-1 do not exist yet
    delete w.pod(6)!.metadata.deletionTimestamp;
    terminate(w, 5);
    const violations = checkInvariants({ ...w.observation(), previous }).filter((v) => v.invariant === 'OrderedReady').map((v) => v.message);
    expect(violations).toContain('scaled down while web-6 exist');
  });

  it('OrderedReady: a pod on a newly reserved ordinal is condemned, deleted once the range is Ready', async () => {
    const w = await settled({ replicas: 3 });
    w.edit((s) => void (s.reserveOrdinals = [1]));
    newPod(w, 0, 3); // the replacement first
    const created = w.observation();
    expect(found(w, created)).toEqual([]);
    terminate(w, 1);
    expect(found(w, created)).toEqual(['OrderedReady']); // web-3 is not Running and Ready yet
  });
});
