// The Pod a NeoSet's ordinal gets (SPEC §4.1), built minimally for admission's server-side dry-run:
// enough that the API server validates exactly what it will later be asked to create — template
// metadata and spec, NeoSet labels, hostname/subdomain, the InPlaceUpdateReady readiness gate and
// the PVC volumes of volumeClaimTemplates (without them, a volumeMount naming a claim is "not found").
// No ownerReference: the NeoSet has no uid yet on CREATE. (The core's pod builder may replace this.)
import type { NeoSet } from '../api/neoset.ts';
import { CONDITION_INPLACE_READY, LABEL_NEOSET_NAME, LABEL_POD_INDEX, LABEL_POD_NAME } from '../api/names.ts';
import type { Pod } from '../core/objects.ts';
import { isPlainObject } from '../core/json.ts';
import { podName as ordinalName, volumeClaimName } from '../core/pods/identity.ts';

export function ordinalPod(neoset: NeoSet, name: string, namespace: string, ordinal: number): Pod {
  const podName = ordinalName(name, ordinal);
  const template = neoset.spec.template;
  const spec = template.spec as Pod['spec'];
  const claims = neoset.spec.volumeClaimTemplates.map((c) => c.metadata.name);
  // A claim replaces a template volume of the same name (StatefulSet semantics). Lists that are not
  // arrays are passed on untouched, for the API server to refuse in its own words.
  const volumes = Array.isArray(spec.volumes) || spec.volumes === undefined
    ? [
        ...(spec.volumes ?? []).filter((v) => !(isPlainObject(v) && claims.includes(String(v.name)))),
        ...claims.map((claim) => ({ name: claim, persistentVolumeClaim: { claimName: volumeClaimName(claim, name, ordinal) } })),
      ]
    : spec.volumes;
  const gates = Array.isArray(spec.readinessGates) || spec.readinessGates === undefined
    ? [...(spec.readinessGates ?? []).filter((g) => !(isPlainObject(g) && g.conditionType === CONDITION_INPLACE_READY)), { conditionType: CONDITION_INPLACE_READY }]
    : spec.readinessGates;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName,
      namespace,
      labels: {
        ...(template.metadata?.labels ?? {}),
        [LABEL_NEOSET_NAME]: name,
        [LABEL_POD_NAME]: podName,
        [LABEL_POD_INDEX]: String(ordinal),
      },
      ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
    },
    spec: {
      ...spec,
      hostname: podName,
      ...(neoset.spec.serviceName ? { subdomain: neoset.spec.serviceName } : {}),
      readinessGates: gates,
      ...(Array.isArray(volumes) && volumes.length === 0 ? {} : { volumes }),
    },
  };
}
