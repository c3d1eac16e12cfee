// The plugin's tables and revision logic: `get`, `rollout history`, and what `rollout undo` writes.
import { describe, expect, it } from 'vitest';
import { formatNeoSets } from '../../bin/neoset/get-view.ts';
import { formatHistory, formatRevision } from '../../bin/neoset/history-view.ts';
import { previousRevision, undoPatch } from '../../shared/core/revisions/rollback.ts';
import { formatTable, humanDuration } from '../../bin/neoset/table.ts';
import { neoset, revision, template } from './plugin-fixtures.ts';

const NOW = Date.parse('2025-01-01T03:00:00Z');

describe('tables', () => {
  it('pads like kubectl: min width 6, 3 spaces between columns, the last column unpadded', () => {
    expect(formatTable([['NAME', 'AGE'], ['a-long-name', '5s']])).toBe('NAME          AGE\na-long-name   5s\n');
    expect(formatTable([['A', 'B', 'C'], ['1', '2', '3']])).toBe('A     B     C\n1     2     3\n');
  });

  it.each([
    [0, '0s'],
    [-1500, '0s'],
    [-2500, '<invalid>'],
    [119_000, '119s'],
    [120_000, '2m'],
    [303_000, '5m3s'],
    [900_000, '15m'],
    [3 * 3600_000, '3h'],
    [3 * 3600_000 + 600_000, '3h10m'],
    [30 * 3600_000, '30h'],
    [76 * 3600_000, '3d4h'],
    [400 * 86400_000, '400d'],
    [(3 * 365 + 2) * 86400_000, '3y2d'],
    [10 * 365 * 86400_000, '10y'],
  ])('AGE of %d ms is %s', (ms, text) => expect(humanDuration(ms)).toBe(text));
});

describe('get', () => {
  it("prints the seed's columns and the pods being updated now", () => {
    const n = neoset({
      updateStrategy: { partition: 2 },
      status: { observedGeneration: 2, readyReplicas: 4, updatedReplicas: 2, phase: 'RollingOut', currentImage: 'mysql:8.0', targetImage: 'mysql:8.1', currentUpdatePods: ['mysql-2'] },
    });
    const idle = { ...neoset({ status: { readyReplicas: 5, updatedReplicas: 5, phase: 'Idle', currentImage: 'mysql:8.1', targetImage: 'mysql:8.1' } }), metadata: { ...n.metadata, name: 'redis' } };
    expect(formatNeoSets([n, idle], NOW)).toBe(
      [
        'NAME    REPLICAS   READY   UPDATED   PHASE        CURRENT     TARGET      AGE   UPDATING',
        'mysql   5          4       2         RollingOut   mysql:8.0   mysql:8.1   3h    mysql-2',
        'redis   5          5       5         Idle         mysql:8.1   mysql:8.1   3h    <none>',
        '',
      ].join('\n'),
    );
  });
});

describe('history', () => {
  const n = neoset({ image: 'mysql:8.1', status: { currentRevision: 'mysql-rev1', updateRevision: 'mysql-rev2' } });
  const revs = [revision(1, 'mysql:8.0'), revision(2, 'mysql:8.1', 'canary of 8.1')];
  // Revision 2 declares the data format it writes (SPEC §4.7); revision 1 declares none.
  (revs[1].data.spec.template as { metadata: Record<string, unknown> }).metadata.annotations = { 'neo.io/data-format': '3' };

  it('lists number, name, current/update, images, data format and change-cause', () => {
    expect(formatHistory(n, revs)).toBe(
      [
        'neoset.neo.io/mysql',
        'REVISION   NAME         STATUS    IMAGES           DATA-FORMAT   CHANGE-CAUSE',
        '1          mysql-rev1   current   main=mysql:8.0   <none>        <none>',
        '2          mysql-rev2   update    main=mysql:8.1   3             canary of 8.1',
        '',
      ].join('\n'),
    );
    const done = neoset({ status: { currentRevision: 'mysql-rev2', updateRevision: 'mysql-rev2' } });
    expect(formatHistory(done, revs)).toMatch(/^2 +mysql-rev2 +current,update +main=mysql:8\.1/m);
  });

  it('--revision prints that pod template', () => {
    expect(formatRevision(n, revs[1])).toBe(
      [
        'neoset.neo.io/mysql with revision #2 (update)',
        'Name:         mysql-rev2',
        'Images:       main=mysql:8.1',
        'Data format:  3',
        'Change-cause: canary of 8.1',
        'Pod Template:',
        '  metadata:',
        '    labels:',
        '      app: mysql',
        '    annotations:',
        '      neo.io/data-format: "3"',
        '  spec:',
        '    containers:',
        '      - name: main',
        '        image: mysql:8.1',
        '        readinessProbe:',
        '          tcpSocket:',
        '            port: 3306',
        '',
      ].join('\n'),
    );
  });
});

describe('undo', () => {
  const revs = [revision(1, 'mysql:8.0', 'first'), revision(2, 'mysql:8.1'), revision(3, 'mysql:8.2')];

  it('goes back by default to the newest revision whose template differs from spec.template', () => {
    expect(previousRevision(neoset({ image: 'mysql:8.2' }), revs)?.revision).toBe(2);
    // spec.template already changed to a template the controller has not stored yet: 3 is the previous one.
    expect(previousRevision(neoset({ image: 'mysql:9.0' }), revs)?.revision).toBe(3);
    expect(previousRevision(neoset({ image: 'mysql:8.0' }), [revs[0]])).toBeUndefined();
    // Key order is no difference.
    const reordered = { ...revs[1], data: { spec: { template: { spec: template('mysql:8.1').spec, metadata: template('mysql:8.1').metadata } } } };
    expect(previousRevision(neoset({ image: 'mysql:8.1' }), [revs[0], reordered])?.revision).toBe(1);
  });

  it("replaces spec.template whole and carries the revision's change-cause, guarded by resourceVersion", () => {
    const n = neoset({ image: 'mysql:8.2', annotations: { 'kubernetes.io/change-cause': 'to 8.2', team: 'db' } });
    expect(undoPatch(n, revs[0])).toEqual([
      { op: 'replace', path: '/metadata/resourceVersion', value: '42' },
      { op: 'replace', path: '/spec/template', value: template('mysql:8.0') },
      { op: 'add', path: '/metadata/annotations/kubernetes.io~1change-cause', value: 'first' },
    ]);
    expect(undoPatch(n, revs[1])[2]).toEqual({ op: 'remove', path: '/metadata/annotations/kubernetes.io~1change-cause' });
    expect(undoPatch(neoset({}), revs[0])[2]).toEqual({ op: 'add', path: '/metadata/annotations', value: { 'kubernetes.io/change-cause': 'first' } });
    expect(undoPatch(neoset({}), revs[1])).toHaveLength(2);
  });
});
