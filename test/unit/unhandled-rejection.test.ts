// SPEC §2.3 "no fault may crash a process": a function process (shared/http/main.ts runFunction)
// survives a promise rejected with no handler — it logs a fatal line with the stack, counts it in
// neoset_unhandled_rejections_total and keeps serving — while an uncaught exception still ends it (exit
// 1, after the same fatal line). Real child processes: Node's exit is what is being prevented.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../dev/cluster/ports.ts';
import { waitForHealthy } from '../../dev/cluster/probe.ts';
import { startProcess } from '../../dev/cluster/processes.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
/** Each process's log directory, removed once the file's processes have stopped. */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A function process whose app serves /healthz and the shared /metrics, then runs `after` once listening. */
async function start(after: string) {
  const [port] = await freePorts(1);
  const script = `
    import { Hono } from 'hono';
    import { createLogger } from '${ROOT}shared/http/logger.ts';
    import { runFunction } from '${ROOT}shared/http/main.ts';
    import { registry } from '${ROOT}shared/metrics/registry.ts';
    const app = new Hono();
    app.get('/healthz', (c) => c.text('ok'));
    app.get('/metrics', async (c) => c.text(await registry.metrics()));
    await runFunction('probe', createLogger('probe'), () => app);
    ${after}
  `;
  const dir = mkdtempSync(join(tmpdir(), 'neoset-unhandled-'));
  dirs.push(dir);
  const logPath = join(dir, 'probe.log');
  const env = [`PORT=${port}`, 'HOST=127.0.0.1', 'LOG_LEVEL=info'];
  const process_ = startProcess('probe', 'env', ['-C', ROOT, ...env, process.execPath, '--input-type=module', '-e', script], logPath);
  return { process: process_, url: `http://127.0.0.1:${port}`, log: () => readFileSync(logPath, 'utf8') };
}

const fatalLines = (output: string) =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { message: string; stack: string } })
    .filter((l) => l.level === 60);

describe('a function process', () => {
  it('survives an unhandled rejection: a fatal line with the stack, counted, still serving', async () => {
    const p = await start(`Promise.reject(new Error('nobody handles me'));`);
    try {
      await waitForHealthy(p.process, `${p.url}/healthz`, undefined, 20_000);
      await new Promise((r) => setTimeout(r, 200));
      const metrics = await (await fetch(`${p.url}/metrics`)).text();
      expect(metrics).toMatch(/^neoset_unhandled_rejections_total 1$/m);
      expect(p.process.hasExited()).toBe(false);
      const [fatal] = fatalLines(p.log());
      expect(fatal.msg).toMatch(/unhandled rejection/);
      expect(fatal.err?.message).toBe('nobody handles me');
      expect(fatal.err?.stack).toMatch(/Error: nobody handles me\n\s+at /);
    } finally {
      await p.process.stop();
    }
    expect(await p.process.exited).toBe(0);
  }, 30_000);

  it('ends on an uncaught exception (exit 1) after a fatal line with the stack', async () => {
    const p = await start(`setTimeout(() => { throw new Error('half-run'); }, 300);`);
    const code = await Promise.race([p.process.exited, new Promise((r) => setTimeout(() => r('still running'), 20_000))]);
    await p.process.stop();
    expect(code).toBe(1);
    const [fatal] = fatalLines(p.log());
    expect(fatal.msg).toMatch(/uncaught exception; exiting/);
    expect(fatal.err?.stack).toMatch(/Error: half-run/);
  }, 30_000);

  it('on SIGTERM, finishes the work no request waits for (trackUnfinished: a re-check\'s run) before it exits', async () => {
    const p = await start(`
      const { trackUnfinished } = await import('${ROOT}shared/http/unfinished.ts');
      const log = createLogger('probe');
      // A run started by a timer, as reconcile's re-check starts one: its last step 5 s later.
      trackUnfinished(new Promise((r) => setTimeout(r, 5000)).then(() => log.info('run finished')));
    `);
    await waitForHealthy(p.process, `${p.url}/healthz`, undefined, 20_000);
    const started = Date.now();
    expect(p.log()).not.toContain('"msg":"run finished"');
    process.kill(p.process.pid, 'SIGTERM');
    const code = await Promise.race([p.process.exited, new Promise((r) => setTimeout(() => r('still running'), 20_000))]);
    await p.process.stop();
    expect(code).toBe(0);
    expect(p.log()).toContain('"msg":"run finished"');
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);
});
