// Revisions (SPEC §4.2): naming by hash, reuse and renumbering (rollback), collisions, pruning,
// and when currentRevision advances.
import { describe, expect, it } from 'vitest';
import { NeoSet } from '../../shared/api/neoset.ts';
import { templateHash } from '../../shared/core/revisions/hash.ts';
import { resolveRevisions, revisionName } from '../../shared/core/revisions/revisions.ts';
import { plan, settled, steps } from './helpers.ts';
import { World } from './world.ts';

const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:v1' }] } };

describe('revision names', () => {
  it('are <neoset>-<10 safe characters>, stable, independent of key order, changed by collisionCount', async () => {
    const name = revisionName('web', template, 0);
    expect(name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{10}$/);
    expect(revisionName('web', { spec: template.spec, metadata: template.metadata }, 0)).toBe(name);
    expect(revisionName('web', template, 1)).not.toBe(name);
    expect(templateHash(template, 0)).toBe(name.slice(4));
    expect(revisionName('web', { ...template, spec: { containers: [{ name: 'app', image: 'nginx:v2' }] } }, 0)).not.toBe(name);
  });
});

describe('the first reconcile', () => {
  it('creates revision 1 (labels, controller owner, the template) and makes it current', async () => {
    const w = new World({ replicas: 1 });
    const p = plan(w);
    const name = revisionName('web', w.neoset.spec.template, 0);
    expect(p.actions[0]).toEqual({
      kind: 'createRevision',
      revision: {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: {
          name,
          namespace: 'default',
          labels: { app: 'web', 'neoset.neo.io/name': 'web', 'controller-revision-hash': name.slice(4) },
          ownerReferences: [{ apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'web', uid: 'neoset-uid', controller: true, blockOwnerDeletion: true }],
        },
        data: { spec: { template: w.neoset.spec.template } },
        revision: 1,
      },
      event: expect.objectContaining({ reason: 'RevisionCreated' }),
    });
    expect(p.status).toMatchObject({ currentRevision: name, updateRevision: name, collisionCount: 0 });
  });
});

describe('reuse and rollback', () => {
  it('a template equal to the highest revision reuses it without renumbering', async () => {
    const w = await settled({ replicas: 1 });
    w.edit((s) => void (s.replicas = 2));
    expect(steps(plan(w)).filter((s) => s.includes('Revision'))).toEqual([]);
  });

  it('a template equal to an older revision reuses it with the next number (rollback)', async () => {
    const w = await settled({ replicas: 1 });
    const v1 = w.neoset.status!.updateRevision!;
    w.setImage('nginx:v2');
    await w.settle();
    w.setImage('nginx:v3');
    await w.settle();
    w.setImage('nginx:v1');
    const p = plan(w);
    expect(p.actions.slice(0, 2)).toEqual([
      { kind: 'recordEvent', key: `rollback/${v1}/4`, event: expect.objectContaining({ reason: 'RollbackDetected' }) },
      { kind: 'renumberRevision', revision: expect.objectContaining({ name: v1 }), number: 4, event: expect.objectContaining({ reason: 'RevisionRenumbered' }) },
    ]);
    expect(p.status).toMatchObject({ updateRevision: v1 });
  });
});

describe('hash collisions', () => {
  it('a name taken by a different template bumps collisionCount and hashes again', async () => {
    const w = await settled({ replicas: 1 });
    const squatter = structuredClone(w.revisions.values().next().value!);
    w.revisions.clear();
    w.setImage('nginx:v2');
    const name = revisionName('web', w.neoset.spec.template, 0);
    squatter.metadata.name = name; // same name, other template
    w.revisions.set(name, squatter);
    const resolved = resolveRevisions(w.neoset, [...w.revisions.values()]);
    expect(resolved.collisionCount).toBe(1);
    expect(resolved.update.name).toBe(revisionName('web', w.neoset.spec.template, 1));
    expect(plan(w).status).toMatchObject({ collisionCount: 1, updateRevision: resolved.update.name });
  });

  it('after a crash before the status write, the equal revision is found by content', async () => {
    const w = await settled({ replicas: 1 });
    const ns = NeoSet.parse({ ...w.neoset, status: { ...w.neoset.status, collisionCount: 0 } });
    const rev = { ...structuredClone(w.revisions.values().next().value!), metadata: { name: 'web-somethingelse', uid: 'u', resourceVersion: '1' } };
    expect(resolveRevisions(ns, [rev]).update.name).toBe('web-somethingelse');
  });
});

describe('pruning history', () => {
  it('deletes the oldest revisions beyond revisionHistoryLimit, never one in use', async () => {
    const w = await settled({ replicas: 2, revisionHistoryLimit: 1 });
    for (const image of ['nginx:v2', 'nginx:v3', 'nginx:v4']) {
      w.setImage(image);
      expect(await w.settle()).toBeGreaterThanOrEqual(0);
    }
    // v4 is current and update; of v1..v3 (unused) one is kept: v3
    expect([...w.revisions.values()].map((r) => r.revision).sort()).toEqual([3, 4]);
  });

  it('keeps a revision a pod still runs, or the current revision, however old', async () => {
    const w = await settled({ replicas: 3, revisionHistoryLimit: 0 });
    const v1 = w.neoset.status!.currentRevision!;
    w.edit((s) => {
      s.template.spec.containers[0].image = 'nginx:v2';
      s.updateStrategy.partition = 2;
    });
    await w.settle();
    w.edit((s) => void (s.template.spec.containers[0].image = 'nginx:v3'));
    await w.settle();
    // v1 runs on pods 0,1 and is current; v2 is used by nobody any more; v3 on pod 2
    const names = [...w.revisions.values()].map((r) => r.revision).sort();
    expect(names).toEqual([1, 3]);
    expect(w.revisions.has(v1)).toBe(true);
  });
});

describe('currentRevision', () => {
  it('advances only when every pod runs updateRevision and is available — never while partition holds pods back', async () => {
    const w = await settled({ replicas: 3 });
    const v1 = w.neoset.status!.currentRevision;
    w.edit((s) => {
      s.template.spec.containers[0].image = 'nginx:v2';
      s.updateStrategy.partition = 1;
    });
    await w.settle();
    expect(w.neoset.status!.currentRevision).toBe(v1);
    w.edit((s) => void (s.updateStrategy.partition = 0));
    await w.settle();
    expect(w.neoset.status!.currentRevision).toBe(w.neoset.status!.updateRevision);
  });

  it('a status naming a revision that is not stored falls back to updateRevision', async () => {
    const w = await settled({ replicas: 1 });
    w.neoset.status!.currentRevision = 'web-gone';
    const resolved = resolveRevisions(w.neoset, [...w.revisions.values()]);
    expect(resolved.current.name).toBe(resolved.update.name);
  });
});
