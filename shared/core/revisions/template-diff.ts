// Can a pod move from one template to another in place (§4.4, §4.9)? Container images, the
// template's labels and annotations, and containers' cpu/memory requests and limits (through the
// pods/resize subresource) can: kubelet restarts a container whose image was patched and
// resizes one whose resources were, while any other Pod spec field is immutable on a running Pod (or,
// for the few that are not, NeoSet does not patch it), so such a change means delete and recreate.
// A resize may not change the pod's QoS class, touch another resource, remove a request or limit, or
// change resizePolicy (ValidatePodResize, Kubernetes 1.37: "only cpu and memory resources are
// mutable" — the memory-API contract test shows it); init containers are not resized (their resources are
// immutable unless the InPlacePodVerticalScalingInitContainers gate is on). The rule is the core's;
// admission uses it too (InPlaceOnly refuses the rest), so the two can never disagree.
import type { PodTemplateSpec } from '../../api/neoset.ts';
import { fieldPath, type PathSegment } from '../field-path.ts';
import { isPlainObject, sameJson, type JsonObject } from '../json.ts';
import { qosClass, resizeBlockers, resourcesOf } from '../resize/resources.ts';
import { canonicalTemplate } from './semantic.ts';

export interface TemplateChange {
  /** Nothing differs beyond container images, containers' cpu/memory, and template labels/annotations. */
  inPlace: boolean;
  /** The fields that differ beyond those, as API field paths (`spec.containers[0].env`): what InPlaceOnly names. */
  differences: string[];
}

export function templateChange(from: PodTemplateSpec, to: PodTemplateSpec): TemplateChange {
  const differences = inPlaceChangeBlockers(from, to);
  return { inPlace: differences.length === 0, differences };
}

/** Structurally a PodTemplateSpec; PodTemplateSpec and a ControllerRevision's stored template both fit. */
export interface PodTemplateLike {
  metadata?: object;
  spec?: object;
}

const IN_PLACE_METADATA = new Set(['labels', 'annotations']);

function changedKeys(a: JsonObject, b: JsonObject, at: PathSegment[], except: Set<string>): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !except.has(k)).sort();
  return keys.filter((k) => !sameJson(a[k], b[k])).map((k) => fieldPath([...at, k]));
}

function containerBlockers(a: unknown, b: unknown): string[] {
  if (!Array.isArray(a) || !Array.isArray(b)) return sameJson(a, b) ? [] : ['spec.containers'];
  // Adding or removing a container changes the Pod's container list, which is immutable.
  if (a.length !== b.length) return ['spec.containers'];
  return a.flatMap((before, i) => {
    const after = b[i];
    if (!isPlainObject(before) || !isPlainObject(after)) return sameJson(before, after) ? [] : [fieldPath(['spec', 'containers', i])];
    const at = fieldPath(['spec', 'containers', i]);
    return [
      ...changedKeys(before, after, ['spec', 'containers', i], IN_PLACE_CONTAINER),
      ...resizeBlockers(resourcesOf(before), resourcesOf(after), at),
    ];
  });
}

/** Container fields an in-place update carries: the image (pod patch) and resources (pods/resize). */
const IN_PLACE_CONTAINER = new Set(['image', 'resources']);

/** A resize may not change the pod's QoS class (ValidatePodResize): named by the containers' resources that changed. */
function qosBlockers(oldSpec: JsonObject, newSpec: JsonObject): string[] {
  const before = [...asArray(oldSpec.containers), ...asArray(oldSpec.initContainers)];
  const after = [...asArray(newSpec.containers), ...asArray(newSpec.initContainers)];
  // A container added or removed is a blocker of its own (the containers list is immutable).
  if (asArray(oldSpec.containers).length !== asArray(newSpec.containers).length) return [];
  const [from, to] = [qosClass(before), qosClass(after)];
  if (from === to) return [];
  const changed = asArray(newSpec.containers).flatMap((c, i) =>
    sameJson(resourcesOf(asArray(oldSpec.containers)[i]), resourcesOf(c)) ? [] : [fieldPath(['spec', 'containers', i, 'resources'])],
  );
  return (changed.length > 0 ? changed : ['spec.containers']).map((p) => `${p} (QoS class ${from} -> ${to})`);
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

const asObject = (value: unknown): JsonObject => (isPlainObject(value) ? value : {});

/**
 * The field paths, relative to the template (`spec.containers[0].env`, `metadata.name`), whose
 * change cannot be made in place. Empty: the change (if any) is images, containers' cpu/memory and
 * labels/annotations only.
 */
export function inPlaceChangeBlockers(oldTemplate: PodTemplateLike, newTemplate: PodTemplateLike): string[] {
  const raw = blockers(oldTemplate, newTemplate);
  if (raw.length === 0) return raw;
  // A field is a blocker only when it differs as written and in the canonical form (§4.2, semantic.ts):
  // a default spelled out on one side only (terminationMessagePath, probe periods…) is the same pod;
  // and a pull policy written alike on both sides is the pod's whatever the image's tag now defaults to.
  const canonical = new Set(blockers(canonicalTemplate(oldTemplate) as PodTemplateLike, canonicalTemplate(newTemplate) as PodTemplateLike));
  return raw.filter((path) => canonical.has(path));
}

function blockers(oldTemplate: PodTemplateLike, newTemplate: PodTemplateLike): string[] {
  const oldSpec = asObject(oldTemplate.spec);
  const newSpec = asObject(newTemplate.spec);
  return [
    ...changedKeys(asObject(oldTemplate.metadata), asObject(newTemplate.metadata), ['metadata'], IN_PLACE_METADATA),
    ...containerBlockers(oldSpec.containers, newSpec.containers),
    ...qosBlockers(oldSpec, newSpec),
    ...changedKeys(oldSpec, newSpec, ['spec'], new Set(['containers'])),
  ];
}
