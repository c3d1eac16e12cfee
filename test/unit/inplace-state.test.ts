import { describe, expect, it } from 'vitest';
import {
  CACHED_TEXT_MAX,
  MAX_STATE_TEXT,
  PARSED_BYTES_MAX,
  encodeInPlaceState,
  parseInPlaceState,
  parsedCacheSize,
} from '../../shared/core/pods/in-place-state.ts';
import type { InPlaceState } from '../../shared/api/inplace-state.ts';

describe('the in-place state annotation', () => {
  it('round-trips', () => {
    const state: InPlaceState = {
      revision: 'web-abc',
      phase: 'Updating',
      readiness: 'Ready',
      drainStartedAt: '2025-01-01T00:00:00Z',
      startedAt: '2025-01-01T00:00:05Z',
      targetImages: { app: 'nginx:v2' },
      previousImageIDs: { app: 'sha256:1' },
      previousContainerIDs: { app: 'containerd://1' },
    };
    expect(parseInPlaceState(encodeInPlaceState(state))).toEqual(state);
  });

  it('reads anything unreadable as no state', () => {
    for (const raw of [undefined, '', '{', 'null', '"x"', '{"revision":"r"}', '{"revision":"r","phase":"Other","drainStartedAt":"t"}']) {
      expect(parseInPlaceState(raw)).toBeNull();
    }
  });

  // Issue 19 point 6: forged Pod events carry any annotation text they like; what is kept of them is bounded.
  const padded = (i: number, bytes: number) =>
    encodeInPlaceState({ revision: `web-${i}`, phase: 'Draining', drainStartedAt: '2025-01-01T00:00:00Z', resizeRefused: 'x'.repeat(bytes) });

  it('keeps at most PARSED_BYTES_MAX of annotation text parsed, whatever the texts', () => {
    for (let i = 0; i < 2000; i++) {
      expect(parseInPlaceState(padded(i, CACHED_TEXT_MAX - 200))?.revision).toBe(`web-${i}`);
      expect(parsedCacheSize().bytes).toBeLessThanOrEqual(PARSED_BYTES_MAX);
    }
    expect(parsedCacheSize().entries).toBeGreaterThan(0);
  });

  it('parses a text longer than CACHED_TEXT_MAX without keeping it, and reads one past the annotation limit as no state', () => {
    const before = parsedCacheSize();
    const long = padded(1, CACHED_TEXT_MAX + 1);
    expect(parseInPlaceState(long)?.resizeRefused).toHaveLength(CACHED_TEXT_MAX + 1);
    expect(parsedCacheSize()).toEqual(before);
    const huge = padded(2, MAX_STATE_TEXT);
    expect(huge.length).toBeGreaterThan(MAX_STATE_TEXT);
    expect(parseInPlaceState(huge)).toBeNull();
    expect(parsedCacheSize()).toEqual(before);
  });

  it('answers the same frozen state for the same text (what decide() relies on)', () => {
    const raw = padded(3, 10);
    const a = parseInPlaceState(raw);
    expect(parseInPlaceState(raw)).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
  });
});
