// Failures a test injects: answers the server gives instead of evaluating a request (failNext), and
// a controller process killed after its n-th write (crashAfterWrites).
import type { StatusFailure } from './errors.ts';
import type { Verb } from './server.ts';

export interface FaultMatch {
  verb?: Verb;
  /** Tested against the request path (without the query). */
  path?: RegExp;
}

interface Rule {
  match: FaultMatch;
  error: StatusFailure;
  times: number;
}

export class Faults {
  #rules: Rule[] = [];
  /** Writes still allowed before the crash; null: no crash planned. */
  #writesLeft: number | null = null;

  failNext(match: FaultMatch, error: StatusFailure, times = 1): void {
    this.#rules.push({ match, error, times });
  }

  /** The injected answer for this request, if a rule takes it (each rule for its `times` requests). */
  take(verb: Verb, path: string): StatusFailure | undefined {
    const rule = this.#rules.find((r) => (!r.match.verb || r.match.verb === verb) && (!r.match.path || r.match.path.test(path)));
    if (!rule) return undefined;
    if (--rule.times <= 0) this.#rules.splice(this.#rules.indexOf(rule), 1);
    return rule.error;
  }

  crashAfterWrites(n: number | null): void {
    this.#writesLeft = n;
  }

  get crashed(): boolean {
    return this.#writesLeft !== null && this.#writesLeft <= 0;
  }

  /** A non-GET request succeeded. */
  wrote(): void {
    if (this.#writesLeft !== null) this.#writesLeft--;
  }
}
