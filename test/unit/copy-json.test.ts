// copyJson (shared/core/json.ts): a deep copy that shares strings — what newPod and the volume claims
// make from a template, where structuredClone made a new copy of every string (a 1 MiB env value per pod).
import { describe, expect, it } from 'vitest';
import { copyJson } from '../../shared/core/json.ts';

describe('copyJson', () => {
  it('copies objects and arrays, keeps the values, and never shares a container with its input', () => {
    const input = { spec: { containers: [{ name: 'app', env: [{ name: 'A', value: 'x' }] }], replicas: 3, paused: false, missing: null } };
    const copy = copyJson(input);
    expect(copy).toEqual(input);
    expect(copy).not.toBe(input);
    expect(copy.spec.containers).not.toBe(input.spec.containers);
    expect(copy.spec.containers[0].env[0]).not.toBe(input.spec.containers[0].env[0]);
    copy.spec.containers[0].env[0].value = 'changed';
    expect(input.spec.containers[0].env[0].value).toBe('x');
    expect(copyJson('plain')).toBe('plain');
    expect(copyJson([1, [2, [3]]])).toEqual([1, [2, [3]]]);
  });

  it('keeps an own "__proto__" member a member, the prototype untouched', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = copyJson(input);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('copies a value nested 100,000 deep without overflowing the stack', () => {
    const deep = JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`) as unknown;
    let node = copyJson(deep) as { a: unknown };
    let depth = 0;
    while (typeof node === 'object') {
      node = node.a as { a: unknown };
      depth++;
    }
    expect(depth).toBe(100_000);
  });
});
