// What a snapshot keeps of a listed pod (SPEC §2.5: memory bounded by design). A pod carries its
// template's annotations and containers whole, and a tenant may fill them within quota: 200 KiB of
// annotations, or env values of a MiB, on each of 1,000 pods. decide() reads of a pod its identity
// (metadata but for those values), its status, and of its containers only name, image, resources and
// resizePolicy (shared/core/pods/*, update/in-place-steps.ts, resize/*); pods are written by patches of
// single fields (apply.ts), never by a PUT of what was read. So each listed pod is trimmed as its list
// streams in (answer-stream.ts):
//   - an annotation value longer than KEPT_VALUE_BYTES, other than NeoSet's own (neoset.neo.io/…: the
//     in-place state, hook and restart bookkeeping the core reads), is replaced by a stand-in naming
//     its length. Its key stays. The one decision that reads such a value — an in-place update's
//     metadata patch, which sets what the new template's annotations change — then sees it differ and
//     writes the template's value again: the same result, one annotation's bytes more in that patch.
//   - each container keeps only CONTAINER_KEYS: env, command, args, probes, mounts are the template's,
//     which decide() reads from the revision, not from the pod.
import { LABEL_NEOSET_NAME } from '../api/names.ts';
import type { LongStrings } from './long-strings.ts';

/** Annotation values up to this length are kept as they are. */
export const KEPT_VALUE_BYTES = 1024;

/** NeoSet's own annotations (`neoset.neo.io/…`): the core reads them, whatever their length. */
const OWN_PREFIX = LABEL_NEOSET_NAME.slice(0, LABEL_NEOSET_NAME.indexOf('/') + 1);

/** What decide() and the applier read of a pod's container (the rest is the template's). */
export const CONTAINER_KEYS: ReadonlySet<string> = new Set(['name', 'image', 'resources', 'resizePolicy', 'restartPolicy']);

const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const;

/** The stand-in for a value cut: never equal to a template's value, so a patch that needs it writes it. */
export const cutValue = (length: number) => `(neoset: ${length} bytes not kept)`;

/**
 * Cut from a listed pod's bytes before it is parsed (long-strings.ts): any string value past 16 KiB
 * but NeoSet's own annotations' — env values, args, annotations; nothing decide() reads is that long
 * (a status message is at most a few KiB: the kubelet cuts a termination message at 4 KiB).
 */
export const POD_LONG_STRINGS: LongStrings = { over: 16 * 1024, keepKeyPrefix: OWN_PREFIX, standIn: (length) => JSON.stringify(cutValue(length)) };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Trims a listed pod in place (see above); returns about how many bytes of its JSON were cut. */
export function trimPod(pod: unknown): number {
  if (!isObject(pod)) return 0;
  let cut = 0;
  const annotations = isObject(pod.metadata) ? pod.metadata.annotations : undefined;
  if (isObject(annotations)) {
    for (const [key, value] of Object.entries(annotations)) {
      if (typeof value === 'string' && value.length > KEPT_VALUE_BYTES && !key.startsWith(OWN_PREFIX)) {
        const stand = cutValue(value.length);
        annotations[key] = stand;
        cut += value.length - stand.length;
      }
    }
  }
  const spec = pod.spec;
  if (!isObject(spec)) return cut;
  for (const list of CONTAINER_LISTS) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    for (const container of containers) {
      if (!isObject(container)) continue;
      for (const key of Object.keys(container)) {
        if (CONTAINER_KEYS.has(key)) continue;
        cut += jsonLength(container[key]) + key.length + 4;
        delete container[key];
      }
    }
  }
  return cut;
}

/** About the length of `value`'s JSON, without making it: strings' lengths and a few bytes per node. */
function jsonLength(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + jsonLength(v) + 1, 2);
  if (isObject(value)) {
    let n = 2;
    for (const k in value) n += k.length + 4 + jsonLength(value[k]);
    return n;
  }
  return 6;
}
