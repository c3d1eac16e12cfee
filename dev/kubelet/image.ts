// Images as kubelet reports them with containerd: `containerStatuses[].image` is the normalized
// reference, `imageID` a digest. No registry is contacted, so the digest is made up — but stably: the
// same reference always gets the same imageID, a different one a different imageID (SPEC §4.4 step 3
// compares imageIDs, never tags).

import { createHash, randomBytes } from 'node:crypto';

/**
 * The reference normalized as containerd reports it (the docker/distribution rules):
 * `nginx:v1` → `docker.io/library/nginx:v1`, `ghcr.io/a/b` → `ghcr.io/a/b:latest`,
 * `index.docker.io/x/y:1` → `docker.io/x/y:1`; a digest is kept (`name@sha256:…`, no `:latest` added).
 */
export function normalizeImage(reference: string): string {
  let rest = reference;
  let digest = '';
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at);
    rest = rest.slice(0, at);
  }
  let tag = '';
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon);
    rest = rest.slice(0, colon);
  }
  let domain = 'docker.io';
  let path = rest;
  const slash = rest.indexOf('/');
  if (slash >= 0) {
    const first = rest.slice(0, slash);
    // A first component is a registry host when it looks like one (docker's splitDockerDomain).
    if (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase()) {
      domain = first === 'index.docker.io' ? 'docker.io' : first;
      path = rest.slice(slash + 1);
    }
  }
  if (domain === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  if (!tag && !digest) tag = ':latest';
  return `${domain}/${path}${tag}${digest}`;
}

/** `<repository>@sha256:<hex>`: the reference's own digest if it has one, else sha256 of the normalized reference. */
export function imageIDOf(reference: string): string {
  const normalized = normalizeImage(reference);
  const at = normalized.indexOf('@');
  if (at >= 0) return normalized;
  const repository = normalized.slice(0, normalized.lastIndexOf(':'));
  return `${repository}@sha256:${createHash('sha256').update(normalized).digest('hex')}`;
}

/** The simulation's failure switch: an image whose tag ends in `-crashloop` crashes on every start. */
export function isCrashLoopImage(reference: string): boolean {
  const normalized = normalizeImage(reference).split('@')[0];
  const colon = normalized.lastIndexOf(':');
  return colon > normalized.lastIndexOf('/') && normalized.endsWith('-crashloop');
}

export function newContainerID(): string {
  return `containerd://${randomBytes(32).toString('hex')}`;
}
