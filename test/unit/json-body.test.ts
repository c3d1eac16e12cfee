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
      expect(parseJsonBody(body(value), { wholeMaxBytes: 0 })).toEqual(value);
      expect(parseJsonBody(body(value, ''), { wholeMaxBytes: 0 })).toEqual(value);
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
        expect(parseJsonBody(bytes, { wholeMaxBytes: 0 })).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: Number(process.env.JSON_BODY_RUNS ?? 2000) },
    );
    // The item-by-item path itself is what most lists take.
    expect(split).toBeGreaterThan(300);
  });
});

// A Pod list read without the items' managedFields (the snapshot's pods): each item is what JSON.parse
// makes of it less metadata.managedFields, whatever the strings around and inside the field hold.
describe('parseJsonBody withoutManagedFields', () => {
  const without = (value: ReturnType<typeof list>) => {
    const copy = JSON.parse(JSON.stringify(value)) as ReturnType<typeof list>;
    for (const item of copy.items as { metadata?: { managedFields?: unknown } }[]) if (item?.metadata) delete item.metadata.managedFields;
    return copy;
  };
  // As the API server writes a Pod: managedFields last in metadata, entries of field sets only.
  const hostile = (i: number) => ({
    metadata: {
      name: `web-${i}`,
      annotations: { note: ',"managedFields":[{"manager":"x"}]},"spec":{', other: '] } [ \\ " ü 日本' },
      managedFields: [
        { manager: 'a "quoted] [name\\', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:note': {} } } } },
        { manager: 'kubelet', operation: 'Update', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Ready]"}': { '.': {}, 'f:status': {} } } } } },
      ],
    },
    spec: { containers: [{ name: 'app', image: 'app:1', args: ['"managedFields":[', ']}'] }] },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });

  it('leaves out each item\'s managedFields, at any size, and nothing else', () => {
    for (const n of [1, 3, 400]) {
      const value = list(Array.from({ length: n }, (_, i) => (i % 2 ? hostile(i) : pod(i))));
      const parsed = parseJsonBody(body(value), { withoutManagedFields: true }) as ReturnType<typeof list>;
      expect(parsed).toEqual(without(value));
      expect(JSON.stringify(parsed)).not.toContain('"managedFields"');
    }
  });

  it('keeps a managedFields that is not metadata\'s last key, and what is not a list', () => {
    const notLast = list([{ metadata: { name: 'a', managedFields: [{ manager: 'm' }], uid: 'u' }, spec: {} }, pod(1)]);
    expect(parseJsonBody(body(notLast), { withoutManagedFields: true })).toEqual({ ...notLast, items: [notLast.items[0], without(list([pod(1)])).items[0]] });
    for (const value of [pod(0), { kind: 'Status', code: 404 }, list([])]) expect(parseJsonBody(body(value), { withoutManagedFields: true })).toEqual(value);
  });

  it('is JSON.parse less metadata.managedFields for any list of items shaped as a Pod (property)', () => {
    const text = fc.oneof(fc.string(), fc.constantFrom(',"managedFields":[', ']}', '"]', '\\', '},{"metadata":', 'k:{"name":"]"}'));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), tie('object'), fc.array(tie('value'), { maxLength: 3 })),
      // No key ending in a backslash: Node 24.21's JSON.parse (V8 13.6), having seen an object with key
      // `a\` at a position, reads a key `a"` at that position of a later object as `a\` (whichever
      // parser — the whole body's or ours — meets them in that order); no Kubernetes key ends so.
      object: fc.dictionary(text.filter((k) => k !== 'managedFields' && !k.endsWith('\\')), tie('value'), { maxKeys: 4 }),
    }));
    const entry = fc.record({ manager: text, operation: fc.constantFrom('Update', 'Apply'), fieldsV1: json.object });
    // A Pod's metadata has a name (its first key), so managedFields is never the only one.
    const item = fc.record({ name: text, meta: json.object, managed: fc.option(fc.array(entry, { maxLength: 3 }), { nil: undefined }), rest: json.object }).map(({ name, meta, managed, rest }) => ({
      metadata: managed === undefined ? { name, ...meta } : { name, ...meta, managedFields: managed },
      ...rest,
    }));
    let cut = 0;
    fc.assert(
      fc.property(fc.array(item, { maxLength: 5 }).map(list), (value) => {
        const parsed = parseJsonBody(body(value), { withoutManagedFields: true });
        const whole = JSON.parse(JSON.stringify(value));
        // Items not cut at their own boundaries (a first key that is not metadata, as an integer-like
        // key is in JavaScript's order) fall back to the whole parse, managedFields kept.
        if (JSON.stringify(parsed) === JSON.stringify(whole)) return;
        expect(parsed).toEqual(without(whole));
        cut++;
      }),
      { numRuns: Number(process.env.JSON_BODY_RUNS ?? 2000) },
    );
    expect(cut).toBeGreaterThan(Number(process.env.JSON_BODY_RUNS ?? 2000) / 4);
  });
});
