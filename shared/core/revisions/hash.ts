// The revision hash (§4.2), after the StatefulSet controller's ComputeHash: FNV-32a over the
// template (here: its canonical form, semantic.ts) and collisionCount, printed in decimal and spelled
// with an alphabet that cannot form words or look like another digit (k8s.io/apimachinery
// rand.SafeEncodeString). Pinned by test/unit/revision-hash.test.ts: a release that changes the hash
// of an unchanged template makes a new revision of it, and every pod is rolled (kubernetes#134773).
import { canonicalTemplateJson } from './semantic.ts';

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

export function fnv32a(bytes: Uint8Array, seed = FNV_OFFSET): number {
  let h = seed;
  for (const b of bytes) h = Math.imul(h ^ b, FNV_PRIME) >>> 0;
  return h >>> 0;
}

/** Ten characters of the safe alphabet, one per decimal digit of the (zero-padded) 32-bit hash. */
export function safeEncode(hash: number): string {
  return [...String(hash >>> 0).padStart(10, '0')].map((d) => SAFE_ALPHABET[d.charCodeAt(0) % SAFE_ALPHABET.length]).join('');
}

/** The short, stable hash naming a template's revision; collisionCount (little-endian uint32) changes it on a clash. */
export function templateHash(template: unknown, collisionCount: number): string {
  const h = fnv32a(new TextEncoder().encode(canonicalTemplateJson(template)));
  const count = new Uint8Array(4);
  new DataView(count.buffer).setUint32(0, collisionCount >>> 0, true);
  return safeEncode(fnv32a(count, h));
}
