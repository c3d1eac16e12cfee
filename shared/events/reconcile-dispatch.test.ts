// The reconcile function's dispatch as pure rules: what an event asks, how two asks combine, when a
// run looks again by itself.
import { describe, expect, it } from 'vitest';
import { CONFLICT_RECHECK_MS, eventAsk, MAX_SELF_RECHECK_SECONDS, mergeAsks, recheckDelayMs } from './reconcile-dispatch.ts';
import type { ParsedEvent } from './target.ts';

const podUpdate = (object: unknown): ParsedEvent => ({ id: 'e1', type: 'dev.knative.apiserver.resource.update', target: { kind: 'pod', namespace: 'db', name: 'mysql-0', neoset: 'mysql' }, object });

describe('reconcile dispatch', () => {
  it("a Pod event asks for reconcile's duties only, with its Pod's resourceVersion when comparable", () => {
    const pod = { metadata: { name: 'mysql-0', namespace: 'db', resourceVersion: '120' } };
    expect(eventAsk(podUpdate(pod), 0)).toEqual({ ask: { duties: 'reconcile', seen: '120' } });
    expect(eventAsk(podUpdate({ metadata: { ...pod.metadata, resourceVersion: 'abc' } }), 0)).toEqual({ ask: { duties: 'reconcile', seen: undefined } });
  });

  it('a NeoSet update whose generation is decided is skipped; a tick asks for everything', () => {
    const decided = { metadata: { name: 'mysql', generation: 3 }, status: { observedGeneration: 3 } };
    expect(eventAsk({ id: 'e2', type: 'dev.knative.apiserver.resource.update', target: { kind: 'neoset', namespace: 'db', name: 'mysql' }, object: decided }, 0)).toEqual({ skipped: 'generation already decided' });
    expect(eventAsk({ id: 'e3', type: 'dev.knative.sources.ping', target: { kind: 'all' }, object: null }, 0)).toEqual({ ask: { duties: 'all' } });
  });

  it('one run covering two events does what either asked, with the newer Pod seen', () => {
    expect(mergeAsks({ duties: 'reconcile', seen: '9' }, { duties: 'reconcile', seen: '10' })).toEqual({ duties: 'reconcile', seen: '10' });
    expect(mergeAsks({ duties: 'reconcile', seen: '10' }, { duties: 'all' })).toEqual({ duties: 'all', seen: '10' });
  });

  it('a NeoSet event asks every duty, the NeoSet not older than its version — or, with none to compare (Reference mode), from etcd', () => {
    const neosetEvent = (object: unknown): ParsedEvent => ({ id: 'e4', type: 'dev.knative.apiserver.resource.update', target: { kind: 'neoset', namespace: 'db', name: 'mysql' }, object });
    expect(eventAsk(neosetEvent({ metadata: { name: 'mysql', generation: 4, resourceVersion: '77' }, status: { observedGeneration: 3 } }), 0)).toEqual({ ask: { duties: 'all', neosetSeen: '77' } });
    expect(eventAsk(neosetEvent(null), 0)).toEqual({ ask: { duties: 'all', neosetFromEtcd: true } });
    expect(eventAsk(neosetEvent({ metadata: { name: 'mysql', resourceVersion: 'forged' } }), 0)).toEqual({ ask: { duties: 'all', neosetFromEtcd: true } });
    expect(mergeAsks({ duties: 'all', neosetSeen: '77' }, { duties: 'reconcile', seen: '80', neosetSeen: '70' })).toEqual({ duties: 'all', seen: '80', neosetSeen: '77' });
    expect(mergeAsks({ duties: 'reconcile', seen: '80' }, { duties: 'all', neosetFromEtcd: true })).toEqual({ duties: 'all', seen: '80', neosetFromEtcd: true });
  });

  it('a conflict looks again soon, a short requeueAfter in process, a long one is left to the resync tick', () => {
    expect(recheckDelayMs({ result: 'conflict', requeueAfter: null })).toBe(CONFLICT_RECHECK_MS);
    expect(recheckDelayMs({ result: 'ok', requeueAfter: 0 })).toBe(100);
    expect(recheckDelayMs({ result: 'ok', requeueAfter: MAX_SELF_RECHECK_SECONDS })).toBe(MAX_SELF_RECHECK_SECONDS * 1000);
    expect(recheckDelayMs({ result: 'ok', requeueAfter: MAX_SELF_RECHECK_SECONDS + 1 })).toBeNull();
    expect(recheckDelayMs({ result: 'ok', requeueAfter: null })).toBeNull();
  });
});
