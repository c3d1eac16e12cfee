// The table of action kinds and the order of a plan's writes (shared/core/actions.ts), and the
// adoption on a taken name (shared/core/adoption.ts): what the applier asks of the core.
import { describe, expect, it } from 'vitest';
import { NeoSet } from '../../shared/api/neoset.ts';
import { describeAction, isReadinessDuty, needsClaim, refusalReason, writeGroup, writeOrder } from '../../shared/core/actions.ts';
import { nameTaken } from '../../shared/core/adoption.ts';
import type { ControllerRevision, PersistentVolumeClaim } from '../../shared/core/objects.ts';
import type { Action, Plan } from '../../shared/core/plan.ts';

const ref = (name: string) => ({ name, uid: `uid-${name}`, resourceVersion: '1' });
const event = { type: 'Normal', reason: 'R', message: 'm' } as const;
const gate = { status: 'False', reason: 'InPlaceUpdateDraining', message: 'draining', lastTransitionTime: '2025-01-01T00:00:00Z' } as const;
const state = { revision: 'web-2', phase: 'Draining', drainStartedAt: '2025-01-01T00:00:00Z' } as const;
const kinds = (actions: Action[]) => actions.map((a) => `${a.kind}${'pod' in a && 'name' in a.pod ? `:${a.pod.name}` : ''}`);

describe('the order of a plan’s writes', () => {
  const actions: Action[] = [
    { kind: 'createRevision', revision: { metadata: { name: 'web-2' }, data: { spec: { template: {} } }, revision: 2 }, event },
    { kind: 'markDraining', pod: ref('web-1'), state, gate, event },
    { kind: 'markDraining', pod: ref('web-2'), state, gate, event },
    { kind: 'setInPlaceReady', pod: { ...ref('web-1'), chained: true }, ...gate },
    { kind: 'releaseClaim', pod: ref('web-0') },
    { kind: 'recordEvent', key: 'k', event },
  ];
  const plan: Plan = { actions, claim: true, status: {}, requeueAfter: null };

  it('releases first, then the claim, then the rest in plan order', () => {
    const { writes, claimAt } = writeOrder(plan);
    expect(kinds(writes)).toEqual(['releaseClaim:web-0', 'createRevision', 'markDraining:web-1', 'markDraining:web-2', 'setInPlaceReady:web-1', 'recordEvent']);
    expect(claimAt).toBe(1);
  });

  it('pod writes that follow one another go out together, each pod’s chain in its order; anything else alone', () => {
    const { writes, claimAt } = writeOrder(plan);
    expect(writeGroup(writes, 0, claimAt)).toEqual({ chains: [[writes[0]]], end: 1 });
    expect(writeGroup(writes, 1, writes.length)).toEqual({ chains: [[writes[1]]], end: 2 });
    const pods = writeGroup(writes, 2, writes.length);
    expect(pods.end).toBe(5);
    expect(pods.chains.map(kinds)).toEqual([['markDraining:web-1', 'setInPlaceReady:web-1'], ['markDraining:web-2']]);
  });

  it('says which writes need the claim, which are readiness duties, and how a refusal names them', () => {
    expect(actions.map(needsClaim)).toEqual([true, true, true, false, true, false]);
    expect(isReadinessDuty({ kind: 'setInPlaceReady', pod: ref('a'), ...gate, status: 'True' })).toBe(true);
    expect(isReadinessDuty({ kind: 'setInPlaceReady', pod: ref('a'), ...gate })).toBe(false);
    expect(isReadinessDuty({ kind: 'finishInPlaceUpdate', pod: ref('a'), revision: 'r', durationSeconds: 1 })).toBe(true);
    expect(isReadinessDuty({ kind: 'finishInPlaceUpdate', pod: ref('a'), revision: 'r', durationSeconds: 0, aborted: true })).toBe(false);
    expect(actions.map(describeAction)).toEqual(['create ControllerRevision web-2', 'markDraining web-1', 'markDraining web-2', 'setInPlaceReady web-1', 'releaseClaim web-0', 'record Event']);
    expect(actions.map(refusalReason)).toEqual(['FailedCreate', 'FailedUpdate', 'FailedUpdate', 'FailedUpdate', 'FailedUpdate', 'FailedUpdate']);
    expect(refusalReason({ kind: 'deletePod', pod: ref('a'), event })).toBe('FailedDelete');
  });
});

describe('a name taken at create time (§4.1)', () => {
  const neoset = NeoSet.parse({
    apiVersion: 'neo.io/v1alpha1',
    kind: 'NeoSet',
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
    spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } },
  });
  const ours = { apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'web', uid: 'uid-web', controller: true };
  const other = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'uid-db', controller: true };
  const pvc = (labels: Record<string, string>, owners = [] as (typeof ours)[]): PersistentVolumeClaim => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data-web-0', labels, ownerReferences: owners, resourceVersion: '5' },
    spec: {},
  });
  const revision = (template: unknown, owners: (typeof ours)[] = []): ControllerRevision => ({
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: { name: 'web-abc', labels: neoset.spec.selector.matchLabels, ownerReferences: owners, resourceVersion: '5' },
    data: { spec: { template } },
    revision: 1,
  });

  it('ours already: a race; a volume claim: used, or labelled as ours; an orphan revision with our template: adopted', () => {
    expect(nameTaken(neoset, pvc({}), pvc({}, [ours]))).toEqual({ verdict: 'race' });
    expect(nameTaken(neoset, pvc({}), pvc({ 'neoset.neo.io/name': 'web' }))).toEqual({ verdict: 'use' });
    expect(nameTaken(neoset, pvc({}), pvc({}))).toEqual({ verdict: 'patch', metadata: { labels: { 'neoset.neo.io/name': 'web' } } });
    const created = revision({ spec: { containers: [] } }, [ours]);
    expect(nameTaken(neoset, created, revision({ spec: { containers: [] } }))).toEqual({ verdict: 'patch', metadata: { ownerReferences: [ours] } });
  });

  it('anything else: refused, saying why', () => {
    const created = revision({ spec: { containers: [] } }, [ours]);
    expect(nameTaken(neoset, created, revision({ spec: { containers: [{ name: 'x' }] } }))).toEqual({
      verdict: 'refuse',
      message: 'ControllerRevision web-abc already exists and cannot be adopted (a different object)',
    });
    expect(nameTaken(neoset, created, revision({}, [other as typeof ours]))).toEqual({
      verdict: 'refuse',
      message: 'ControllerRevision web-abc already exists and cannot be adopted (controlled by StatefulSet db)',
    });
  });
});
