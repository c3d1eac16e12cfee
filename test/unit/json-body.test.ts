// An API server's answer parsed item by item (shared/k8s/json-body.ts) is exactly what JSON.parse of
// the whole makes of it, whatever the items hold — the separator's bytes inside strings, nested
// objects whose first key is the items' own, non-ASCII text — and a body that is not a list, or not
// one shaped as the API server writes it, is parsed whole.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonBody, parseListByItems, WHOLE_PARSE_MAX_BYTES } from '../../shared/k8s/json-body.ts';

const pod = (i: number, extra: Record<string, unknown> = {}) => ({
  metadata: { name: `web-${i}`, namespace: 'default', labels: { app: 'web' }, managedFields: [{ manager: 'kubelet', fieldsV1: { 'f:status': { 'f:conditions': {} } } }] },
  spec: { containers: [{ name: 'app', image: 'app:1' }], volumes: [{ name: 'v', projected: { sources: [{ configMap: { items: [{ key: 'ca.crt', path: 'ca.crt' }] } }] } }] },
  status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'ContainersReady', status: 'True' }] },
  ...extra,
});
const list = (items: unknown[]) => ({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1234' }, items });
const body = (value: unknown, trailer = '\n') => Buffer.from(JSON.stringify(value) + trailer);

describe('parseJsonBody', () => {
  it('parses a large list item by item, to what JSON.parse makes of the whole', () => {
    const value = list(Array.from({ length: 400 }, (_, i) => pod(i)));
    const bytes = body(value);
    expect(bytes.length).toBeGreaterThan(WHOLE_PARSE_MAX_BYTES);
    expect(parseListByItems(bytes)).toEqual(value);
    expect(parseJsonBody(bytes)).toEqual(value);
  });

  it('parses small bodies whole, lists or not', () => {
    expect(parseJsonBody(body({ kind: 'Status', code: 404 }))).toEqual({ kind: 'Status', code: 404 });
    expect(parseJsonBody(body(list([pod(0)])))).toEqual(list([pod(0)]));
  });

  it('falls back to the whole body where the items are not cut at their own boundaries', () => {
    // Nested objects in arrays whose first key is the items' own: a cut there leaves brackets open.
    const nested = list([pod(0, { spec: { templates: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }] } }), pod(1)]);
    // The separator's text inside strings (its quotes escaped), and text that is not ASCII.
    const strings = list([pod(0, { note: '},{"metadata":{"name":"x"}} ü 日本 \\' }), pod(1, { note: '"items":[{"' })]);
    // Not a list at all, and a list whose items are not last.
    const object = pod(0);
    const notLast = { items: [{ a: 1 }, { a: 2 }], tail: [{ a: 3 }] };
    for (const value of [nested, strings, object, notLast, list([]), list([1, 2, 3])]) {
      expect(parseJsonBody(body(value), 0)).toEqual(value);
      expect(parseJsonBody(body(value, ''), 0)).toEqual(value);
    }
    expect(parseListByItems(body(object))).toBeNull();
    expect(parseListByItems(body(notLast))).toBeNull();
  });

  it('is JSON.parse for any list of objects and any JSON object (property)', () => {
    const key = fc.constantFrom('metadata', 'items', 'a', '},{"metadata":', '"items":[{"', 'ü');
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.string(), fc.integer(), fc.boolean(), fc.constant(null), tie('object'), fc.array(tie('object'), { maxLength: 3 })),
      object: fc.dictionary(fc.oneof(key, fc.string()), tie('value'), { maxKeys: 4 }),
    }));
    const item = fc.tuple(json.object, json.value).map(([rest, first]) => ({ metadata: first, ...rest }));
    let split = 0;
    fc.assert(
      fc.property(fc.oneof(fc.array(item, { maxLength: 6 }).map(list), json.object), fc.constantFrom('', '\n', ' \r\n'), (value, trailer) => {
        const bytes = body(value, trailer);
        if (parseListByItems(bytes) !== null) split++;
        expect(parseJsonBody(bytes, 0)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: Number(process.env.JSON_BODY_RUNS ?? 2000) },
    );
    // The item-by-item path itself is what most lists take.
    expect(split).toBeGreaterThan(300);
  });
});
