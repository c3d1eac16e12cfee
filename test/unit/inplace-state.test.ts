import { describe, expect, it } from 'vitest';
import { encodeInPlaceState, parseInPlaceState } from '../../shared/core/update/state-annotation.ts';
import type { InPlaceState } from '../../shared/core/plan.ts';

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
});
