// A readiness write decided on the Pod of an event, without reading the pod first (SPEC §2.0 as revised
// by issue 24). The event's pod is only a claim; the facts the decision rests on travel with the write
// as JSON Patch `test` operations (RFC 6902 §4.6), and the API server checks them against the pod as
// stored, in the same request, before it applies anything (a failed test is 422, nothing written). So
// what is written is what the pod's real state calls for — as with a GET and a write conditional on
// its resourceVersion — with one request instead of two, and a kubelet write in between that changes
// none of the facts (a probe time, an unrelated container) does not void it.
//
// The facts are every part of the pod the readiness decision reads (shared/core/readiness/readiness.ts
// and the pods/ helpers it calls), whole: labels, annotations, owners, deletionTimestamp, the
// containers of the spec, the phase, conditions and container statuses. The decision is made on `view`,
// the pod cut down to exactly those parts, so it cannot lean on a part no test checks. An absent part is
// tested as null: kube-apiserver's JSON Patch (gopkg.in/evanphx/json-patch.v4) passes a test of null on
// a member that is not there (its parent must be), and fails it on one that is — the contract test
// test/integration/memory-api-contract.test.ts holds the real server to it.
import { ANNOTATION_INPLACE_STATE, CONDITION_INPLACE_READY } from '../api/names.ts';
import type { Pod, PodCondition } from '../core/objects.ts';

export type JsonPatchOp = { op: 'test' | 'add' | 'replace' | 'remove'; path: string; value?: unknown };

/** The parts of a pod the readiness decision reads: [object, member]. */
const PARTS = [
  ['metadata', 'uid'],
  ['metadata', 'labels'],
  ['metadata', 'annotations'],
  ['metadata', 'ownerReferences'],
  ['metadata', 'deletionTimestamp'],
  ['spec', 'containers'],
  ['status', 'phase'],
  ['status', 'conditions'],
  ['status', 'containerStatuses'],
] as const;

export interface PodFacts {
  /** The pod cut down to the tested parts (and its name and namespace): what the decision is made on. */
  view: Pod;
  /** One `test` per part, null for a part the pod does not have. */
  tests: JsonPatchOp[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The facts of `object` as the pod `namespace/name`, or null when it is not shaped so (no uid, another
 * name, no containers, no status): such an event's pod may still tell a skip, never a write.
 */
export function podFacts(object: unknown, namespace: string, name: string): PodFacts | null {
  if (!isObject(object) || !isObject(object.metadata) || !isObject(object.spec) || !isObject(object.status)) return null;
  const { metadata, spec, status } = object;
  if (metadata.name !== name || metadata.namespace !== namespace || typeof metadata.uid !== 'string' || metadata.uid === '') return null;
  if (!Array.isArray(spec.containers)) return null;
  const source: Record<string, Record<string, unknown>> = { metadata, spec, status };
  const view: Record<string, Record<string, unknown>> = { metadata: { name, namespace }, spec: {}, status: {} };
  const tests: JsonPatchOp[] = [];
  for (const [part, member] of PARTS) {
    const value = source[part][member];
    if (value !== undefined && value !== null) view[part][member] = value;
    tests.push({ op: 'test', path: `/${part}/${member}`, value: value ?? null });
  }
  return { view: view as unknown as Pod, tests };
}

/** A JSON Pointer token (RFC 6901): `~` and `/` escaped. */
export const pointerToken = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** Sets the gate condition on the pod the facts describe: replaces it where it is, or appends it. */
export function gateOp(view: Pod, condition: PodCondition): JsonPatchOp {
  const conditions = view.status?.conditions;
  if (!conditions) return { op: 'add', path: '/status/conditions', value: [condition] };
  const at = conditions.findIndex((c) => c.type === CONDITION_INPLACE_READY);
  return at >= 0 ? { op: 'replace', path: `/status/conditions/${at}`, value: condition } : { op: 'add', path: '/status/conditions/-', value: condition };
}

/** Removes the in-place state annotation (tested present by the facts of a pod in an update). */
export const removeStateOp: JsonPatchOp = { op: 'remove', path: `/metadata/annotations/${pointerToken(ANNOTATION_INPLACE_STATE)}` };
