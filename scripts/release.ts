// `npm run release -- X.Y.Z`: makes the tree of release X.Y.Z, and nothing else — it does not commit,
// tag, push or publish (README "Releases and versions"). It refuses, changing nothing, a version that
// is not semver or not newer than package.json's (the current one is remade: its manifests and
// bundles, its changelog section left as it is), a tree with uncommitted changes (the release commit
// must hold only the release's edits), and a CHANGELOG whose `## [Unreleased]` section is missing or lists no change. Then:
//   package.json `version` and package-lock.json's root version (the one source: shared/version.ts);
//   the image tag ghcr.io/neoset/neoset:X.Y.Z wherever a manifest names it (knative/*.yaml, knative/eventing-only/*.yaml,
//   knative/func/*/func.yaml, the Dockerfile's build example) and knative/kustomization.yaml `newTag`;
//   CHANGELOG.md: the Unreleased section becomes `## [X.Y.Z] - DATE` under a fresh empty Unreleased;
//   `npm run build`: the bundles, with the version written in (checked in dist/reconcile.mjs).
// The CRD embeds no NeoSet version (its API version, v1alpha1, is not the release's): `npm run gen`
// has nothing to redo.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SEMVER } from '../shared/version.ts';

export const IMAGE = 'ghcr.io/neoset/neoset';

export class ReleaseRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReleaseRefused';
  }
}

export interface ReleaseOptions {
  /** The release date written into the CHANGELOG (YYYY-MM-DD); today (UTC) by default. */
  date?: string;
  /** Builds the bundles in `root`; `npm run build` there by default. */
  build?: (root: string) => void;
}

export interface ReleaseResult {
  previous: string;
  version: string;
  /** The files changed, relative to root. */
  changed: string[];
  /** What to run next, by hand. */
  next: string[];
}

/** -1, 0 or 1 as `a` is older than, the same as or newer than `b` (semver precedence, SemVer §11). */
export function compareVersions(a: string, b: string): number {
  const pa = SEMVER.exec(a);
  const pb = SEMVER.exec(b);
  if (!pa || !pb) throw new Error(`not semver: ${pa ? b : a}`);
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return Math.sign(d);
  }
  // A pre-release is older than its release; two pre-releases compare field by field.
  if (pa[4] === undefined || pb[4] === undefined) return pa[4] === pb[4] ? 0 : pa[4] === undefined ? 1 : -1;
  const fa = pa[4].split('.');
  const fb = pb[4].split('.');
  for (let i = 0; i < Math.max(fa.length, fb.length); i++) {
    if (fa[i] === undefined) return -1;
    if (fb[i] === undefined) return 1;
    const na = /^\d+$/.test(fa[i]);
    const nb = /^\d+$/.test(fb[i]);
    if (na && nb && Number(fa[i]) !== Number(fb[i])) return Math.sign(Number(fa[i]) - Number(fb[i]));
    if (na !== nb) return na ? -1 : 1;
    if (fa[i] !== fb[i]) return fa[i] < fb[i] ? -1 : 1;
  }
  return 0;
}

/** The files that name the image's tag, relative to root. */
function manifestFiles(root: string): string[] {
  const knative = ['knative', 'knative/eventing-only'].flatMap((dir) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.yaml')).map((f) => `${dir}/${f}`));
  const funcs = readdirSync(join(root, 'knative/func')).map((d) => `knative/func/${d}/func.yaml`);
  return [...knative, ...funcs, 'Dockerfile'];
}

const IMAGE_TAG = new RegExp(`(${IMAGE.replaceAll('.', '\\.')}:)[0-9A-Za-z._-]+`, 'g');
const NEW_TAG = /^(\s*newTag:\s*)\S+\s*$/m;

/** `text` with every tag of the image, and a kustomization's newTag, set to `version`. */
export function withImageTag(text: string, version: string): string {
  return text.replace(IMAGE_TAG, `$1${version}`).replace(NEW_TAG, `$1${version}`);
}

const UNRELEASED = /^## \[Unreleased\][^\n]*\n/m;

/** The CHANGELOG with its Unreleased section named `version` (and dated), under a fresh empty one. */
export function withReleasedChangelog(text: string, version: string, date: string): string {
  const heading = UNRELEASED.exec(text);
  if (!heading) throw new ReleaseRefused('CHANGELOG.md has no "## [Unreleased]" section to release');
  const section = text.slice(heading.index + heading[0].length).split(/^## \[/m)[0];
  if (!/^- /m.test(section)) throw new ReleaseRefused('CHANGELOG.md\'s "## [Unreleased]" section lists no change: write what this release changes first');
  return text.replace(UNRELEASED, `## [Unreleased]\n\n## [${version}] - ${date}\n`);
}

function git(root: string, args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8' });
}

export function release(root: string, version: string, opts: ReleaseOptions = {}): ReleaseResult {
  if (!SEMVER.test(version)) throw new ReleaseRefused(`"${version}" is not a semver version (MAJOR.MINOR.PATCH, e.g. 0.4.0)`);
  const pkgPath = join(root, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { version: string };
  const previous = pkg.version;
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  // The current version again remakes its tree (the manifests, the bundles) from a clean checkout of
  // it — once its changelog section exists; anything older is refused.
  const again = version === previous && changelog.includes(`\n## [${version}] - `);
  if (compareVersions(version, previous) <= 0 && !again) throw new ReleaseRefused(`${version} is not newer than the current version ${previous} (package.json)`);
  const dirty = git(root, ['status', '--porcelain']).trimEnd();
  if (dirty) throw new ReleaseRefused(`the tree has uncommitted changes; commit or remove them first:\n${dirty}`);
  const date = opts.date ?? new Date().toISOString().slice(0, 10);
  // Everything is read and checked before anything is written: a refusal changes nothing.
  const edits = new Map<string, string>();
  if (!again) edits.set('CHANGELOG.md', withReleasedChangelog(changelog, version, date));
  edits.set('package.json', `${JSON.stringify({ ...pkg, version }, null, 2)}\n`);
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { version: string; packages: Record<string, { version?: string }> };
  lock.version = version;
  lock.packages[''].version = version;
  edits.set('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
  for (const file of manifestFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    const next = withImageTag(text, version);
    if (next !== text) edits.set(file, next);
  }
  for (const [file, text] of edits) writeFileSync(join(root, file), text);
  (opts.build ?? ((r) => execFileSync('npm', ['run', 'build'], { cwd: r, stdio: 'inherit' })))(root);
  const bundle = readFileSync(join(root, 'dist/reconcile.mjs'), 'utf8');
  if (!bundle.includes(JSON.stringify(version))) throw new Error(`dist/reconcile.mjs does not carry ${version}: scripts/build.ts did not write it in`);
  const changed = git(root, ['status', '--porcelain']).split('\n').filter(Boolean).map((l) => l.slice(3));
  const commit = changed.length ? [`git commit -m "Release ${version}" -- ${changed.join(' ')}`] : [];
  return { previous, version, changed, next: [...commit, `git tag -a v${version} -m "NeoSet ${version}"`, `docker build -t ${IMAGE}:${version} .`] };
}

if (import.meta.main) {
  const version = process.argv[2];
  if (!version || process.argv.length > 3) {
    process.stderr.write('usage: npm run release -- X.Y.Z\n');
    process.exit(2);
  }
  try {
    const root = new URL('..', import.meta.url).pathname;
    const r = release(root, version);
    process.stdout.write(`NeoSet ${r.previous} -> ${r.version}; changed:\n${r.changed.map((f) => `  ${f}\n`).join('') || '  nothing (the tree already was the release\'s; bundles rebuilt in dist/)\n'}Nothing is committed, tagged or pushed. Next:\n${r.next.map((c) => `  ${c}\n`).join('')}`);
  } catch (err) {
    if (!(err instanceof ReleaseRefused)) throw err;
    process.stderr.write(`release refused: ${err.message}\n`);
    process.exit(1);
  }
}
