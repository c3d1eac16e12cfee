// sweepNow (dev/cluster/service-network.ts): what `npm run dev` on the real Knative runs at its stop's
// deadline, synchronously, for whatever the parts' stops did not get to. It must take a node's network
// namespaces (and what runs in them), its bridge and its state — and only this process's — in a
// bounded number of spawns: one pair of `ip` runs per namespace took seconds under CI load, past the
// 5 s a Ctrl-C is given (ci34: the link neoset2 still there at 5000 ms). Real namespaces, a real
// bridge, a real process inside (root, as the Knative stack needs).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sweepNow } from '../../dev/cluster/service-network.ts';
import { STATE_ROOT } from '../../dev/kubelet/process/network.ts';

const ip = (...args: string[]) => spawnSync('ip', args, { encoding: 'utf8' });
const root = process.getuid?.() === 0 && ip('netns', 'list').status === 0;
// Indexes no dev stack or kubelet of this machine takes (they count up from 0).
const OURS = 'neoset977';
const THEIRS = 'neoset978';

/** A node directory owned by `owner`, a bridge, and `count` namespaces named as the kubelet names them. */
function fakeNode(node: string, owner: number, count: number): string[] {
  mkdirSync(join(STATE_ROOT, node), { recursive: true });
  writeFileSync(join(STATE_ROOT, node, 'owner'), `${owner}\n`);
  ip('link', 'add', node, 'type', 'bridge');
  const names = Array.from({ length: count }, (_, i) => `neoset-${node.slice('neoset'.length)}-${(0xa000 + i).toString(16)}`);
  for (const ns of names) ip('netns', 'add', ns);
  return names;
}

const namespaces = () => ip('netns', 'list').stdout.split('\n').map((l) => l.split(' ')[0]!);
const linkExists = (name: string) => ip('link', 'show', name).status === 0;

describe.runIf(root)('sweepNow', () => {
  afterAll(() => {
    for (const ns of namespaces().filter((n) => n.startsWith('neoset-977-') || n.startsWith('neoset-978-'))) ip('netns', 'del', ns);
    for (const node of [OURS, THEIRS]) {
      ip('link', 'del', node);
      spawnSync('rm', ['-rf', join(STATE_ROOT, node)]);
    }
  });

  it("takes this process's namespaces, what runs in them, its bridges and state, and leaves another's", async () => {
    const ours = fakeNode(OURS, process.pid, 20);
    // Another live process's node: pid 1 is always alive and never this one.
    const theirs = fakeNode(THEIRS, 1, 2);
    const inside = spawn('ip', ['netns', 'exec', ours[3]!, 'sleep', '60'], { stdio: 'ignore', detached: true });
    const exited = new Promise((resolve) => inside.on('exit', resolve));
    for (let i = 0; i < 100 && ip('netns', 'pids', ours[3]!).stdout.trim() === ''; i++) await new Promise((r) => setTimeout(r, 20));
    expect(ip('netns', 'pids', ours[3]!).stdout.trim()).not.toBe('');

    const started = performance.now();
    sweepNow();
    const ms = performance.now() - started;
    console.log(`[sweep-now] 20 namespaces, a process and a bridge swept in ${ms.toFixed(0)} ms`);

    await exited;
    expect(namespaces().filter((n) => ours.includes(n))).toEqual([]);
    expect(linkExists(OURS)).toBe(false);
    expect(existsSync(join(STATE_ROOT, OURS))).toBe(false);
    expect(namespaces().filter((n) => theirs.includes(n)).sort()).toEqual(theirs);
    expect(linkExists(THEIRS)).toBe(true);
    expect(existsSync(join(STATE_ROOT, THEIRS))).toBe(true);
  });
});
