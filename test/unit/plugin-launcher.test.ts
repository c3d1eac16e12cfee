// bin/kubectl-neoset, the sh launcher: found through a symlink (as npm links package.json "bin"), it
// still runs the project's Node 24; without it, it says how to install it.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const LAUNCHER = path.resolve(import.meta.dirname, '../../bin/kubectl-neoset');
const tmp = mkdtempSync(path.join(tmpdir(), 'neoset-launcher-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function run(file: string, args: string[]) {
  try {
    const { stdout, stderr } = await promisify(execFile)(file, args, { env: { PATH: '/usr/bin:/bin' } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('bin/kubectl-neoset', () => {
  it('runs through a chain of relative and absolute symlinks, with no node on PATH', async () => {
    mkdirSync(path.join(tmp, 'global/bin'), { recursive: true });
    symlinkSync(LAUNCHER, path.join(tmp, 'global/lib-link'));
    symlinkSync('../lib-link', path.join(tmp, 'global/bin/kubectl-neoset'));
    const r = await run(path.join(tmp, 'global/bin/kubectl-neoset'), ['rollout', 'promote', '--help']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('Usage:\n  kubectl neoset rollout promote NAME [options]');
  });

  it('without the project Node 24 installed, says to run npm ci (exit 127)', async () => {
    mkdirSync(path.join(tmp, 'fresh/bin'), { recursive: true });
    copyFileSync(LAUNCHER, path.join(tmp, 'fresh/bin/kubectl-neoset'));
    const r = await run(path.join(tmp, 'fresh/bin/kubectl-neoset'), ['get']);
    expect(r.code).toBe(127);
    expect(r.stderr).toBe(`error: kubectl-neoset needs Node.js 24, which the project installs: run \`npm ci\` in ${path.join(tmp, 'fresh')}\n`);
  });
});
