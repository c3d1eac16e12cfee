// How a process-mode container's program is started (dev/kubelet/process/container.ts): the
// kubelet's own programs by absolute paths with a fixed environment (host-tools.ts), and the pod's
// environment handed over on fd 3 to exec-program.mjs, which execs the program with it — so a pod's
// PATH never chooses which `ip`, `mount` or `sh` runs as root, and the program gets its env whole.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXEC_PROGRAM, setupScript, startCommand } from '../../dev/kubelet/process/container.ts';
import { hostTool, isExecutable, TOOL_ENV } from '../../dev/kubelet/process/host-tools.ts';
import { node24 } from '../../dev/kubelet/process/image-table.ts';

const dir = mkdtempSync(join(tmpdir(), 'neoset-exec-program-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const script = (name: string, body: string) => {
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
};
// A program that prints its ignored signals and whether fd 3 is still open, then exits 7.
script('report', '/usr/bin/grep SigIgn /proc/$$/status; [ -e /proc/$$/fd/3 ] && echo fd3 open || echo fd3 closed; exit 7');
// A tool of the same name as the kubelet's, where a pod's PATH would find it first.
script('ip', 'exit 0');

/** Runs exec-program.mjs as container.ts does: TOOL_ENV, the pod's env as JSON on fd 3. */
function execProgram(argv: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(node24(), [EXEC_PROGRAM, ...argv], { env: TOOL_ENV, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    (child.stdio[3] as NodeJS.WritableStream).end(JSON.stringify(env));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('starting a process-mode container', () => {
  it("gives the program the pod's environment whole (names a shell would drop too), looked up by the pod's PATH", async () => {
    const env = { PATH: `${dir}:/usr/bin`, 'a.b': 'relaxed name', MULTI: 'line 1\nline "2"\n', EMPTY: '' };
    // `env` is not in dir: found in /usr/bin, the pod's PATH's second directory.
    const { code, stdout, stderr } = await execProgram(['env', '-0'], env);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const got = Object.fromEntries(stdout.split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    expect(got).toEqual(env); // nothing of the kubelet's or the tools' environment comes with it
  });

  it("gives the program default signal dispositions and no fd 3, and its exit status is the container's", async () => {
    // Node ignores SIGPIPE and SIGXFSZ; execve would pass that on.
    expect(await execProgram(['report'], { PATH: dir })).toEqual({ code: 7, stdout: 'SigIgn:\t0000000000000000\nfd3 closed\n', stderr: '' });
  });

  it('fails like a runtime when the program is not found (127) or the environment is missing', async () => {
    expect(await execProgram(['no-such-program'], { PATH: dir })).toEqual({ code: 127, stdout: '', stderr: 'exec-program: exec: "no-such-program": executable file not found in $PATH\n' });
    const child = spawn(node24(), [EXEC_PROGRAM, 'report'], { env: TOOL_ENV, stdio: ['ignore', 'ignore', 'ignore', 'ignore'] });
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(126);
  });

  it("finds the kubelet's tools in the system's directories, never by a PATH put before them", () => {
    const kubeletPath = process.env.PATH;
    process.env.PATH = `${dir}:${kubeletPath}`;
    try {
      for (const tool of ['ip', 'unshare', 'sh', 'mount', 'mkdir', 'dirname', 'hostname', 'nsenter']) {
        const path = hostTool(tool);
        expect(isAbsolute(path), tool).toBe(true);
        expect(isExecutable(path), tool).toBe(true);
        expect(path.startsWith(dir), tool).toBe(false);
      }
    } finally {
      process.env.PATH = kubeletPath;
    }
    expect(TOOL_ENV).toEqual({ PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' });
  });

  it('names every program of the start by its absolute path, and ends in exec-program.mjs', () => {
    const spec = { argv: ['/usr/bin/true', 'x'], workingDir: '/srv/app', mounts: [{ source: '/run/v', target: '/etc/config', readOnly: true }] };
    const { file, args } = startCommand(spec, { netns: 'neoset-1-abc', etcDir: '/run/e', hostname: 'pod' });
    expect(file).toBe(hostTool('ip'));
    expect(args.slice(0, 7)).toEqual(['netns', 'exec', 'neoset-1-abc', hostTool('unshare'), '--uts', '--', hostTool('sh')]);
    expect(args.slice(-4)).toEqual(['sh', 'pod', '/usr/bin/true', 'x']);
    const shell = setupScript(spec, '/run/e');
    expect(shell).toBe(args[8]);
    // No bare name a PATH would choose: each command word is a quoted absolute path or a builtin.
    const commands = shell.split('\n').flatMap((line) => line.split(/;|\bthen\b|\belse\b|\$\(/).map((part) => part.trim().split(' ')[0]));
    const bare = commands.filter((word) => word && !word.startsWith("'/") && !['set', 'shift', 'if', '[', 'fi', ':', 'cd', 'exec', 'then', 'else'].includes(word));
    expect(bare).toEqual([]);
    expect(shell).toContain(`'${hostTool('mount')}' -o remount,bind,ro '/etc/config'`);
    expect(shell.split('\n').at(-1)).toBe(`exec '${node24()}' '${EXEC_PROGRAM}' "$@"`);
  });
});
