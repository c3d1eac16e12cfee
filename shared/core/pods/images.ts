// Image references as the kubelet reports them: `nginx:v1` runs as `docker.io/library/nginx:v1`.
// §4.4 step 3 compares containerStatuses[].image with the target image, so both are normalized.

const DEFAULT_REGISTRY = 'docker.io';

/** Fully qualified reference: registry, `library/` for official images, `:latest` when neither tag nor digest. */
export function normalizeImage(image: string): string {
  let ref = image.trim();
  const at = ref.indexOf('@');
  const digest = at >= 0 ? ref.slice(at) : '';
  if (at >= 0) ref = ref.slice(0, at);
  const slash = ref.indexOf('/');
  const first = slash >= 0 ? ref.slice(0, slash) : '';
  const hasRegistry = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  let registry = hasRegistry ? first : DEFAULT_REGISTRY;
  let path = hasRegistry ? ref.slice(slash + 1) : ref;
  if (registry === 'index.docker.io' || registry === 'registry-1.docker.io') registry = DEFAULT_REGISTRY;
  if (registry === DEFAULT_REGISTRY && !path.includes('/')) path = `library/${path}`;
  const lastSlash = path.lastIndexOf('/');
  const hasTag = path.lastIndexOf(':') > lastSlash;
  if (!hasTag && !digest) path = `${path}:latest`;
  return `${registry}/${path}${digest}`;
}

export function sameImage(a: string, b: string): boolean {
  return normalizeImage(a) === normalizeImage(b);
}

/**
 * Does a container the kubelet reports (image, imageID) run `target`? The same reference once
 * normalized; or, for a target pinned by digest, that digest — runtimes report `repo:tag@digest`
 * as `repo@digest`, or only in the imageID.
 */
export function runsImage(reported: { image: string; imageID: string }, target: string): boolean {
  if (sameImage(reported.image, target)) return true;
  const at = target.indexOf('@');
  if (at < 0) return false;
  const digest = target.slice(at + 1);
  return normalizeImage(reported.image).endsWith(`@${digest}`) || reported.imageID.endsWith(digest);
}
