// Exit codes of `kubectl neoset` (documented in README.md) and the error that carries one to cli.ts.
import type { ApiError } from '../../shared/k8s/client.ts';

export const EXIT_OK = 0;
/** `rollout status`: the rollout failed (phase Failed) or --timeout passed before it finished. */
export const EXIT_ROLLOUT_FAILED = 1;
/** A bad command line: unknown command or flag, a missing or malformed argument. */
export const EXIT_USAGE = 2;
/** The NeoSet or revision does not exist, the API server refused or could not be reached. */
export const EXIT_API = 3;

/** An error the edge turns into a message on stderr and an exit code, like hono's HTTPException. */
export class CliError extends Error {
  readonly exitCode: number;
  /** For a usage error: the command whose --help to point at ('rollout status'). */
  readonly topic?: string;
  constructor(exitCode: number, message: string, topic?: string) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.topic = topic;
  }
}

/** The NeoSet or revision does not exist (the dashboard answers it with 404). */
export class NotFoundError extends CliError {
  constructor(message: string) {
    super(EXIT_API, message);
    this.name = 'NotFoundError';
  }
}

/** A conditional write lost to someone else's change (the dashboard answers it with 409). */
export class ConflictError extends CliError {
  constructor(message: string) {
    super(EXIT_API, message);
    this.name = 'ConflictError';
  }
}

export const usageError = (message: string, topic?: string) => new CliError(EXIT_USAGE, message, topic);
export const notFound = (message: string) => new NotFoundError(message);

/** kubectl's wording for an answer of the API server; "cannot reach" when there was none. */
export function describeApiError(err: ApiError): string {
  return err.status === 0 ? `error: cannot reach the API server: ${err.serverMessage}` : `Error from server (${err.reason}): ${err.serverMessage}`;
}
