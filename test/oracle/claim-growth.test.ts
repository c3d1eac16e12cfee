// The oracle's claims-that-grow rules (claim-growth.ts) on hand-made transitions: each finding, and
// quiet on a grow within the rules — so that a case does not depend on what the core decides.
import { describe, expect, it } from 'vitest';
import { bindClaims } from '../unit/csi.ts';
import { settled } from '../unit/helpers.ts';
import type { World } from '../unit/world.ts';
import { checkInvariants, type Observation } from './index.ts';

async function bound(spec: Parameters<typeof settled>[0] = {}): Promise<{ w: World; before: Observation }> {
  const w = await settled({ replicas: 3, volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '1Gi' } } } }], ...spec });
  bindClaims(w);
  return { w, before: w.observation() };
}

/** The claim requests `storage` (its capacity unchanged: it resizes). */
const request = (w: World, name: string, storage: string) => void ((w.pvcs.get(name)!.spec as { resources: unknown }).resources = { requests: { storage } });
const found = (w: World, previous: Observation) => checkInvariants({ ...w.observation(), previous }).map((v) => `${v.invariant}: ${v.message}`);

describe('oracle: claims that grow (§4.12)', () => {
  it('a grow within the budget, at or above the partition, not paused: nothing', async () => {
    const { w, before } = await bound();
    request(w, 'data-web-2', '2Gi');
    expect(found(w, before)).toEqual([]);
  });

  it('a shrink', async () => {
    const { w, before } = await bound();
    request(w, 'data-web-1', '512Mi');
    expect(found(w, before)).toEqual(['ClaimShrink: claim data-web-1 shrank from 1Gi to 512Mi']);
  });

  it('two pods resizing under maxUnavailable 1, and one resizing beside an unavailable pod', async () => {
    const { w, before } = await bound();
    request(w, 'data-web-2', '2Gi');
    request(w, 'data-web-1', '2Gi');
    expect(found(w, before)).toEqual(['MaxUnavailable: 2 pods unavailable or resizing (ordinals [] already, started 1, 2; claims grown: data-web-1, data-web-2) > maxUnavailable 1']);
    const other = await bound();
    other.w.kubeletUnready('web-0');
    const prev = other.w.observation();
    request(other.w, 'data-web-2', '2Gi');
    expect(found(other.w, prev)).toEqual(['MaxUnavailable: 2 pods unavailable or resizing (ordinals [0] already, started 2; claims grown: data-web-2) > maxUnavailable 1']);
  });

  it('a grow while paused, and below the partition', async () => {
    const { w, before } = await bound({ updateStrategy: { pause: true, partition: 2, maxUnavailable: 3 } });
    request(w, 'data-web-2', '2Gi');
    request(w, 'data-web-0', '2Gi');
    expect(found(w, before)).toEqual([
      'Pause: claims grew while paused: data-web-0, data-web-2',
      'Partition: claims data-web-0 of ordinal 0 grew below partition 2',
    ]);
  });
});
