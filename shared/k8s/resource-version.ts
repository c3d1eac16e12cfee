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
