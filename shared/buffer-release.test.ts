import { describe, expect, it } from 'vitest';
import { releaseBuffer } from './buffer-release.ts';

describe('releaseBuffer', () => {
  it('frees a large buffer the caller made: its ArrayBuffer is detached, every view of it empty', () => {
    const joined = Buffer.concat([Buffer.alloc(60_000, 1), Buffer.alloc(60_000, 2)]);
    const view = joined.subarray(10, 20);
    releaseBuffer(joined);
    expect(joined.buffer.detached).toBe(true);
    expect(joined.length).toBe(0);
    expect(view.length).toBe(0);
  });

  it('leaves alone what is not wholly a large ArrayBuffer: a small buffer, a view of part of one, a pooled one, one already freed', () => {
    const small = Buffer.alloc(80 * 1024 - 1);
    const large = Buffer.allocUnsafeSlow(200_000);
    const part = large.subarray(1);
    const pooled = Buffer.from('pooled');
    for (const b of [small, part, pooled, undefined]) releaseBuffer(b);
    expect([small.buffer.detached, large.buffer.detached, pooled.buffer.detached]).toEqual([false, false, false]);
    expect(part.length).toBe(199_999);
    releaseBuffer(large);
    expect(() => releaseBuffer(large)).not.toThrow();
  });
});
