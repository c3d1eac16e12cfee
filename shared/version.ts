// NeoSet's version, from one source: package.json's `version` (README "Releases and versions").
// The bundles of scripts/build.ts have it written in at build time (esbuild's `define` replaces
// __NEOSET_VERSION__ with the string): the image holds no package.json. Run from source (the dev stack,
// the plugin, the tests), it is read from package.json once at start — a 2 KiB file, read and
// parsed in well under a millisecond, rather than a JSON module import.
import { readFileSync } from 'node:fs';

declare const __NEOSET_VERSION__: string | undefined;

/** The semver of a release: MAJOR.MINOR.PATCH, with an optional pre-release (no build metadata). */
export const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

function fromPackageJson(): string {
  try {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof version === 'string' && SEMVER.test(version) ? version : 'unknown';
  } catch {
    // A copy of the sources without package.json still serves; its version says so.
    return 'unknown';
  }
}

export const NEOSET_VERSION: string = typeof __NEOSET_VERSION__ === 'string' ? __NEOSET_VERSION__ : fromPackageJson();
