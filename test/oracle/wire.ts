// Reading Kubernetes wire data as the SPEC describes it, written here rather than imported from the
// core: an oracle that shared these helpers with the code it checks would share their bugs too.
import type { Pod, PodCondition } from '../../shared/core/objects.ts';

export function condition(pod: Pod, type: string): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

export const isTrue = (pod: Pod, type: string): boolean => condition(pod, type)?.status === 'True';

/**
 * Whole seconds of an RFC 3339 time (metav1.Time has 1 s resolution, so no finer comparison means
 * anything); null when missing or unreadable — the caller decides what "unknown" allows.
 */
export function seconds(time: unknown): number | null {
  if (typeof time !== 'string') return null;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

/** Deep equality of JSON values, object key order ignored (two clients may spell one value differently). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const defined = (o: object) => Object.entries(o).filter(([, v]) => v !== undefined);
  const left = defined(a);
  const right = new Map(defined(b));
  return left.length === right.size && left.every(([k, v]) => right.has(k) && sameJson(v, right.get(k)));
}

/**
 * The image reference the kubelet reports for `image` (§4.4 step 3 [fix]: compare normalized
 * images): Docker Hub's implicit registry and `library/` namespace, and `:latest` when untagged.
 * The smallest version that tells `nginx:v2` and `docker.io/library/nginx:v2` apart from `nginx:v1`.
 */
export function normalizeImage(image: string): string {
  const [name, digest] = image.trim().split('@', 2);
  const parts = name.split('/');
  const hasRegistry = parts.length > 1 && /[.:]|^localhost$/.test(parts[0]);
  let path = hasRegistry ? parts.slice(1) : parts;
  const registry = !hasRegistry || ['index.docker.io', 'registry-1.docker.io'].includes(parts[0]) ? 'docker.io' : parts[0];
  if (registry === 'docker.io' && path.length === 1) path = ['library', ...path];
  const last = path[path.length - 1];
  if (!last.includes(':') && digest === undefined) path = [...path.slice(0, -1), `${last}:latest`];
  return `${registry}/${path.join('/')}${digest === undefined ? '' : `@${digest}`}`;
}
