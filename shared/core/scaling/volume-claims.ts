// PersistentVolumeClaims from volumeClaimTemplates (§4.1) and their owners under
// persistentVolumeClaimRetentionPolicy, with the StatefulSet controller's semantics
// (updateClaimOwnerRefForSetAndPod): whenDeleted=Delete makes the NeoSet an owner (not controller)
// of every volume claim; whenScaled=Delete makes the pod of a condemned ordinal the owner just before the
// pod is deleted, so the garbage collector removes the volume claim with it; Retain means no owner.
import { API_VERSION, KIND, LABEL_NEOSET_NAME } from '../../api/names.ts';
import type { NeoSet } from '../../api/neoset.ts';
import { copyJson } from '../json.ts';
import type { OwnerReference, PersistentVolumeClaim, Pod } from '../objects.ts';
import { volumeClaimName, neosetOwnerRef } from '../pods/identity.ts';

type VolumeClaimTemplate = NeoSet['spec']['volumeClaimTemplates'][number];

export function volumeClaimNames(neoset: NeoSet, ordinal: number): string[] {
  return neoset.spec.volumeClaimTemplates.map((c) => volumeClaimName(c.metadata.name, neoset.metadata.name, ordinal));
}

/** What the retention policy wants on the volume claims of an ordinal: in range, or condemned with its pod. */
export function volumeClaimOwners(neoset: NeoSet, condemnedPod: Pod | null): OwnerReference[] {
  const policy = neoset.spec.persistentVolumeClaimRetentionPolicy;
  if (condemnedPod && policy.whenScaled === 'Delete') {
    return [{ apiVersion: 'v1', kind: 'Pod', name: condemnedPod.metadata.name, uid: condemnedPod.metadata.uid ?? '' }];
  }
  if (policy.whenDeleted === 'Delete') return [neosetOwnerRef(neoset, false)];
  return [];
}

/**
 * The volume claim's ownerReferences with NeoSet's own (to the NeoSet, to this ordinal's pods) replaced by
 * `wanted`; references to anyone else are kept. Null when nothing changes.
 */
export function replaceVolumeClaimOwners(
  pvc: PersistentVolumeClaim,
  neoset: NeoSet,
  podName: string,
  wanted: OwnerReference[],
): OwnerReference[] | null {
  const current = pvc.metadata.ownerReferences ?? [];
  const ours = (r: OwnerReference) =>
    (r.kind === KIND && r.apiVersion === API_VERSION && r.name === neoset.metadata.name) || (r.kind === 'Pod' && r.name === podName);
  const next = [...current.filter((r) => !ours(r)), ...wanted];
  const key = (r: OwnerReference) => `${r.apiVersion}/${r.kind}/${r.name}/${r.uid}/${r.controller ?? false}`;
  const same = current.length === next.length && current.every((r) => next.some((n) => key(n) === key(r)));
  return same ? null : next;
}

export function newVolumeClaim(neoset: NeoSet, template: VolumeClaimTemplate, ordinal: number): PersistentVolumeClaim {
  const { name, labels, annotations, ...restMeta } = template.metadata;
  const owners = volumeClaimOwners(neoset, null);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      ...restMeta,
      name: volumeClaimName(name, neoset.metadata.name, ordinal),
      ...(neoset.metadata.namespace ? { namespace: neoset.metadata.namespace } : {}),
      labels: { ...labels, ...neoset.spec.selector.matchLabels, [LABEL_NEOSET_NAME]: neoset.metadata.name },
      ...(annotations ? { annotations: { ...annotations } } : {}),
      ...(owners.length > 0 ? { ownerReferences: owners } : {}),
    },
    spec: copyJson(template.spec),
  };
}
