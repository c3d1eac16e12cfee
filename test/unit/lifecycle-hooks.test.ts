// The process-mode kubelet's lifecycle hooks (dev/kubelet/process/lifecycle-hooks.ts): httpGet, exec
// and sleep handlers as kubelet runs them, bounded against a hostile pod spec (an endless body, an
// answer that never comes, redirects off the pod, endless output), and the stop's order: preStop
// within the grace period, then SIGTERM, SIGKILL when the grace period ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Container } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headersOf, runHook, stopContainer, type HookResult, type HookTarget } from '../../dev/kubelet/process/lifecycle-hooks.ts';

const container: V1Container = { name: 'app', ports: [{ name: 'admin', containerPort: 0 }] };
let server: Server;
let elsewhere: Server;
let port = 0;
let elsewherePort = 0;
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
let elsewhereHits = 0;
/** Sockets of the endless answers, to see them closed. */
const endless: { closed: boolean }[] = [];
let sleeper: ChildProcess;

const target = (over: Partial<HookTarget> = {}): HookTarget => ({ podIP: '127.0.0.1', container, pid: sleeper.pid!, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, ...over });
const never = () => new AbortController().signal;
const listen = (s: Server, host: string) => new Promise<number>((resolve) => s.listen(0, host, () => resolve((s.address() as AddressInfo).port)));

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push({ path: url.pathname, headers: req.headers });
    if (url.pathname === '/error') return res.writeHead(500).end('no');
    if (url.pathname === '/endless') {
      const socket = { closed: false };
      endless.push(socket);
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const write = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', write);
      res.on('close', () => (socket.closed = true));
      return write();
    }
    if (url.pathname === '/hang') return;
    if (url.pathname === '/same') return res.writeHead(302, { Location: '/landed' }).end();
    if (url.pathname === '/off') return res.writeHead(307, { Location: `http://127.0.0.2:${elsewherePort}/stolen` }).end();
    if (url.pathname === '/loop') return res.writeHead(302, { Location: '/loop' }).end();
    res.writeHead(200).end('ok');
  });
  elsewhere = createServer((_req, res) => {
    elsewhereHits++;
    res.end('elsewhere');
  });
  port = await listen(server, '0.0.0.0');
  elsewherePort = await listen(elsewhere, '127.0.0.2');
  container.ports![0].containerPort = port;
  // The container's main process an exec hook enters (here: in this host's own namespaces).
  sleeper = spawn('sleep', ['600'], { stdio: 'ignore' });
});

afterAll(() => {
  sleeper?.kill('SIGKILL');
  server?.closeAllConnections();
  server?.close();
  elsewhere?.close();
});

describe('httpGet hook', () => {
  it("asks the pod's IP at a named port, the path with its slash, the spec's headers and kubelet's User-Agent", async () => {
    const result = await runHook(
      { httpGet: { port: 'admin', path: 'wait-for-drain', httpHeaders: [{ name: 'X-Who', value: 'a' }, { name: 'x-who', value: 'b' }] } },
      target(),
      never(),
    );
    expect(result).toEqual({ ok: true, message: 'HTTP 200' });
    const last = seen.at(-1)!;
    expect(last.path).toBe('/wait-for-drain');
    expect(last.headers).toMatchObject({ 'user-agent': 'kube-lifecycle/1.37', accept: '*/*', 'x-who': 'a, b' });
  });

  it('succeeds on any answer, as kubelet (only a request that gets none fails)', async () => {
    expect(await runHook({ httpGet: { port, path: '/error' } }, target(), never())).toEqual({ ok: true, message: 'HTTP 500' });
    const refused = await runHook({ httpGet: { port, host: '127.0.0.1', path: '/' } }, target(), never());
    expect(refused.ok).toBe(true);
    const closed = await runHook({ httpGet: { port: 1, path: '/' } }, target(), never());
    expect(closed.ok).toBe(false);
    expect(closed.message).toContain('ECONNREFUSED');
  });

  it('reads at most 10 KiB of an endless answer and drops the connection', async () => {
    const started = Date.now();
    const result = await runHook({ httpGet: { port, path: '/endless' } }, target(), never());
    expect(result.ok).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
    await expect.poll(() => endless.at(-1)?.closed).toBe(true);
  });

  it('is cut short by its signal when no answer comes', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const started = Date.now();
    const result = await runHook({ httpGet: { port, path: '/hang' } }, target(), ac.signal);
    expect(result.ok).toBe(false);
    expect(result.message).toContain('aborted');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('follows a redirect on the same host, never one to another host, and at most 10', async () => {
    expect((await runHook({ httpGet: { port, path: '/same' } }, target(), never())).ok).toBe(true);
    expect(seen.at(-1)!.path).toBe('/landed');
    const off = await runHook({ httpGet: { port, path: '/off' } }, target(), never());
    expect(off).toEqual({ ok: true, message: 'HTTP 307, redirect to another host not followed' });
    expect(elsewhereHits).toBe(0);
    const loops = seen.length;
    const loop = await runHook({ httpGet: { port, path: '/loop' } }, target(), never());
    expect(loop).toEqual({ ok: false, message: 'stopped after 10 redirects' });
    expect(seen.length - loops).toBe(10);
  });

  it('fails, without throwing, on a port that is not there, a header HTTP cannot carry, an unknown scheme', async () => {
    expect(await runHook({ httpGet: { port: 'metrics' } }, target(), never())).toEqual({ ok: false, message: 'port "metrics" not found' });
    expect(await runHook({ httpGet: { port: 70000 } }, target(), never())).toEqual({ ok: false, message: 'invalid port number: 70000' });
    const header = await runHook({ httpGet: { port, httpHeaders: [{ name: 'X-Bad', value: 'a\r\nHost: evil' }] } }, target(), never());
    expect(header.ok).toBe(false);
    expect((await runHook({ httpGet: { port, scheme: 'FTP' } }, target(), never())).ok).toBe(false);
  });

  it('sets headers as kubelet: a given User-Agent or Accept kept, an empty Accept dropped', () => {
    expect(headersOf({ port: 1, httpHeaders: [{ name: 'User-Agent', value: 'me' }, { name: 'Accept', value: '' }] })).toEqual({ 'user-agent': 'me' });
    expect(headersOf({ port: 1, httpHeaders: [{ name: 'Host', value: 'a' }, { name: 'host', value: 'b' }] })).toMatchObject({ host: 'a' });
  });
});

describe('exec hook', () => {
  it("runs in the container's namespaces with its environment; a non-zero exit fails with its output", async () => {
    const env = { ...target().env, GREETING: 'hello' };
    expect(await runHook({ exec: { command: ['sh', '-c', 'exit 0'] } }, target({ env }), never())).toEqual({ ok: true, message: '' });
    const result = await runHook({ exec: { command: ['sh', '-c', 'echo "$GREETING"; exit 3'] } }, target({ env }), never());
    expect(result.ok).toBe(false);
    expect(result.message).toContain('exited with 3');
    expect(result.message).toContain('hello');
  });

  it('keeps 4 KiB of endless output and is killed, with what it started, by its signal', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const started = Date.now();
    const result = await runHook({ exec: { command: ['sh', '-c', 'yes & sleep 600'] } }, target(), ac.signal);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.ok).toBe(false);
    expect(result.message).toContain('aborted');
    expect(result.message.length).toBeLessThan(4 * 1024 + 400);
  });

  it('fails on an empty command', async () => {
    expect(await runHook({ exec: { command: [] } }, target(), never())).toEqual({ ok: false, message: 'exec: no command' });
  });
});

describe('sleep hook', () => {
  it('sleeps its seconds, or until its signal', async () => {
    const started = Date.now();
    expect(await runHook({ sleep: { seconds: 1 } }, target(), never())).toEqual({ ok: true, message: '' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    expect(await runHook({ sleep: { seconds: 60 } }, target(), ac.signal)).toEqual({ ok: false, message: 'container terminated before sleep hook finished' });
    expect((await runHook({ sleep: { seconds: -1 } }, target(), never())).ok).toBe(false);
  });
});

/** A container as stopContainer sees it: its signals with their times; it exits on SIGTERM when `obeys`, always on SIGKILL. */
function fakeContainer(obeys = true) {
  const signals: { sig: string; at: number }[] = [];
  const logs: string[] = [];
  let exit!: () => void;
  const exited = new Promise<void>((resolve) => (exit = resolve));
  let gone = false;
  const t0 = Date.now();
  return {
    signals,
    logs,
    exit: () => ((gone = true), exit()),
    steps: {
      exited,
      log: (msg: string) => logs.push(msg),
      signal: (sig: 'SIGTERM' | 'SIGKILL') => {
        if (gone) return;
        signals.push({ sig, at: Date.now() - t0 });
        if (sig === 'SIGKILL' || obeys) {
          gone = true;
          exit();
        }
      },
    },
  };
}

const hookFor = (ms: number, result: HookResult = { ok: true, message: '' }) => {
  const calls: { signal: AbortSignal }[] = [];
  const run = (signal: AbortSignal) => {
    calls.push({ signal });
    return new Promise<HookResult>((resolve) => {
      const t = setTimeout(() => resolve(result), ms);
      signal.addEventListener('abort', () => (clearTimeout(t), resolve({ ok: false, message: 'aborted' })));
    });
  };
  return { run, calls };
};

describe('stopContainer', () => {
  it('sends SIGTERM only once the preStop hook has returned', async () => {
    const c = fakeContainer();
    const hook = hookFor(400);
    await stopContainer(5000, { ...c.steps, preStop: hook.run }).done;
    expect(c.signals.map((s) => s.sig)).toEqual(['SIGTERM']);
    expect(c.signals[0].at).toBeGreaterThanOrEqual(390);
    expect(c.logs).toEqual([]);
  });

  it('kills at the end of the grace period a container whose hook has not returned, and ends the hook', async () => {
    const c = fakeContainer();
    const hook = hookFor(60_000);
    await stopContainer(500, { ...c.steps, preStop: hook.run }).done;
    expect(c.signals.map((s) => s.sig)).toEqual(['SIGKILL']);
    expect(c.signals[0].at).toBeGreaterThanOrEqual(490);
    expect(c.signals[0].at).toBeLessThan(3000);
    expect(hook.calls[0].signal.aborted).toBe(true);
    expect(c.logs[0]).toMatch(/^PreStop hook not completed in grace period/);
  });

  it('logs a failed hook and goes on: SIGTERM, then SIGKILL at the grace period for a container that ignores it', async () => {
    const c = fakeContainer(false);
    const hook = hookFor(0, { ok: false, message: 'Get "http://10.0.0.1:8022/wait-for-drain": connect ECONNREFUSED' });
    await stopContainer(400, { ...c.steps, preStop: hook.run }).done;
    expect(c.logs).toEqual(['FailedPreStopHook: Get "http://10.0.0.1:8022/wait-for-drain": connect ECONNREFUSED']);
    expect(c.signals.map((s) => s.sig)).toEqual(['SIGTERM', 'SIGKILL']);
    expect(c.signals[0].at).toBeLessThan(300);
    expect(c.signals[1].at).toBeGreaterThanOrEqual(390);
  });

  it('runs no hook without a grace period, and a later stop only hurries the first', async () => {
    const c = fakeContainer(false);
    const hook = hookFor(60_000);
    await stopContainer(0, { ...c.steps, preStop: hook.run }).done;
    expect(hook.calls).toHaveLength(0);
    expect(c.signals.map((s) => s.sig)).toEqual(['SIGTERM', 'SIGKILL']);

    const d = fakeContainer();
    const slow = hookFor(60_000);
    const stopping = stopContainer(30_000, { ...d.steps, preStop: slow.run });
    setTimeout(() => stopping.hurry(60_000), 50); // further: ignored
    setTimeout(() => stopping.hurry(0), 200); // the deletion's end: killed now
    await stopping.done;
    expect(d.signals.map((s) => s.sig)).toEqual(['SIGKILL']);
    expect(d.signals[0].at).toBeLessThan(2000);
    expect(slow.calls[0].signal.aborted).toBe(true);
  });

  it('stops waiting for the hook when the container exits by itself', async () => {
    const c = fakeContainer();
    const hook = hookFor(60_000);
    setTimeout(c.exit, 100);
    await stopContainer(30_000, { ...c.steps, preStop: hook.run }).done;
    expect(c.signals).toEqual([]);
    expect(hook.calls[0].signal.aborted).toBe(true);
  });
});
