// The previous release's functions as processes from their own entry points (functions/<name>/server.ts
// of its tree, its own node_modules), run with this checkout's Node 24 — as Knative runs the old
// revision of a function beside the new one for a while (issue 22 §2 "two versions deciding together").
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startAdmissionProcess } from '../cluster/admission-process.ts';

export type FunctionName = 'reconcile' | 'readiness' | 'admission';

export interface PreviousFunction {
  name: FunctionName;
  /** http(s)://127.0.0.1:<port> */
  url: string;
  child: ChildProcess;
  /** Its log lines (JSON, pino's). */
  log: string[];
  /** SIGTERM; resolves with its exit code. */
  stop(): Promise<number | null>;
}

/** Starts it on a free port of 127.0.0.1 and resolves once it logs "listening". */
export async function startPreviousFunction(dir: string, name: FunctionName, env: Record<string, string>): Promise<PreviousFunction> {
  const log: string[] = [];
  const { child, port } = await startAdmissionProcess(env, log, join(dir, 'functions', name, 'server.ts'));
  const exited = new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
  return { name, url: `${env.TLS_CERT_FILE ? 'https' : 'http'}://127.0.0.1:${port}`, child, log, stop };
}

const entries = (fn: PreviousFunction) =>
  fn.log.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });

/** The AdmissionReviews an admission process answered (its `admission` log lines). */
export const reviewsLogged = (fn: PreviousFunction) => entries(fn).filter((l) => l.msg === 'admission').length;

/** The writes a reconcile or readiness process logged (its `event` lines: actions and status writes, as dev/log-view.ts reads them). */
export function writesLogged(fn: PreviousFunction): number {
  let writes = 0;
  for (const l of entries(fn)) {
    if (l.msg !== 'event' || !Array.isArray(l.neosets)) continue;
    for (const o of l.neosets as { actions?: unknown[]; statusWritten?: boolean }[]) writes += (o.actions?.length ?? 0) + (o.statusWritten ? 1 : 0);
  }
  return writes;
}
