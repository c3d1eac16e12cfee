import { describe, expect, it } from 'vitest';
import { orderedMerge, type Change, type Stream } from '../e2e/ordered-merge.ts';
import type { WatchEventType } from '../../shared/k8s/watch.ts';

const change = (stream: Stream, name: string, rv: number, type: WatchEventType = 'MODIFIED'): Change => ({
  stream,
  type,
  obj: { metadata: { name, uid: `uid-${name}`, resourceVersion: String(rv) } },
});
const label = (c: Change) => `${c.stream}/${c.obj.metadata.name}@${c.obj.metadata.resourceVersion}`;

function merged() {
  const applied: string[] = [];
  const m = orderedMerge((c) => applied.push(label(c)));
  const deliver = (c: Change) => {
    m.receive(c);
    m.progress(c.stream, c.obj.metadata.resourceVersion!);
  };
  return { m, applied, deliver };
}

describe('the observer merges the NeoSet and pod watches in resourceVersion order', () => {
  it('a NeoSet status delivered before the pod change its writer read waits for it (the CI false positive)', () => {
    const { m, applied, deliver } = merged();
    m.progress('neosets', '10');
    m.progress('pods', '10');
    // In etcd: pod web-4 finished at 11, then the decider that read it claimed web-1 at 12. The
    // NeoSet watch delivers 12 first.
    deliver(change('neosets', 'web', 12));
    expect(applied).toEqual([]);
    expect(m.holdingBack()).toBe('pods');
    deliver(change('pods', 'web-4', 11));
    expect(applied).toEqual(['pods/web-4@11']);
    deliver(change('pods', 'web-3', 13));
    expect(applied).toEqual(['pods/web-4@11', 'neosets/web@12']);
    expect(m.holdingBack()).toBe('neosets');
  });

  it('a list of the quiet stream that shows nothing undelivered moves its frontier; one that does not, waits for the watch', () => {
    const { m, applied, deliver } = merged();
    deliver(change('neosets', 'web', 5, 'ADDED'));
    deliver(change('pods', 'web-0', 6, 'ADDED'));
    deliver(change('pods', 'web-0', 8));
    expect(applied).toEqual(['neosets/web@5']);
    expect(m.holdingBack()).toBe('neosets');
    // A list at 9 that has a NeoSet change (at 7) the watch has not delivered yet: no move.
    expect(m.listed('neosets', '9', [change('neosets', 'web', 7).obj])).toBe(false);
    expect(applied).toEqual(['neosets/web@5']);
    deliver(change('neosets', 'web', 7));
    expect(applied).toEqual(['neosets/web@5', 'pods/web-0@6', 'neosets/web@7']);
    // Now the list shows only what was delivered: everything up to 9 is known, pod 8 applies.
    expect(m.listed('neosets', '9', [change('neosets', 'web', 7).obj])).toBe(true);
    expect(applied).toEqual(['neosets/web@5', 'pods/web-0@6', 'neosets/web@7', 'pods/web-0@8']);
    expect(m.holdingBack()).toBeUndefined();
  });

  it('a deletion counts: a list that lacks a delivered object is not what was delivered', () => {
    const { m, deliver } = merged();
    deliver(change('neosets', 'a', 3, 'ADDED'));
    deliver(change('neosets', 'b', 4, 'ADDED'));
    deliver(change('pods', 'a-0', 6, 'ADDED'));
    expect(m.listed('neosets', '7', [change('neosets', 'a', 3).obj])).toBe(false);
    deliver(change('neosets', 'b', 5, 'DELETED'));
    expect(m.listed('neosets', '7', [change('neosets', 'a', 3).obj])).toBe(true);
    expect(m.holdingBack()).toBeUndefined();
  });
});
