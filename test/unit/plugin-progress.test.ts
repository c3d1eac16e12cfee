// `rollout status` output: a live display rewritten in place on a terminal, plain lines elsewhere.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { plainProgress, progressLines, terminalProgress } from '../../bin/neoset/progress.ts';
import { rolloutStatus } from '../../bin/neoset/rollout-status.ts';
import { neoset } from './plugin-fixtures.ts';

const rolling = neoset({
  updateStrategy: { partition: 2 },
  status: { observedGeneration: 2, readyReplicas: 4, updatedReplicas: 2, phase: 'Canary', currentImage: 'mysql:8.0', targetImage: 'mysql:8.1', currentUpdatePods: ['mysql-2'] },
});
const done = neoset({ status: { observedGeneration: 2, readyReplicas: 5, updatedReplicas: 5, phase: 'Completed', currentImage: 'mysql:8.1', targetImage: 'mysql:8.1', currentRevision: 'r2', updateRevision: 'r2' } });

function capture(columns = 100) {
  const stream = Object.assign(new PassThrough(), { columns, isTTY: true });
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString()));
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

describe('progress', () => {
  it('shows phase, images, updated and ready against replicas, the pods being updated, and the status line', () => {
    expect(progressLines(rolling, rolloutStatus(rolling))).toEqual([
      'neoset.neo.io/mysql  phase Canary  mysql:8.0 -> mysql:8.1',
      '  updated   [########------------] 2/5  (partition 2: 3 to update)',
      '  ready     [################----] 4/5',
      '  updating  mysql-2',
      'Waiting for 1 pods to be ready...',
    ]);
  });

  it('shows the update order a priorityStrategy sets, and the scale budget (§4.12)', () => {
    const weighted = neoset({
      updateStrategy: { priorityStrategy: { weightPriority: [{ weight: 100, matchSelector: { matchExpressions: [{ key: 'mysql.neo.io/role', operator: 'NotIn', values: ['primary'] }] } }] } },
      status: rolling.status,
    });
    Object.assign(weighted.spec, { podManagementPolicy: 'Parallel', scaleStrategy: { maxUnavailable: 3 } });
    expect(progressLines(weighted, rolloutStatus(weighted)).slice(1, 3)).toEqual([
      '  updated   [########------------] 2/5  (priority: +100 mysql.neo.io/role notin (primary))',
      '  ready     [################----] 4/5  (scale budget 3 not Ready at once)',
    ]);
    const ordered = neoset({ updateStrategy: { partition: 2, priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }, { orderedKey: 'zone' }] } }, status: rolling.status });
    expect(progressLines(ordered, rolloutStatus(ordered))[1]).toBe('  updated   [########------------] 2/5  (partition 2: 3 to update)  (priority: by rank, then zone)');
  });

  it('on a terminal, moves the cursor back over the previous display and clears it', () => {
    const { stream, text } = capture();
    const p = terminalProgress(stream);
    p.show(rolling, rolloutStatus(rolling));
    p.show(done, rolloutStatus(done));
    const [first, second] = text().split('\x1b[5A');
    expect(first.split('\n')).toHaveLength(6);
    expect(second.startsWith('\x1b[1G\x1b[0J')).toBe(true);
    expect(second).toContain('roll out complete: 5 pods at revision r2...\n');
  });

  it('moves back over the rows that lines wider than the terminal wrapped onto', () => {
    const { stream, text } = capture(30);
    const p = terminalProgress(stream);
    p.show(rolling, rolloutStatus(rolling));
    p.show(done, rolloutStatus(done));
    // 58, 63, 37, 17 and 33 characters on 30 columns: 2 + 3 + 2 + 1 + 2 rows.
    expect(text()).toContain('\x1b[10A');
  });

  it('elsewhere, prints the status line only when it changes', () => {
    const { stream, text } = capture();
    const p = plainProgress(stream);
    p.show(rolling, rolloutStatus(rolling));
    p.show(rolling, rolloutStatus(rolling));
    p.show(done, rolloutStatus(done));
    expect(text()).toBe('Waiting for 1 pods to be ready...\nroll out complete: 5 pods at revision r2...\n');
  });
});
