// The layout rule of README "Layout": test/ holds tests and their fixtures only. What users run —
// the functions, the shared code, the plugin, the scripts and the local stack (`npm run dev`,
// `cluster:up`) — imports nothing from test/, so deleting test/ leaves every product working.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = resolve(import.meta.dirname, '../..');
const PRODUCT_DIRS = ['dev', 'functions', 'shared', 'bin', 'scripts'];
const TEST_DIR = join(REPO_ROOT, 'test');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mjs|js|sh)$|^[^.]+$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Every module or file a source names relative to itself: `import … from '…'`, `export … from '…'`,
 * `import('…')`, `new URL('…', import.meta.url)`, and in shell scripts any path with `test/` in it.
 */
function referencedPaths(file: string, text: string): string[] {
  const specifiers = [
    ...text.matchAll(/\b(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\s+['"]([^'"]+)['"]/g),
    ...text.matchAll(/new URL\(\s*['"]([^'"]+)['"]\s*,\s*import\.meta\.url/g),
  ].map((m) => m[1]);
  const relativeOnes = specifiers.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s));
  const shellOnes = [...text.matchAll(/(?:^|[\s'"=])((?:\.\.?\/)*test\/[\w./-]+)/gm)].map((m) => resolve(REPO_ROOT, m[1]));
  return file.endsWith('.ts') ? relativeOnes : [...relativeOnes, ...shellOnes];
}

describe('layout: test/ holds tests and their fixtures only', () => {
  it('finds what a source imports (the scan itself works)', () => {
    const file = join(REPO_ROOT, 'shared/api/x.ts');
    const text = `import { a } from '../../test/fixtures/a.ts';\nexport * from './b.ts';\nconst m = await import('../../test/c.ts');\nnew URL('../../test/d.ts', import.meta.url);`;
    expect(referencedPaths(file, text).map((p) => relative(REPO_ROOT, p))).toEqual(['test/fixtures/a.ts', 'shared/api/b.ts', 'test/c.ts', 'test/d.ts']);
  });

  it(`no file under ${PRODUCT_DIRS.join('/, ')}/ imports anything under test/`, () => {
    const offenders: string[] = [];
    for (const dir of PRODUCT_DIRS) {
      for (const file of sources(join(REPO_ROOT, dir))) {
        for (const target of referencedPaths(file, readFileSync(file, 'utf8'))) {
          if (target === TEST_DIR || target.startsWith(`${TEST_DIR}/`)) offenders.push(`${relative(REPO_ROOT, file)} → ${relative(REPO_ROOT, target)}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});
