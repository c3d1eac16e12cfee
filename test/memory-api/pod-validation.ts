// The part of Pod validation that an in-place update runs into (k8s.io/kubernetes
// pkg/apis/core/validation ValidatePodUpdate): after creation only container images, and a few
// scheduling fields, may change in .spec; everything else is a 422 that names the fields.
import { isPlainObject, sameJson, type JsonObject } from '../../shared/core/json.ts';
import { invalid, type StatusError } from './errors.ts';

const UPDATABLE = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
].join(',');

type Spec = JsonObject & { containers?: JsonObject[]; initContainers?: JsonObject[] };

/** Container images must be set (on create and update). */
function imageCauses(spec: Spec): string[] {
  const causes: string[] = [];
  for (const list of ['containers', 'initContainers'] as const) {
    (spec[list] ?? []).forEach((c, i) => {
      if (typeof c.image !== 'string' || c.image.trim() === '') causes.push(`spec.${list}[${i}].image: Required value`);
    });
  }
  return causes;
}

export function validatePodCreate(pod: { metadata: { name: string }; spec?: Spec }): StatusError | null {
  const spec = pod.spec ?? {};
  const causes = (spec.containers ?? []).length === 0 ? ['spec.containers: Required value'] : imageCauses(spec);
  return causes.length ? invalid('Pod', pod.metadata.name, causes) : null;
}

/** Field paths (one level into spec, with container indexes) where two specs differ. */
function changedFields(before: JsonObject, after: JsonObject, path = 'spec'): string[] {
  const out: string[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [b, a] = [before[key], after[key]];
    if (sameJson(b, a)) continue;
    if (Array.isArray(b) && Array.isArray(a) && b.length === a.length && (key === 'containers' || key === 'initContainers')) {
      b.forEach((x, i) => isPlainObject(x) && out.push(...changedFields(x, a[i] as JsonObject, `${path}.${key}[${i}]`)));
    } else out.push(`${path}.${key}`);
  }
  return out;
}

export function validatePodUpdate(name: string, before: Spec, after: Spec): StatusError | null {
  const images = imageCauses(after);
  if (images.length) return invalid('Pod', name, images);
  // What ValidatePodUpdate does: copy the changeable fields from the old spec onto the new one; any
  // difference left is forbidden.
  const munged: Spec = structuredClone(after);
  for (const list of ['containers', 'initContainers'] as const) {
    munged[list]?.forEach((c, i) => {
      const old = before[list]?.[i];
      if (old) c.image = old.image;
    });
  }
  for (const field of ['activeDeadlineSeconds', 'tolerations', 'schedulingGates'] as const) {
    if (before[field] === undefined) delete munged[field];
    else munged[field] = before[field];
  }
  if (typeof before.terminationGracePeriodSeconds === 'number' && before.terminationGracePeriodSeconds < 0 && munged.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = before.terminationGracePeriodSeconds;
  }
  if (sameJson(munged, before)) return null;
  // The real message follows with a go-cmp diff of the specs; the changed field paths stand in for it.
  const diff = changedFields(before, munged).join(', ');
  return invalid('Pod', name, [`spec: Forbidden: pod updates may not change fields other than ${UPDATABLE}\nchanged: ${diff}`]);
}
