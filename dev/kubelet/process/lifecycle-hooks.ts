// Container lifecycle hooks as kubelet runs them (pkg/kubelet/lifecycle/handlers.go), and the order
// in which kubelet stops a container (kuberuntime_container.go killContainer, executePreStopHook):
// the preStop hook first, waited for at most the grace period, then SIGTERM, then SIGKILL when the
// grace period ends. A hook that fails is logged and the stop goes on; a hook's answer is never a
// reason to keep a container. Knative Serving relies on this: a revision's user container has
// preStop `httpGet :8022/wait-for-drain` on queue-proxy, so it gets SIGTERM only once queue-proxy has
// drained.
//
// The handler comes from a pod spec: each hook is bounded by the AbortSignal its caller ends (the
// grace period, the container's exit), an HTTP answer's body is read up to 10 KiB (kubelet's
// maxRespBodyLength) and dropped, redirects are followed to the same host only (kubelet's lifecycle
// client: httpprobe.RedirectChecker(false)), an exec hook's output is kept up to 4 KiB for the log.
// An exec hook is the pod's own program, run with its environment: nsenter (by its absolute path,
// host-tools.ts) looks the command up in the pod's PATH. It runs only for images that run a pod's
// command anyway: a fixedCommand image's pod with one is refused (environment.ts).

import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { IntOrString, V1Container, V1HTTPGetAction, V1LifecycleHandler } from '@kubernetes/client-node';
import { hostTool } from './host-tools.ts';
import { node24 } from './image-table.ts';
import { requestPath } from './probes.ts';

export interface HookTarget {
  /** The host of an httpGet hook that names none. */
  podIP: string;
  container: V1Container;
  /** The container's main process: an exec hook runs in its network, mount and UTS namespaces. */
  pid: number;
  /** The container's environment: an exec hook's. */
  env: Record<string, string>;
}

export interface HookResult {
  ok: boolean;
  message: string;
}

/** kubelet's maxRespBodyLength: what of a hook's answer is read before the connection is dropped. */
export const MAX_BODY_BYTES = 10 * 1024;
/** What of an exec hook's output the log keeps. */
const MAX_OUTPUT_CHARS = 4 * 1024;
/** Go's http.Client stops after 10 redirects (kubelet's RedirectChecker keeps that limit). */
const MAX_REDIRECTS = 10;
/** The User-Agent kubelet's lifecycle requests carry (probe/http/request.go userAgent("lifecycle")). */
const USER_AGENT = 'kube-lifecycle/1.37';
/**
 * The longest sleep action run: the API server allows up to the pod's terminationGracePeriodSeconds
 * (validateSleepAction); a timer cannot wait longer than 2^31-1 ms (a longer one fires at once).
 */
const MAX_SLEEP_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

class HookError extends Error {}

const failed = (message: string): HookResult => ({ ok: false, message });

/** Runs one hook; never throws: a failure (or an abort) is a result with the reason. */
export async function runHook(handler: V1LifecycleHandler, target: HookTarget, signal: AbortSignal): Promise<HookResult> {
  try {
    if (signal.aborted) return failed('not run: the container is stopping');
    if (handler.exec) return await execHook(handler.exec.command ?? [], target, signal);
    if (handler.httpGet) return await httpGetHook(handler.httpGet, target, signal);
    if (handler.sleep) return await sleepHook(handler.sleep.seconds, signal);
    // tcpSocket is accepted by the API for compatibility only; kubelet runs nothing for it.
    return failed('invalid handler: none of exec, httpGet, sleep');
  } catch (err) {
    return failed(err instanceof Error ? err.message : String(err));
  }
}

/** A port by number, or by the name of one of the container's ports (probe.ResolveContainerPort). */
export function resolvePort(port: IntOrString | undefined, container: V1Container): number {
  const number = typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
  if (number === undefined) throw new HookError(`port ${JSON.stringify(port)} not found`);
  if (!Number.isInteger(number) || number <= 0 || number >= 65536) throw new HookError(`invalid port number: ${number}`);
  return number;
}

/**
 * The request's headers as kubelet sets them: the spec's (a repeated name adds a value; Host the
 * first), User-Agent and Accept unless given, an empty Accept dropped.
 */
export function headersOf(get: V1HTTPGetAction): Record<string, string | string[]> {
  const lists: Record<string, string[]> = {};
  for (const { name, value } of get.httpHeaders ?? []) (lists[name.toLowerCase()] ??= []).push(value);
  lists['user-agent'] ??= [USER_AGENT];
  if (!lists.accept) lists.accept = ['*/*'];
  else if (lists.accept[0] === '') delete lists.accept;
  return Object.fromEntries(Object.entries(lists).map(([name, values]) => [name, values.length === 1 || name === 'host' ? values[0] : values]));
}

async function httpGetHook(get: V1HTTPGetAction, target: HookTarget, signal: AbortSignal): Promise<HookResult> {
  const scheme = (get.scheme ?? 'HTTP').toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') throw new HookError(`unsupported protocol scheme ${JSON.stringify(scheme)}`);
  const port = resolvePort(get.port, target.container);
  const host = get.host || target.podIP;
  let url: URL;
  try {
    url = new URL(`${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${requestPath(get.path)}`);
  } catch {
    throw new HookError(`invalid URL for host ${JSON.stringify(host.slice(0, 100))} and path ${JSON.stringify((get.path ?? '').slice(0, 100))}`);
  }
  const headers = headersOf(get);
  for (let redirects = 0; ; redirects++) {
    const { status, location } = await getOnce(url, headers, signal);
    if (!location || ![301, 302, 303, 307, 308].includes(status)) return { ok: true, message: `HTTP ${status}` };
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new HookError(`redirect to an invalid location ${JSON.stringify(location.slice(0, 100))}`);
    }
    // Another host (the node, another pod, anything the answer names): not followed, the answer stands.
    if (next.hostname !== url.hostname) return { ok: true, message: `HTTP ${status}, redirect to another host not followed` };
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new HookError(`redirect to unsupported protocol scheme ${next.protocol}`);
    if (redirects + 1 >= MAX_REDIRECTS) throw new HookError(`stopped after ${MAX_REDIRECTS} redirects`);
    url = next;
  }
}

/**
 * One GET: resolves with the status once the body has ended or MAX_BODY_BYTES of it were read (then
 * the connection is dropped), as kubelet's discardHTTPRespBody. Only a request that got no answer fails.
 */
function getOnce(url: URL, headers: Record<string, string | string[]>, signal: AbortSignal): Promise<{ status: number; location?: string }> {
  return new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    // Throws at once for header names or values HTTP cannot carry (the spec's httpHeaders).
    const req = request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers,
        agent: false,
        signal,
        rejectUnauthorized: false, // kubelet's lifecycle client does not verify (InsecureSkipVerify)
      },
      (res) => {
        let read = 0;
        const answer = { status: res.statusCode ?? 0, location: res.headers.location };
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= MAX_BODY_BYTES) res.destroy();
        });
        res.on('error', () => {}); // cut short (by us, the abort or the server): the answer stands
        res.on('close', () => resolve(answer));
      },
    );
    req.on('error', (err) => reject(new HookError(`Get ${JSON.stringify(url.href.slice(0, 200))}: ${signal.aborted ? 'aborted' : err.message}`)));
    req.end();
  });
}

function execHook(command: string[], target: HookTarget, signal: AbortSignal): Promise<HookResult> {
  if (command.length === 0) throw new HookError('exec: no command');
  const [program, ...args] = command;
  const shown = JSON.stringify(command).slice(0, 200);
  return new Promise((resolve) => {
    // Its own process group: an abort kills what it started too.
    const child = spawn(hostTool('nsenter'), ['-t', String(target.pid), '-n', '-m', '-u', '--', program === 'node' ? node24() : program, ...args], {
      env: target.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      if (output.length < MAX_OUTPUT_CHARS) output += chunk.toString('utf8').slice(0, MAX_OUTPUT_CHARS - output.length);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const abort = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // exited already
      }
    };
    signal.addEventListener('abort', abort, { once: true });
    const done = (result: HookResult) => {
      signal.removeEventListener('abort', abort);
      // Not waiting for 'close': something it left running may hold its output open.
      child.stdout.destroy();
      child.stderr.destroy();
      resolve(result);
    };
    child.on('error', (err) => done(failed(`exec ${shown}: ${err.message}`)));
    child.on('exit', (code, sig) => {
      if (code === 0) return done({ ok: true, message: '' });
      const why = signal.aborted ? 'aborted' : `exited with ${code ?? sig}`;
      done(failed(`exec ${shown} ${why}: ${JSON.stringify(output.trim()).slice(0, MAX_OUTPUT_CHARS)}`));
    });
  });
}

function sleepHook(seconds: number, signal: AbortSignal): Promise<HookResult> {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_SLEEP_SECONDS) throw new HookError(`sleep: invalid seconds ${seconds}`);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(failed('container terminated before sleep hook finished'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve({ ok: true, message: '' });
    }, seconds * 1000);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export interface StopSteps {
  /** The container's preStop hook, bound to it (runHook); absent when it has none or is not running. */
  preStop?: (signal: AbortSignal) => Promise<HookResult>;
  /** Signals the container's processes; a no-op once they have exited. */
  signal: (sig: 'SIGTERM' | 'SIGKILL') => void;
  /** Resolves when the container's process has exited. */
  exited: Promise<void>;
  log: (msg: string) => void;
}

export interface Stopping {
  /** Resolves once the container's process has exited. */
  done: Promise<void>;
  /**
   * A later stop with `graceMs` from now (a deletion's end, the kubelet's own stop): the deadline
   * moves nearer, never further — at 0 the hook is cut short and the container killed at once.
   */
  hurry(graceMs: number): void;
}

/**
 * kubelet's killContainer: the preStop hook, when there is one and a grace period, for as long as
 * the grace period lasts; SIGTERM once it returns (or the container exited meanwhile); SIGKILL
 * when the grace period ends. kubelet gives a container whose hook used the whole grace period two
 * more seconds after SIGTERM (minimumGracePeriodInSeconds); here the pod's deletion is confirmed at
 * the grace period's end (kubelet.ts), so the container is killed then.
 */
export function stopContainer(graceMs: number, steps: StopSteps): Stopping {
  const hook = new AbortController();
  let deadline = Date.now() + graceMs;
  let killed = false;
  let timer: NodeJS.Timeout | undefined;
  const kill = () => {
    killed = true;
    hook.abort();
    steps.signal('SIGKILL');
  };
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(kill, Math.max(0, deadline - Date.now()));
  };
  arm();
  let finished = false;
  const graceEnded = new Promise<undefined>((resolve) => hook.signal.addEventListener('abort', () => resolve(undefined), { once: true }));
  const done = (async () => {
    if (steps.preStop && graceMs > 0) {
      const started = Date.now();
      const result = await Promise.race([steps.preStop(hook.signal), steps.exited.then(() => undefined), graceEnded]);
      if (killed) steps.log(`PreStop hook not completed in grace period (${Date.now() - started} ms)`);
      else if (result && !result.ok) steps.log(`FailedPreStopHook: ${result.message}`);
    }
    if (!killed) steps.signal('SIGTERM');
    await steps.exited;
  })().finally(() => {
    finished = true;
    clearTimeout(timer);
    hook.abort(); // a hook still running (the container exited first) is not needed any more
  });
  return {
    done,
    hurry(ms) {
      if (finished || Date.now() + ms >= deadline) return;
      deadline = Date.now() + ms;
      arm();
    },
  };
}
