// dev/cluster/processes.ts runProcess: the dev stack's short commands (kubectl apply of the identities
// and the webhooks, kubectl on the real Knative) run without blocking the process and die with it.
// ci35 and the CI after it: `npm run dev` given Ctrl-C just as the functions started was still running
// 5 s later, or exited 1. The terminal's SIGINT had reached the process group a moment before a
// blocking spawnSync started `kubectl apply`, so kubectl never got it and talked on to an API server
// whose etcd was gone, while the process could not run its handler until kubectl ended.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../dev/cluster/processes.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

const alive = (pid: number) => {
  try {
    // A zombie is gone for our purpose: it runs nothing.
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return false;
  }
};

/** A node process that runs `sleep 60` through runProcess, prints the sleep's pid, then does `then`. */
function parentOfSleep(then: string) {
  const script = `
    import { runProcess } from '${ROOT}dev/cluster/processes.ts';
    process.on('SIGINT', () => { console.log('handled SIGINT'); ${then} });
    void runProcess('sleep', ['60']);
    const find = () => {
      const children = require('node:fs').readFileSync('/proc/' + process.pid + '/task/' + process.pid + '/children', 'utf8').trim();
      if (children) console.log('child ' + children.split(' ')[0]); else setTimeout(find, 10);
    };
    find();
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', `import { createRequire } from 'node:module'; const require = createRequire(import.meta.url); ${script}`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const until = async (pattern: RegExp) => {
    for (let i = 0; i < 500 && !pattern.test(output); i++) await new Promise((r) => setTimeout(r, 20));
    return pattern.exec(output);
  };
  return { child, exited, until, output: () => output };
}

describe('runProcess', () => {
  it('collects stdout, stderr, the exit code and the input it was given', async () => {
    const r = await runProcess('sh', ['-c', 'cat; echo err >&2; exit 3'], { input: 'in\n' });
    expect(r).toMatchObject({ status: 3, signal: null, stdout: 'in\n', stderr: 'err\n' });
    // Through setpriv (--pdeathsig) a missing command is setpriv's exit 127; without it, a spawn error.
    const missing = await runProcess('/nonexistent/command', []);
    expect(missing.status === 0).toBe(false);
    expect(`${missing.stderr}${missing.error?.message}`).toContain('/nonexistent/command');
  });

  it('ends a command past timeoutMs (SIGTERM)', async () => {
    const started = Date.now();
    const r = await runProcess('sleep', ['30'], { timeoutMs: 200 });
    expect(r.signal).toBe('SIGTERM');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('lets the process handle a signal while the command runs, and the command dies when the process exits', async () => {
    const parent = parentOfSleep('process.exit(0);');
    const sleep = Number((await parent.until(/child (\d+)/))![1]);
    // setpriv execs into sleep: the child's pid is the sleep's.
    expect(alive(sleep)).toBe(true);
    parent.child.kill('SIGINT');
    expect(await parent.exited).toBe(0);
    expect(parent.output()).toContain('handled SIGINT');
    for (let i = 0; i < 100 && alive(sleep); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(sleep), `sleep ${sleep} outlived its parent`).toBe(false);
  });
});
