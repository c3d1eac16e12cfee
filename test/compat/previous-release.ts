// The previous release (issue 22 §2: the state before v0.3's work), as a directory a test or the
// capture script can run: the commit's tree from the git object, with its own `npm ci`, cached per
// commit under the NeoSet cache (NEOSET_CACHE, else ~/.cache/neoset) so a clean clone prepares it once.
// `git archive` rather than `git worktree add`: the same tree, and nothing written into the
// repository's .git, which other checkouts and engineers share.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** v0.2: the commit the compatibility fixtures were captured from (test/fixtures/compat/v0.2/README.md). */
export const PREVIOUS_RELEASE = '028831fcdca6b8753237fd03421144537b05efca';

const REPO_ROOT = join(import.meta.dirname, '..', '..');

/** The clone has no such commit (a shallow clone, e.g. `git clone --depth 1`): nothing to prepare from. */
export class PreviousReleaseUnavailable extends Error {}

export function previousReleaseDir(commit = PREVIOUS_RELEASE): string {
  const cache = process.env.NEOSET_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'neoset');
  return join(cache, `previous-release-${commit.slice(0, 12)}`);
}

/** The directory of the commit's tree with node_modules installed; prepared (about 20 s) when missing. Run it with this checkout's Node. */
export async function preparePreviousRelease(log: (line: string) => void = () => {}, commit = PREVIOUS_RELEASE): Promise<string> {
  const dir = previousReleaseDir(commit);
  const complete = join(dir, '.neoset-prepared');
  if (existsSync(complete)) return dir;
  try {
    execFileSync('git', ['-C', REPO_ROOT, 'cat-file', '-e', `${commit}^{commit}`], { stdio: 'ignore' });
  } catch {
    throw new PreviousReleaseUnavailable(`commit ${commit.slice(0, 7)} (the previous release) is not in this clone's history (a shallow clone?): fetch it with 'git fetch --unshallow'`);
  }
  // Prepared beside its final place and renamed into it: a run killed half way leaves no directory
  // that looks complete, and two runs preparing at once both end with a whole one.
  const staging = `${dir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  log(`preparing the previous release ${commit.slice(0, 7)} in ${dir} (git archive, npm ci)`);
  execFileSync('bash', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'archive', REPO_ROOT, commit, staging], { stdio: ['ignore', 'ignore', 'inherit'] });
  // No install scripts: the one that matters is the `node` package's, which fetches a second Node
  // binary from the registry (minutes on a busy machine); the previous release runs on this
  // checkout's Node 24, which its package.json pins too.
  execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: staging, stdio: ['ignore', 'ignore', 'inherit'] });
  writeFileSync(join(staging, '.neoset-prepared'), `${commit}\n`);
  try {
    renameSync(staging, dir);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(complete)) throw error; // another run got there first otherwise
  }
  return dir;
}
