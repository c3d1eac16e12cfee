// One JSON log line per request (SPEC §2.2), the same shape in every function.
import pino, { type Logger } from 'pino';

export function createLogger(name: string): Logger {
  return pino({ base: { fn: name }, level: process.env.LOG_LEVEL ?? 'info', timestamp: pino.stdTimeFunctions.isoTime });
}
