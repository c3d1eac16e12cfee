// The last step of a process-mode container's start (container.ts), run inside the container's
// namespaces with the kubelet's tool environment: `node exec-program.mjs PROGRAM ARGS…` reads the
// container's environment as JSON from fd 3 and replaces itself with PROGRAM (execve: same pid, same
// process group, the container's log as stdout and stderr). So the pod's environment reaches its
// program only — never ip, unshare, sh or mount before it, which run as root with TOOL_ENV
// (host-tools.ts) — and PROGRAM, when a bare name, is looked up in the pod's PATH, as a runtime does.
// Plain JavaScript: Node strips a .ts file's types with a loader that took 0.2-0.4 s more per start
// on this machine, and this runs once per container start.

import { accessSync, closeSync, constants, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** execvp's default search path when the environment has no PATH (glibc's). */
const DEFAULT_PATH = '/bin:/usr/bin';

const fail = (code, message) => {
  process.stderr.write(`exec-program: ${message}\n`);
  process.exit(code);
};

const executable = (path) => {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

const [program, ...args] = process.argv.slice(2);
if (!program) fail(127, 'no program');
let env;
try {
  env = JSON.parse(readFileSync(3, 'utf8'));
  closeSync(3); // not the program's
} catch (err) {
  fail(126, `no environment on fd 3: ${err.message}`);
}
if (typeof env !== 'object' || env === null || Object.values(env).some((v) => typeof v !== 'string')) fail(126, 'the environment is not an object of strings');

// execvp's search: a name without a slash is looked for in each PATH directory (an empty one is the
// working directory), the first executable file wins.
const file = program.includes('/')
  ? program
  : (env.PATH ?? DEFAULT_PATH)
      .split(':')
      .map((dir) => join(dir || '.', program))
      .find(executable);
if (!file) fail(127, `exec: ${JSON.stringify(program)}: executable file not found in $PATH`);

// Node ignores SIGPIPE and SIGXFSZ, and execve keeps a signal ignored: a listener makes them caught,
// which execve resets to the default the program expects.
process.on('SIGPIPE', () => {});
process.on('SIGXFSZ', () => {});
try {
  process.execve(file, [program, ...args], env);
} catch (err) {
  fail(err.code === 'ENOENT' ? 127 : 126, `exec ${JSON.stringify(file)}: ${err.message}`);
}
