import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pidAlive } from '../../dev/kubelet/process/state-root.ts';

describe('pidAlive', () => {
  it('a zombie (exited, not reaped by its parent) is not alive; its parent, running, is', async () => {
    // sh starts a short sleep in the background, prints its pid and becomes a long sleep, which never
    // reaps it (the short one ends after the exec: sh itself would have reaped it before).
    const parent = spawn('sh', ['-c', 'sleep 0.3 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const zombie = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(d.toString()))));
      // Until the short sleep has exited.
      for (let i = 0; i < 150 && !/\) Z/.test(readFileSync(`/proc/${zombie}/stat`, 'utf8')); i++) await new Promise((r) => setTimeout(r, 20));
      expect(pidAlive(zombie)).toBe(false);
      expect(pidAlive(parent.pid!)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('a pid no process has is not alive', () => {
    expect(pidAlive(2 ** 22 + 1)).toBe(false);
  });
});
