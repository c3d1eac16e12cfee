// What the dev stack prints while it runs: one short line per invocation that did something (or
// failed), read from the functions' JSON log files. The full logs stay in the files.
import { closeSync, openSync, readSync } from 'node:fs';

interface NeoSetOutcome {
  neoset: string;
  result: string;
  actions?: string[];
  statusWritten?: boolean;
  error?: string;
}

interface LogLine {
  level?: number;
  time?: string;
  msg?: string;
  type?: string;
  target?: { kind?: string; namespace?: string; name?: string };
  neosets?: NeoSetOutcome[];
  outcome?: string;
  error?: string;
  webhook?: string;
  operation?: string;
  namespace?: string;
  name?: string;
  allowed?: boolean;
  reason?: string;
  warnings?: number;
  ms?: number;
}

const clock = (iso?: string) => (iso ? new Date(iso) : new Date()).toTimeString().slice(0, 8);

function describeEvent(fn: string, l: LogLine, verbose: boolean): string | undefined {
  const outcomes = l.neosets ?? [];
  const busy = outcomes.some((o) => (o.actions?.length ?? 0) > 0 || o.statusWritten || !['ok', 'gone'].includes(o.result));
  if (!busy && l.outcome === 'ok' && !verbose) return undefined;
  const verb = l.type?.split('.').pop() ?? '?';
  const t = l.target;
  const what = t?.kind === 'all' ? 'resync' : `${verb} ${t?.kind ?? '?'} ${t?.namespace ?? ''}/${t?.name ?? ''}`;
  const done = outcomes
    .map((o) => `${o.neoset} ${o.result}${o.actions?.length ? `: ${o.actions.join(', ')}` : ''}${o.statusWritten ? ' +status' : ''}${o.error ? ` (${o.error})` : ''}`)
    .join('; ');
  return `${fn.padEnd(9)} ${what} → ${done || l.outcome || l.error || 'nothing to do'}`;
}

export function formatLogLine(fn: string, raw: string, verbose = false): string | undefined {
  let l: LogLine;
  try {
    l = JSON.parse(raw);
  } catch {
    return raw.trim() ? `${fn.padEnd(9)} ${raw.trim()}` : undefined;
  }
  let text: string | undefined;
  if (l.msg === 'event') text = describeEvent(fn, l, verbose);
  else if (l.msg === 'admission') {
    const verdict = l.allowed ? 'allowed' : `denied: ${l.reason ?? l.error ?? ''}`;
    text = `${fn.padEnd(9)} ${l.webhook} ${l.operation ?? '?'} ${l.namespace ?? ''}/${l.name ?? ''} → ${verdict}${l.warnings ? ` (${l.warnings} warning(s))` : ''}`;
  } else if ((l.level ?? 30) >= 40 || verbose) text = `${fn.padEnd(9)} ${l.msg ?? ''}${l.error ? `: ${l.error}` : ''}`;
  return text === undefined ? undefined : `${clock(l.time)} ${text}`;
}

/** Calls `onLine` with every line appended to `path` from now on, until the returned stop(). */
export function followFile(path: string, onLine: (line: string) => void, intervalMs = 200): () => void {
  let offset = 0;
  let rest = '';
  const buffer = Buffer.alloc(64 * 1024);
  const poll = () => {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return; // not created yet
    }
    try {
      for (let n; (n = readSync(fd, buffer, 0, buffer.length, offset)) > 0; offset += n) {
        const lines = (rest + buffer.subarray(0, n).toString('utf8')).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) onLine(line);
      }
    } finally {
      closeSync(fd);
    }
  };
  const timer = setInterval(poll, intervalMs);
  return () => {
    clearInterval(timer);
    poll();
  };
}
