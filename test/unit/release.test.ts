// `npm run release -- X.Y.Z` (scripts/release.ts) on a copy of the repo in a git repository of its
// own: what it refuses (changing nothing), and each file a release changes — with the real
// `npm run build`, whose bundles must carry the version.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareVersions, release, ReleaseRefused, withReleasedChangelog } from '../../scripts/release.ts';

const REPO_ROOT = new URL('../..', import.meta.url).pathname;
const COPIED = ['package.json', 'package-lock.json', 'CHANGELOG.md', 'Dockerfile', 'tsconfig.json', 'knative', 'functions', 'shared', 'scripts'];

let root: string;
const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' });
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const current = () => (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'neoset-release-'));
  for (const path of COPIED) cpSync(join(REPO_ROOT, path), join(root, path), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
  writeFileSync(join(root, '.gitignore'), 'node_modules\ndist/\n');
  git('init', '-q');
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'copy');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('npm run release -- X.Y.Z', () => {
  it('refuses a version that is not semver, or not newer than the current one, changing nothing', () => {
    for (const bad of ['1.0', 'v1.0.0', '1.0.0+build', '01.0.0', '']) expect(() => release(root, bad), bad).toThrow(/is not a semver version/);
    expect(() => release(root, '0.2.9')).toThrow(`0.2.9 is not newer than the current version ${current()}`);
    expect(() => release(root, '0.0.9')).toThrow(ReleaseRefused);
    expect(git('status', '--porcelain')).toBe('');
  });

  it('remakes the current release from its clean tree: nothing changes, the bundles carry its version', () => {
    const r = release(root, current());
    expect(r.changed).toEqual([]);
    expect(r.next).toEqual([`git tag -a v${current()} -m "NeoSet ${current()}"`, `docker build -t ghcr.io/neoset/neoset:${current()} .`]);
    expect(read('dist/admission.mjs')).toContain(JSON.stringify(current()));
  }, 60_000);

  it('refuses a tree with uncommitted changes, changing nothing', () => {
    writeFileSync(join(root, 'knative/namespace.yaml'), `${read('knative/namespace.yaml')}# an edit\n`);
    try {
      expect(() => release(root, '9.0.0')).toThrow(/uncommitted changes.*\n M knative\/namespace\.yaml/);
      expect(git('status', '--porcelain')).toBe(' M knative/namespace.yaml\n');
    } finally {
      git('checkout', '--', 'knative/namespace.yaml');
    }
  });

  it('refuses a CHANGELOG without an Unreleased section, or with an empty one', () => {
    expect(() => withReleasedChangelog('# Changelog\n\n## [0.3.0] - 2026-12-01\n', '0.4.0', '2026-12-02')).toThrow('no "## [Unreleased]" section');
    expect(() => withReleasedChangelog('# Changelog\n\n## [Unreleased]\n\n## [0.3.0] - 2026-12-01\n\n- A change.\n', '0.4.0', '2026-12-02')).toThrow('"## [Unreleased]" section lists no change');
  });

  it('orders versions as semver does', () => {
    const ordered = ['0.3.0-alpha', '0.3.0-alpha.1', '0.3.0-alpha.beta', '0.3.0-beta.2', '0.3.0-beta.11', '0.3.0-rc.1', '0.3.0', '0.3.1', '0.10.0', '1.0.0'];
    for (let i = 1; i < ordered.length; i++) expect(compareVersions(ordered[i], ordered[i - 1]), `${ordered[i]} > ${ordered[i - 1]}`).toBe(1);
    expect(compareVersions('0.3.0', '0.3.0')).toBe(0);
  });

  it('sets the version in package.json, package-lock, every image tag and newTag, releases the changelog section and builds bundles that carry it', () => {
    const changelog = read('CHANGELOG.md').replace('## [Unreleased]\n', '## [Unreleased]\n\n### Fixed\n- Something.\n');
    writeFileSync(join(root, 'CHANGELOG.md'), changelog);
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-am', 'an unreleased entry');

    const r = release(root, '0.4.0', { date: '2026-12-24' });

    expect(r.previous).toBe(current());
    expect(r.changed.sort()).toEqual(
      [
        'CHANGELOG.md',
        'Dockerfile',
        'knative/admission.yaml',
        'knative/eventing-only/functions.yaml',
        'knative/eventing-only/kustomization.yaml',
        'knative/func/readiness/func.yaml',
        'knative/func/reconcile/func.yaml',
        'knative/kustomization.yaml',
        'knative/readiness.yaml',
        'knative/reconcile.yaml',
        'package-lock.json',
        'package.json',
      ].sort(),
    );
    expect(JSON.parse(read('package.json')).version).toBe('0.4.0');
    const lock = JSON.parse(read('package-lock.json'));
    expect([lock.version, lock.packages[''].version]).toEqual(['0.4.0', '0.4.0']);
    // Nothing else in the lock moved: only the two root version lines differ.
    expect(git('diff', '--numstat', 'package-lock.json')).toBe('2\t2\tpackage-lock.json\n');
    expect(read('knative/kustomization.yaml')).toMatch(/^ {4}newTag: 0\.4\.0$/m);
    expect(read('knative/eventing-only/kustomization.yaml')).toMatch(/^ {4}newTag: 0\.4\.0$/m);
    for (const file of ['knative/admission.yaml', 'knative/eventing-only/functions.yaml', 'knative/reconcile.yaml', 'knative/readiness.yaml', 'knative/func/reconcile/func.yaml', 'knative/func/readiness/func.yaml']) {
      expect(read(file), file).toContain('image: ghcr.io/neoset/neoset:0.4.0');
      expect(read(file), file).not.toMatch(/ghcr\.io\/neoset\/neoset:(?!0\.4\.0)/);
    }
    expect(read('Dockerfile')).toContain('docker build -t ghcr.io/neoset/neoset:0.4.0 .');
    expect(read('CHANGELOG.md')).toContain('## [Unreleased]\n\n## [0.4.0] - 2026-12-24\n\n### Fixed\n- Something.\n');
    expect(read('CHANGELOG.md')).toContain(`## [${current()}] - `);
    for (const fn of ['reconcile', 'readiness', 'admission']) expect(read(`dist/${fn}.mjs`), fn).toContain('"0.4.0"');
    expect(r.next[0]).toBe(`git commit -m "Release 0.4.0" -- ${r.changed.join(' ')}`);
    expect(r.next[1]).toBe('git tag -a v0.4.0 -m "NeoSet 0.4.0"');
    // It commits and tags nothing.
    expect(git('tag')).toBe('');
    expect(git('log', '--format=%s')).toBe('an unreleased entry\ncopy\n');
    expect(existsSync(join(root, 'dist/main.mjs'))).toBe(true);
  }, 60_000);
});
