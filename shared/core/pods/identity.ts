// Pod identity (§4.1): name, labels, hostname, owner, readiness gate and volumes of ordinal i,
// built from a revision's template. What the StatefulSet controller's newStatefulSetPod does.
// The identity is the ordinal itself, whatever spec.ordinals.start and spec.reserveOrdinals say
// (§4.12): which ordinals exist is ordinals.ts's, and a pod keeps its name, claims and index label.
import {
  API_VERSION,
  CONDITION_INPLACE_READY,
  KIND,
  LABEL_NEOSET_NAME,
  LABEL_POD_INDEX,
  LABEL_POD_NAME,
  LABEL_LIFECYCLE_STATE,
  LABEL_REVISION_HASH,
} from '../../api/names.ts';
import { copyJson } from '../json.ts';
import { hasHooks } from './lifecycle-state.ts';
import type { NeoSet, PodTemplateSpec } from '../../api/neoset.ts';
import type { OwnerReference, Pod } from '../objects.ts';
import type { ObjectRef } from '../plan.ts';

export function podName(neoset: string, ordinal: number): string {
  return `${neoset}-${ordinal}`;
}

/** The ordinal in `<neoset>-<ordinal>`, or null for a name NeoSet would not have given. */
export function parseOrdinal(neoset: string, name: string): number | null {
  // Decimal digits without a leading zero, at most 9 (asked for every pod of every decision: no regex).
  const start = neoset.length + 1;
  const digits = name.length - start;
  if (digits < 1 || digits > 9 || name.charCodeAt(start - 1) !== DASH || !name.startsWith(neoset)) return null;
  if (digits > 1 && name.charCodeAt(start) === ZERO) return null;
  let ordinal = 0;
  for (let i = start; i < name.length; i++) {
    const d = name.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return null;
    ordinal = ordinal * 10 + d;
  }
  return ordinal;
}

/** The PersistentVolumeClaim of volumeClaimTemplate `template` for the pod of `ordinal` (§4.1): `<template>-<neoset>-<ordinal>`. */
export function volumeClaimName(template: string, neoset: string, ordinal: number): string {
  return `${template}-${neoset}-${ordinal}`;
}

const DASH = 45;
const ZERO = 48;

/** The NeoSet as owner: controller of its pods and revisions; plain owner (no controller) of PVCs. */
export function neosetOwnerRef(neoset: NeoSet, controller: boolean): OwnerReference {
  const ref: OwnerReference = { apiVersion: API_VERSION, kind: KIND, name: neoset.metadata.name, uid: neoset.metadata.uid ?? '' };
  return controller ? { ...ref, controller: true, blockOwnerDeletion: true } : ref;
}

/**
 * The object a write is conditional on. A missing resourceVersion becomes '' — which the applier
 * refuses to send (shared/k8s/apply.ts UnconditionalWriteError): objects written to come from the API
 * server, which always gives one.
 */
export function objectRef(meta: { name: string; uid?: string; resourceVersion?: string }): ObjectRef {
  return { name: meta.name, uid: meta.uid ?? '', resourceVersion: meta.resourceVersion ?? '' };
}

/** The pod's revision: its controller-revision-hash label (set by the image patch together with the images). */
export function podRevision(pod: Pod): string | undefined {
  return pod.metadata.labels?.[LABEL_REVISION_HASH];
}

/** Labels NeoSet owns on its pods; a template can never remove them. */
export const POD_IDENTITY_LABELS = [LABEL_NEOSET_NAME, LABEL_POD_NAME, LABEL_POD_INDEX, LABEL_REVISION_HASH];

/** The pod of `ordinal` as it is created from `template`, stored as revision `revision`. */
export function newPod(neoset: NeoSet, ordinal: number, revision: string, template: PodTemplateSpec): Pod {
  const name = podName(neoset.metadata.name, ordinal);
  const spec = copyJson(template.spec) as Pod['spec'] & Record<string, unknown>;
  const gates = (spec.readinessGates ?? []).filter((g) => g.conditionType !== CONDITION_INPLACE_READY);
  // [fix] §4.1: readinessGates are immutable after creation, so the gate is there from the start.
  spec.readinessGates = [...gates, { conditionType: CONDITION_INPLACE_READY }];
  spec.hostname = name;
  if (neoset.spec.serviceName) spec.subdomain = neoset.spec.serviceName;
  else delete spec.subdomain;
  const volumes = [...(spec.volumes ?? [])];
  for (const volumeClaim of neoset.spec.volumeClaimTemplates) {
    if (volumes.some((v) => v.name === volumeClaim.metadata.name)) continue;
    volumes.push({
      name: volumeClaim.metadata.name,
      persistentVolumeClaim: { claimName: volumeClaimName(volumeClaim.metadata.name, neoset.metadata.name, ordinal) },
    });
  }
  if (volumes.length > 0) spec.volumes = volumes;
  const annotations = template.metadata?.annotations;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      ...(neoset.metadata.namespace ? { namespace: neoset.metadata.namespace } : {}),
      labels: {
        ...template.metadata?.labels,
        [LABEL_NEOSET_NAME]: neoset.metadata.name,
        [LABEL_POD_NAME]: name,
        [LABEL_POD_INDEX]: String(ordinal),
        [LABEL_REVISION_HASH]: revision,
        // §4.10: a NeoSet with update hooks creates its pods Normal.
        ...(hasHooks(neoset) ? { [LABEL_LIFECYCLE_STATE]: 'Normal' } : {}),
      },
      ...(annotations && Object.keys(annotations).length > 0 ? { annotations: { ...annotations } } : {}),
      ownerReferences: [neosetOwnerRef(neoset, true)],
    },
    spec,
  };
}
