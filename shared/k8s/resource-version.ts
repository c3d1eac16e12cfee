// resourceVersions as clients may compare them since Kubernetes 1.35 (KEP-5504, "Comparable
// Resource Version"): a decimal integer without leading zeros, the larger the newer. Anything else
// (an API server that is not etcd-backed, a hand-written value) is not compared.

const COMPARABLE = /^[1-9][0-9]*$/;

/** Whether a resourceVersion can be compared with another (and asked for: not "0", which means any). */
export const isComparable = (version: string): boolean => COMPARABLE.test(version);

/** Whether `a` is newer than `b`; null when either is not a comparable resourceVersion. */
export function isNewer(a: string, b: string): boolean | null {
  if (!isComparable(a) || !isComparable(b)) return null;
  return a.length !== b.length ? a.length > b.length : a > b;
}

/** The newer of two resourceVersions; `a` when they cannot be compared or `b` is absent. */
export function newest(a: string, b: string | undefined): string {
  return b !== undefined && isNewer(b, a) === true ? b : a;
}

/**
 * The floor a list version recorded in a NeoSet's status gives the next read of that list (SPEC §2.5:
 * status fields are hints, checked before use): the record when it is comparable and not newer than
 * `ceiling` — the resourceVersion of the NeoSet that holds it, written after the lists it records were
 * read, so newer than any genuine record (one etcd, one revision counter) — else the ceiling itself.
 * Anyone who may write the status (`kubectl edit --subresource=status`) could otherwise name a version
 * the API server refuses (400: not a number, past uint64) or never reaches (a 504 after its ~3 s wait),
 * on every read of that NeoSet's children: a NeoSet frozen, or slowed, by its own status.
 */
export function floorFrom(recorded: string | undefined, ceiling: string | undefined): string | undefined {
  if (recorded === undefined || !isComparable(recorded)) return ceiling;
  return ceiling !== undefined && isNewer(recorded, ceiling) !== false ? ceiling : recorded;
}
