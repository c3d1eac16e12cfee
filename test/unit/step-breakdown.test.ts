// bench/rollout.ts's step breakdown: a reconcile run's timing as the function logs it
// (shared/k8s/run-timing.ts), matched with the benchmark's watch to segment a step.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logLines, runsFromLog, stepBreakdown } from '../../bench/lib/step-breakdown.ts';
import { cpuMs, descendants } from '../../bench/lib/cpu.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';
import { timedRequests, type RunTiming } from '../../shared/k8s/run-timing.ts';

describe('run timing', () => {
  it('notes each request when it answers, at most 12', async () => {
    const client: KubeClient = { request: async <T>() => ({}) as T };
    const timing: RunTiming = { started: 0, requests: [] };
    const timed = timedRequests(client, timing);
    await timed.request('GET', '/api/v1/namespaces/ns/pods');
    await timed.request('PUT', '/apis/neo.io/v1alpha1/namespaces/ns/neosets/app/status', { body: {} });
    await Promise.all(Array.from({ length: 12 }, (_, i) => timed.request('PATCH', `/api/v1/namespaces/ns/pods/app-${i}/status`, { body: {} })));
    expect(timing.requests.map(([, what]) => what)).toEqual([
      'GET /api/v1/namespaces/ns/pods',
      'PUT /apis/neo.io/v1alpha1/namespaces/ns/neosets/app/status',
      ...Array.from({ length: 10 }, (_, i) => `PATCH /api/v1/namespaces/ns/pods/app-${i}/status`),
    ]);
  });
});

describe('step breakdown', () => {
  it('segments a step from the Ready pod to the next drain, through the run that wrote it; the finish off that path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'step-breakdown-'));
    const log = join(dir, 'reconcile.log');
    const timing = {
      started: 1030,
      read: 1050,
      decided: 1052,
      requests: [
        [1070, 'PATCH /apis/neo.io/v1alpha1/namespaces/ns/neosets/app/status'],
        [1090, 'PATCH /api/v1/namespaces/ns/pods/app-0/status'],
        [1100, 'PATCH /api/v1/namespaces/ns/pods/app-0'],
      ],
    };
    const line = (arrived: number) => JSON.stringify({ msg: 'event', arrived, neosets: [{ neoset: 'ns/app', timing }] });
    // An event that joined the run well before the pod's Ready, and the Ready's own (the watch saw it 2 ms later).
    writeFileSync(log, ['not json', line(900), line(948), JSON.stringify({ msg: 'event', arrived: 5, neosets: [{ neoset: 'ns/other', timing }] })].join('\n'));
    const runs = runsFromLog(logLines(log), 'ns', 'app');
    expect(runs).toHaveLength(1);
    const { p50, total, steps } = stepBreakdown({ runs, namespace: 'ns', written: ['app-1', 'app-0'], readies: [['app-1', 950]], finishes: new Map([['app-1', 1010]]), k: 1 });
    expect(steps).toBe(1);
    expect(total).toBe(140);
    expect(p50).toEqual({ 'ready→event': -2, 'event→run': 82, 'run→read': 20, 'read→decide': 2, 'decide→claim': 18, 'claim→drain': 20, 'ready→finish': 60 });
  });

  it('reads CPU time of a process from /proc', () => {
    expect(cpuMs(process.pid)).toBeGreaterThan(0);
    expect(cpuMs(2 ** 22 + 1)).toBe(0);
  });

  it('finds the processes below this one with their command lines (a grandchild too)', async () => {
    const { spawn } = await import('node:child_process');
    // sh forks sleep (two commands: no exec of the last), so sleep is our grandchild.
    const child = spawn('sh', ['-c', 'sleep 30; true'], { stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const below = descendants();
      expect(below.find((p) => p.pid === child.pid)?.argv).toEqual(['sh', '-c', 'sleep 30; true']);
      const sleep = below.find((p) => p.comm === 'sleep' && p.argv.join(' ') === 'sleep 30');
      expect(sleep).toBeDefined();
      process.kill(sleep!.pid, 'SIGKILL');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
