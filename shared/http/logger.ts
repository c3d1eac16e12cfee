// One JSON log line per request (SPEC §2.2), the same shape in every function.
import pino, { type Logger } from 'pino';

/**
 * Lines are gathered and written to stdout in chunks of up to LOG_CHUNK_BYTES, at least every
 * LOG_FLUSH_MS: pino's default, a write(2) per line, was a sixth of the CPU of an event the functions
 * skip (bench/events.ts). pino writes what is gathered when the process exits, a fatal exit included
 * (its exit hook); a process killed outright loses at most the last LOG_FLUSH_MS of lines.
 */
export const LOG_CHUNK_BYTES = 8 * 1024;
export const LOG_FLUSH_MS = 200;

// One destination per process, shared by its loggers (module-level, STYLE §6: a sink, like the
// metrics registry). Made on the first logger, so a module that only imports this one opens nothing.
// The flush is a timer set by the first line after the last flush, not an interval: an idle process
// is not woken (a wake-up here costs more than a line), and sonic-boom's flush of nothing still writes.
let destination: pino.DestinationStream | undefined;
function stdout(): pino.DestinationStream {
  if (destination) return destination;
  const chunks = pino.destination({ dest: 1, sync: false, minLength: LOG_CHUNK_BYTES });
  let flushing: NodeJS.Timeout | undefined;
  const flushSoon = () => {
    if (flushing) return;
    flushing = setTimeout(() => {
      flushing = undefined;
      chunks.flush();
    }, LOG_FLUSH_MS).unref();
  };
  return (destination = {
    write(line: string) {
      chunks.write(line);
      flushSoon();
    },
  });
}

export function createLogger(name: string): Logger {
  return pino({ base: { fn: name }, level: process.env.LOG_LEVEL ?? 'info', timestamp: pino.stdTimeFunctions.isoTime }, stdout());
}
