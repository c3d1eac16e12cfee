// The failures the memory API answers with, worded as kube-apiserver words them
// (k8s.io/apimachinery/pkg/api/errors), so a test can assert on the same reason and message.
import { ApiError } from '../../shared/k8s/client.ts';

/** What the server said: the parts of a metav1.Status that ApiError carries. */
export interface StatusFailure {
  status: number;
  reason: string;
  message: string;
}

/** The registry's optimistic-lock message (k8s.io/apiserver registry/generic/registry/store.go). */
export const OPTIMISTIC_LOCK = 'the object has been modified; please apply your changes to the latest version and try again';

/** Thrown inside the server; the client turns it into an ApiError with the request's verb and path. */
export class StatusError extends Error {
  readonly failure: StatusFailure;
  constructor(status: number, reason: string, message: string) {
    super(message);
    this.name = 'StatusError';
    this.failure = { status, reason, message };
  }
}

/**
 * The process running the controller was killed (crashAfterWrites): not an answer from the server,
 * so no ApiError — applyPlan lets it through, as it would a dead process.
 */
export class CrashError extends Error {
  constructor(verb: string, path: string) {
    super(`crashed before ${verb} ${path}`);
    this.name = 'CrashError';
  }
}

export const toApiError = (verb: string, path: string, f: StatusFailure) => new ApiError(verb, path, f.status, f.reason, f.message);

export const notFound = (resource: string, name: string) => new StatusError(404, 'NotFound', `${resource} "${name}" not found`);
export const alreadyExists = (resource: string, name: string) => new StatusError(409, 'AlreadyExists', `${resource} "${name}" already exists`);
export const conflict = (resource: string, name: string, why = OPTIMISTIC_LOCK) =>
  new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${resource} "${name}": ${why}`);
export const badRequest = (message: string) => new StatusError(400, 'BadRequest', message);
export const forbidden = (resource: string, name: string, why: string) => new StatusError(403, 'Forbidden', `${resource} "${name}" is forbidden: ${why}`);

/** field.ErrorList rendered as errors.NewInvalid does: `Kind "name" is invalid: path: Type: detail`. */
export function invalid(kind: string, name: string, causes: string[]): StatusError {
  const list = causes.length === 1 ? causes[0] : `[${causes.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${kind} "${name}" is invalid: ${list}`);
}

/** A patch the server could not apply (a failed JSON-patch `test`, a missing path): errors.NewGenericServerResponse(422). */
export const unprocessable = () => new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request');
