// `npm test`'s first step after the type-check: obtain the control-plane binaries (envtest's
// variables, else the cached build, else a build from the Go module proxy — several minutes the
// first time on a machine) before vitest starts, so a first build is not raced by any test timeout.
import { resolveBinaries } from './binaries.ts';

const started = Date.now();
const binaries = await resolveBinaries();
console.log(`control-plane binaries ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${Object.values(binaries).join(', ')}`);
