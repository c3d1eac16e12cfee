// Child processes of a test control plane: each logs to its own file and never outlives us.
//
// Two guards against orphans. (1) On Linux every child is started through util-linux `setpriv
// --pdeathsig KILL`, so the kernel kills it when our process dies for any reason, SIGKILL included
// (the death signal survives the exec into etcd/kube-*). (2) A process 'exit' hook SIGKILLs whatever
// is still running, for platforms without setpriv and for a plain process.exit().
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

export interface ManagedProcess {
  name: string;
  pid: number;
  logPath: string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once, as a crash would end it; resolves when the process is gone. */
  kill(): Promise<void>;
  /** The last lines of its log, for error messages. */
  tail(lines?: number): string;
}

// Process-wide by nature: the exit hook must reach every child of every control plane in this process.
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** setpriv's path when it has --pdeathsig (a path: a child's PATH may be one without it, services.ts), else null. */
let setpriv: string | null | undefined;
function pdeathsigProgram(): string | null {
  if (setpriv === undefined) {
    const path = process.platform === 'linux' ? spawnSync('sh', ['-c', 'command -v setpriv'], { encoding: 'utf8' }).stdout?.trim() : '';
    setpriv = path && spawnSync(path, ['--help']).stdout?.toString().includes('--pdeathsig') ? path : null;
  }
  return setpriv;
}

/** `command args` as spawned so that the kernel kills it when this process dies (setpriv --pdeathsig), where it can. */
function tiedToUs(command: string, args: string[]): [string, string[]] {
  const program = pdeathsigProgram();
  return program ? [program, ['--pdeathsig', 'KILL', '--', command, ...args]] : [command, args];
}

export function tailFile(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** `env`: variables over this process's (kube-proxy's PATH, services.ts). */
export function startProcess(name: string, command: string, args: string[], logPath: string, env?: NodeJS.ProcessEnv): ManagedProcess {
  installExitHook();
  const log = openSync(logPath, 'a');
  const [file, argv] = tiedToUs(command, args);
  const child = spawn(file, argv, { stdio: ['ignore', log, log], env: env ? { ...process.env, ...env } : undefined });
  closeSync(log);
  let done = false;
  const exited = new Promise<number | string>((resolve) => {
    child.on('error', (error) => {
      done = true;
      resolve(error.message);
    });
    child.on('exit', (code, signal) => {
      done = true;
      running.delete(child);
      resolve(code ?? signal ?? 'unknown');
    });
  });
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  running.add(child);
  return {
    name,
    pid: child.pid,
    logPath,
    exited,
    hasExited: () => done,
    async stop(graceMs = 5000) {
      if (done) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (done) return;
      child.kill('SIGKILL');
      await exited;
    },
    tail: (lines) => tailFile(logPath, lines),
  };
}

export interface RunOptions {
  input?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /**
   * Let it finish even if this process exits meanwhile: for local cleanups (an `ip link del`, an nft
   * table's removal) that a stop's deadline must not cut in half. Default: it dies with this process.
   */
  outliveUs?: boolean;
}

export interface RunResult {
  /** The exit code, or null when a signal ended it (`signal`) or it could not start (`error`). */
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

/**
 * Runs a short command to its end, as `spawnSync` would, without blocking this process: a signal that
 * arrives meanwhile (Ctrl-C) is handled at once, and the command dies with this process as the
 * long-running children do. A blocking `spawnSync` started just after a terminal's SIGINT reached the
 * process group is a child the signal missed: `kubectl apply` against an API server whose etcd is gone
 * then held the whole stop for as long as the API server took to give up (dev-stop.test).
 */
export function runProcess(command: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  installExitHook();
  const tied = !opts.outliveUs;
  const [file, argv] = tied ? tiedToUs(command, args) : [command, args];
  // `timeout` SIGTERMs the child when it runs longer (its result then says signal SIGTERM).
  const child = spawn(file, argv, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env, timeout: opts.timeoutMs });
  if (tied) running.add(child);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
  // A child that ends before reading all of its input makes the write fail with EPIPE: its exit says why.
  child.stdin!.on('error', () => {});
  child.stdin!.end(opts.input ?? '');
  return new Promise((resolve) => {
    const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString('utf8');
    child.on('error', (error) => {
      running.delete(child);
      resolve({ status: null, signal: null, stdout: text(out), stderr: text(err), error });
    });
    child.on('close', (status, signal) => {
      running.delete(child);
      resolve({ status, signal, stdout: text(out), stderr: text(err) });
    });
  });
}
