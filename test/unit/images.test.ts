import { describe, expect, it } from 'vitest';
import { normalizeImage, runsImage, sameImage } from '../../shared/core/pods/images.ts';

describe('normalizeImage', () => {
  it.each([
    ['nginx', 'docker.io/library/nginx:latest'],
    ['nginx:v1', 'docker.io/library/nginx:v1'],
    ['docker.io/library/nginx:v1', 'docker.io/library/nginx:v1'],
    ['docker.io/nginx:v1', 'docker.io/library/nginx:v1'],
    ['index.docker.io/library/nginx:v1', 'docker.io/library/nginx:v1'],
    ['bitnami/redis:7', 'docker.io/bitnami/redis:7'],
    ['quay.io/org/app', 'quay.io/org/app:latest'],
    ['localhost:5000/app:1', 'localhost:5000/app:1'],
    ['localhost/app', 'localhost/app:latest'],
    ['registry:5000/team/app', 'registry:5000/team/app:latest'],
    ['nginx@sha256:abc', 'docker.io/library/nginx@sha256:abc'],
    ['nginx:v1@sha256:abc', 'docker.io/library/nginx:v1@sha256:abc'],
  ])('%s -> %s', (image, normalized) => {
    expect(normalizeImage(image)).toBe(normalized);
  });

  it('tells the same image apart from a different tag', () => {
    expect(sameImage('nginx:v1', 'docker.io/library/nginx:v1')).toBe(true);
    expect(sameImage('nginx', 'nginx:latest')).toBe(true);
    expect(sameImage('nginx:v1', 'nginx:v2')).toBe(false);
  });
});

describe('runsImage', () => {
  it('matches a digest-pinned target however the runtime reports it', () => {
    const target = 'nginx:v2@sha256:abc';
    expect(runsImage({ image: 'docker.io/library/nginx@sha256:abc', imageID: '' }, target)).toBe(true);
    expect(runsImage({ image: 'docker.io/library/nginx:v2', imageID: 'docker.io/library/nginx@sha256:abc' }, target)).toBe(true);
    expect(runsImage({ image: 'docker.io/library/nginx:v2', imageID: 'docker.io/library/nginx@sha256:def' }, target)).toBe(false);
    expect(runsImage({ image: 'docker.io/library/nginx:v2', imageID: 'x' }, 'nginx:v2')).toBe(true);
  });
});
