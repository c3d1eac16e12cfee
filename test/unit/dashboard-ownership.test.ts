// Whose pods the dashboard shows: the controller's own rule (SPEC §4.1, shared/core/ownership.ts), not
// a label — a namesake's pods (another uid, after a re-create) are not this NeoSet's, an orphan its
// selector adopts is.
import { describe, expect, it } from 'vitest';
import { detail } from '../../bin/neoset/dashboard/view.ts';
import type { PodObject } from '../../bin/neoset/dashboard/wire.ts';
import { neoset } from './plugin-fixtures.ts';

const pod = (name: string, labels: Record<string, string>, controllerUid?: string): PodObject => ({
  metadata: { name, namespace: 'db', labels, ownerReferences: controllerUid === undefined ? undefined : [{ kind: 'NeoSet', uid: controllerUid, controller: true }] },
  spec: { containers: [{ name: 'main', image: 'mysql:8.1' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});

describe('the pods the dashboard shows for a NeoSet', () => {
  it("ours and the orphans its selector adopts; never a namesake's, whatever its labels say", () => {
    const pods = [
      pod('mysql-0', { 'neoset.neo.io/name': 'mysql', app: 'mysql' }, 'uid-1'),
      pod('mysql-1', { 'neoset.neo.io/name': 'mysql', app: 'mysql' }, 'uid-old'),
      pod('mysql-2', { app: 'mysql' }),
      pod('mysql-3', { 'neoset.neo.io/name': 'mysql' }),
    ];
    const d = detail({ neosets: [neoset()], pods, revisions: [], events: [] }, 'db', 'mysql')!;
    expect(d.pods.map((p) => p.name)).toEqual(['mysql-0', 'mysql-2']);
  });
});
