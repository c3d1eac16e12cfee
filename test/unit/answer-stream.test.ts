// An API answer parsed as it streams (shared/k8s/answer-stream.ts) is what JSON.parse makes of it
// whole, however its bytes are cut into chunks and whatever its items hold (nested arrays of objects
// with the items' first key, the separator's text in strings); a list's items are trimmed as they
// come, and the bytes held are charged and refunded so that a budget sees what is kept.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerParser, AnswerTooLarge } from '../../shared/k8s/answer-stream.ts';
import { WHOLE_PARSE_MAX_BYTES } from '../../shared/k8s/json-body.ts';
import { runBudget, InstanceBudget, TooLargeToDecide } from '../../shared/k8s/read-budget.ts';

const list = (items: unknown[], kind = 'PodList') => ({ kind, apiVersion: 'v1', metadata: { resourceVersion: '7', continue: 'abc' }, items });
const pad = 'x'.repeat(2000);
const pod = (i: number, extra: Record<string, unknown> = {}) => ({ metadata: { name: `web-${i}`, annotations: { big: pad } }, spec: { containers: [{ name: 'app', image: 'app:1' }] }, ...extra });

/** Feeds `bytes` in chunks of the given sizes (cycled) and returns the parse. */
function feed(bytes: Buffer, sizes: number[], opts: Parameters<typeof answerParser>[0] = {}) {
  const parser = answerParser(opts);
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = Math.max(1, sizes[i % sizes.length]);
    parser.push(bytes.subarray(at, at + n));
    at += n;
  }
  return parser.end();
}

describe('answerParser', () => {
  it('streams a large list to what JSON.parse makes of it, at any chunking', () => {
    const value = list(Array.from({ length: 200 }, (_, i) => pod(i)));
    const bytes = Buffer.from(JSON.stringify(value));
    expect(bytes.length).toBeGreaterThan(WHOLE_PARSE_MAX_BYTES);
    for (const sizes of [[bytes.length], [65536], [1], [7, 3000, 13]]) expect(feed(bytes, sizes)).toEqual(value);
  });

  it('finds an item\'s end by its brackets when a separator is nested in it (ownerReferences of a NeoSet list)', () => {
    const neoset = (i: number) => ({ apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', metadata: { name: `n${i}`, ownerReferences: [{ apiVersion: 'a', kind: 'K', name: 'x' }, { apiVersion: 'b', kind: 'K', name: 'y' }] }, spec: { note: pad, list: [{ apiVersion: 'z' }, { apiVersion: '},{"apiVersion":' }] } });
    const value = list(Array.from({ length: 80 }, (_, i) => neoset(i)), 'NeoSetList');
    const bytes = Buffer.from(JSON.stringify(value));
    for (const sizes of [[bytes.length], [4096], [1, 2, 3]]) expect(feed(bytes, sizes)).toEqual(value);
  });

  it('trims each item as it comes and refunds what was cut; the list is never charged whole', () => {
    const value = list(Array.from({ length: 500 }, (_, i) => pod(i)));
    const bytes = Buffer.from(JSON.stringify(value));
    const instance = new InstanceBudget(1e9);
    const budget = runBudget(instance, 1e9);
    let most = 0;
    const trim = (item: unknown) => {
      const a = (item as { metadata: { annotations: Record<string, string> } }).metadata.annotations;
      const cut = a.big.length;
      delete a.big;
      most = Math.max(most, budget.held());
      return cut;
    };
    const parsed = feed(bytes, [16384], { trim, budget }) as ReturnType<typeof list>;
    expect(parsed.items).toHaveLength(500);
    expect(parsed.items[0]).toEqual({ metadata: { name: 'web-0', annotations: {} }, spec: { containers: [{ name: 'app', image: 'app:1' }] } });
    // What is held at the end is about the trimmed items' bytes, not the answer's; at no time more than a fraction of it.
    expect(budget.held()).toBeLessThan(bytes.length / 10);
    expect(most).toBeLessThan(bytes.length / 5);
    expect(instance.held).toBe(budget.held());
  });

  it('refuses a charge past the budget, and an object past maxObjectBytes, before buffering the rest', () => {
    const value = list(Array.from({ length: 500 }, (_, i) => pod(i)));
    const bytes = Buffer.from(JSON.stringify(value));
    const budget = runBudget(new InstanceBudget(1e9), 100_000);
    expect(() => feed(bytes, [16384], { budget })).toThrow(TooLargeToDecide);
    const object = Buffer.from(JSON.stringify({ kind: 'NeoSet', spec: { env: 'v'.repeat(300_000) } }));
    expect(() => feed(object, [16384], { maxObjectBytes: 200_000 })).toThrow(AnswerTooLarge);
  });

  it('is JSON.parse for any list or object, at any chunking (property)', () => {
    const key = fc.constantFrom('metadata', 'items', 'a', '},{"metadata":', '"items":[{"', 'ü');
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.string(), fc.integer(), fc.boolean(), fc.constant(null), tie('object'), fc.array(tie('object'), { maxLength: 3 })),
      object: fc.dictionary(fc.oneof(key, fc.string()).filter((k) => !k.endsWith('\\')), tie('value'), { maxKeys: 4 }),
    }));
    // Each item padded so that most lists pass WHOLE_PARSE_MAX_BYTES and stream.
    const item = fc.tuple(json.object, json.value, fc.integer({ min: 0, max: 40_000 })).map(([rest, first, n]) => ({ metadata: first, ...rest, pad: 'p'.repeat(n) }));
    fc.assert(
      fc.property(fc.oneof(fc.array(item, { minLength: 1, maxLength: 8 }).map((items) => list(items)), json.object), fc.array(fc.integer({ min: 1, max: 50_000 }), { minLength: 1, maxLength: 4 }), (value, sizes) => {
        const bytes = Buffer.from(JSON.stringify(value));
        expect(feed(bytes, sizes)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });
});
