// The layering rule of shared/core/layers.ts: inside shared/core a file imports (at run time) only
// from its own layer or the layers below it — the core reads from the top down — and no import cycle
// is left anywhere in shared/. Scanned the way layout.test.ts scans test/.
//
// Type-only imports (`import type …` / `export type … from`) are exempt from both rules: they are
// erased before the code runs, so they give no evaluation order (no cycle can bite) and no behaviour.
// An import whose braces hold only `type` names is NOT type-only here: under verbatimModuleSyntax it
// stays as `import {} from '…'`, a run-time import of the module.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORE_LAYERS, layerOf } from '../../shared/core/layers.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');
const SHARED = join(REPO_ROOT, 'shared');
const CORE = join(SHARED, 'core');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The modules a source imports at run time, resolved: `import … from`, `export … from`, `import '…'`, `import('…')`. */
function runtimeImports(file: string, text: string): string[] {
  const specifiers = [
    ...[...text.matchAll(/^\s*(import|export)\b([^'"`;]*?)\bfrom\s*['"]([^'"]+)['"]/gm)].filter((m) => !/^\s*type\b/.test(m[2])).map((m) => m[3]),
    ...[...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]),
    ...[...text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1]),
  ];
  return specifiers.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s));
}

const core = (path: string) => relative(CORE, path);

/** `file → import` pairs inside shared/core whose import sits in a higher layer. */
function upwardImports(graph: Map<string, string[]>): string[] {
  const offenders: string[] = [];
  for (const [file, imports] of graph) {
    if (!file.startsWith(`${CORE}/`)) continue;
    for (const target of imports) {
      if (!target.startsWith(`${CORE}/`)) continue;
      const [from, to] = [layerOf(core(file)), layerOf(core(target))];
      if (to > from) offenders.push(`${core(file)} (${CORE_LAYERS[from]?.name}) → ${core(target)} (${CORE_LAYERS[to]?.name})`);
    }
  }
  return offenders;
}

/** Every import cycle, each as the path that closes it (depth-first search over the run-time graph). */
function cycles(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(SHARED, f)).join(' → '));
      else if (!state.has(next) && graph.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

function graphOf(files: Map<string, string>): Map<string, string[]> {
  return new Map([...files].map(([file, text]) => [file, runtimeImports(file, text)]));
}

const shared = new Map(sources(SHARED).map((f) => [f, readFileSync(f, 'utf8')]));

describe('layers: the core reads from the top down, and shared/ has no import cycle', () => {
  it('finds run-time imports and leaves type-only ones out (the scan itself works)', () => {
    const file = join(CORE, 'update/x.ts');
    const text = [
      `import { a } from '../pods/a.ts';`,
      `import type { B } from '../target.ts';`,
      `import { type C } from '../c.ts';`,
      `export { d } from './d.ts';`,
      `export type { E } from '../e.ts';`,
      `import '../f.ts';`,
      `const g = await import('../g.ts');`,
      `import {\n  h,\n  type H,\n} from '../h.ts';`,
    ].join('\n');
    expect(runtimeImports(file, text).map(core)).toEqual(['pods/a.ts', 'c.ts', 'update/d.ts', 'h.ts', 'f.ts', 'g.ts']);
  });

  it('places every file of shared/core in exactly one layer of shared/core/layers.ts', () => {
    const unplaced = [...shared.keys()].filter((f) => f.startsWith(`${CORE}/`) && layerOf(core(f)) === -1).map(core);
    expect(unplaced).toEqual([]);
  });

  it('no file of shared/core imports from a layer above its own', () => {
    expect(upwardImports(graphOf(shared))).toEqual([]);
  });

  it('no import cycle in shared/', () => {
    expect(cycles(graphOf(shared))).toEqual([]);
  });

  it('would see an upward import and a cycle (the checks can fail)', () => {
    const planted = new Map(shared);
    const identity = join(CORE, 'pods/identity.ts');
    planted.set(identity, `${shared.get(identity)}\nimport { startUpdate } from '../hooks/lifecycle.ts';\n`);
    const name = (path: string) => CORE_LAYERS[layerOf(path)].name;
    expect(upwardImports(graphOf(planted))).toEqual([`pods/identity.ts (${name('pods/identity.ts')}) → hooks/lifecycle.ts (${name('hooks/lifecycle.ts')})`]);
    expect(cycles(graphOf(planted)).length).toBeGreaterThan(0);
  });
});
