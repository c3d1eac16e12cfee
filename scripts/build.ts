// `npm run build`: each function bundled into one ESM file for a fast cold start (no module
// resolution, no node_modules to read, no type stripping at run time), plus dist/main.mjs, the image's
// single entrypoint, which picks the function from NEOSET_FUNCTION (or its first argument).
//   dist/reconcile.mjs  dist/readiness.mjs  dist/admission.mjs  (+ .map, + .LEGAL.txt)  dist/main.mjs
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as esbuild from 'esbuild';

export const FUNCTIONS = ['reconcile', 'readiness', 'admission'] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

export const REPO_ROOT = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
export const DIST = join(REPO_ROOT, 'dist');

// client-node and some of its dependencies are CommonJS: an ESM bundle needs a `require` of its own.
const BANNER = "import { createRequire as __neosetCreateRequire } from 'node:module'; const require = __neosetCreateRequire(import.meta.url);";

const MAIN = `// The image's entrypoint: one image, three functions (README "Deploy to Knative").
const name = process.argv[2] ?? process.env.NEOSET_FUNCTION;
const functions = ${JSON.stringify(FUNCTIONS)};
if (!functions.includes(name)) {
  process.stderr.write(\`set NEOSET_FUNCTION (or the first argument) to one of \${functions.join(', ')}; got \${JSON.stringify(name)}\\n\`);
  process.exit(2);
}
await import(\`./\${name}.mjs\`);
`;

export interface BuildResult {
  /** Bundle path by function. */
  bundles: Record<FunctionName, string>;
  bytes: Record<FunctionName, number>;
}

export async function build(outdir = DIST): Promise<BuildResult> {
  await rm(outdir, { recursive: true, force: true });
  await mkdir(outdir, { recursive: true });
  // The version, written into the bundles (shared/version.ts): the image has no package.json to read.
  const { version } = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  const result = await esbuild.build({
    absWorkingDir: REPO_ROOT,
    entryPoints: Object.fromEntries(FUNCTIONS.map((fn) => [fn, `functions/${fn}/server.ts`])),
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // Less to parse on every cold start; the source maps (NODE_OPTIONS=--enable-source-maps) give
    // readable stack traces back.
    minify: true,
    sourcemap: 'linked',
    legalComments: 'linked',
    banner: { js: BANNER },
    define: { __NEOSET_VERSION__: JSON.stringify(version) },
    metafile: true,
    logLevel: 'warning',
  });
  await writeFile(join(outdir, 'main.mjs'), MAIN);
  const bundles = {} as Record<FunctionName, string>;
  const bytes = {} as Record<FunctionName, number>;
  for (const fn of FUNCTIONS) {
    bundles[fn] = join(outdir, `${fn}.mjs`);
    const out = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith(`${fn}.mjs`));
    bytes[fn] = out?.[1].bytes ?? 0;
  }
  return { bundles, bytes };
}

if (import.meta.main) {
  const { bundles, bytes } = await build();
  for (const fn of FUNCTIONS) process.stdout.write(`${bundles[fn].replace(`${REPO_ROOT}/`, '')}  ${(bytes[fn] / 1024).toFixed(0)} KiB\n`);
  process.stdout.write(`dist/main.mjs  (NEOSET_FUNCTION=${FUNCTIONS.join('|')} node dist/main.mjs)\n`);
}
