// How many bytes of API answers one instance holds (SPEC §2.5: "reads bounded in bytes per
// instance, an object too large to decide on refused with a Warning Event — never an OOM"). A run
// charges what its reads keep — a whole answer's bytes as they arrive, a list's items as kept after
// their trim (pod-trim.ts) — to two budgets: its own (NEOSET_SNAPSHOT_MAX_BYTES: a snapshot past it is
// one no decision will be made on, so the run ends with TooLargeToDecide, answered, not retried) and
// the instance's (NEOSET_READ_BUDGET_BYTES, shared by every run in flight: past it a read is refused
// with ReadsBusy, a transient failure the Broker's redelivery or the next tick retries once other runs
// have let go). A charge is refused before the bytes are buffered: the answer's socket is closed, so a
// refused read costs at most the chunk that crossed the line.
//
// Why refuse rather than wait for room: runs that each hold part of their snapshot and wait for the
// rest could wait on each other for good; a refusal lets go at once. The instance's budget is sized so
// that a sweep's SWEEP_PARALLELISM runs of ordinary NeoSets never meet it (README "Memory").

/** A read refused for its size: not the API server's failure (client.ts passes it through unwrapped). */
export class ReadRefused extends Error {
  /** The bytes the read would have held, and the limit it met. */
  readonly bytes: number;
  readonly limit: number;
  /** The environment variable that raises the limit. */
  readonly variable: string;
  constructor(message: string, bytes: number, limit: number, variable: string) {
    super(message);
    this.bytes = bytes;
    this.limit = limit;
    this.variable = variable;
  }
}

/** One NeoSet's snapshot is larger than a run may hold: deciding on it would need more memory than allowed. */
export class TooLargeToDecide extends ReadRefused {
  constructor(bytes: number, limit: number) {
    super(`its snapshot (the NeoSet, its pods as kept, its revisions and claims) passed ${mib(bytes)} at the limit of ${mib(limit)} (${SNAPSHOT_VARIABLE})`, bytes, limit, SNAPSHOT_VARIABLE);
    this.name = 'TooLargeToDecide';
  }
}

/** The instance holds as much as it may: the read is refused for now (transient). */
export class ReadsBusy extends ReadRefused {
  constructor(bytes: number, limit: number) {
    super(`the instance's reads in flight would hold ${mib(bytes)}, past ${mib(limit)} (${INSTANCE_VARIABLE}); retry`, bytes, limit, INSTANCE_VARIABLE);
    this.name = 'ReadsBusy';
  }
}

/** Something an answer's bytes are charged to as they are read (client.ts RequestOptions.budget); a refund is negative. */
export interface ByteBudget {
  /** Throws a ReadRefused when `bytes` more would pass a limit; nothing is charged then. */
  charge(bytes: number): void;
}

/** The bytes every run of this instance holds together. Bookkeeping whose loss loses nothing (STYLE §6). */
export class InstanceBudget {
  held = 0;
  readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }
  take(bytes: number): void {
    if (this.held + bytes > this.limit) throw new ReadsBusy(this.held + bytes, this.limit);
    this.held += bytes;
  }
  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}

/** A read still arriving when its run was over (a parallel read of the run failed first): not read on. */
export class RunOver extends ReadRefused {
  constructor(bytes: number) {
    super('the run that made this read is over: the rest of its answer is not read', bytes, 0, INSTANCE_VARIABLE);
    this.name = 'RunOver';
  }
}

/**
 * One run's budget: charged to the instance's too; `release()` gives all of it back when the run is
 * done, and refuses (RunOver) whatever its reads would charge after that: a run whose parallel reads
 * fail on the first refusal ends while the others still arrive, and what they charged then would be
 * held by the instance for good — found so: every read refused ReadsBusy at 48.0 MiB, no run holding it.
 */
export function runBudget(instance: InstanceBudget, limit: number): ByteBudget & { held(): number; release(): void } {
  let held = 0;
  let over = false;
  return {
    charge(bytes) {
      if (over) {
        if (bytes > 0) throw new RunOver(bytes);
        return;
      }
      if (bytes <= 0) {
        const refund = Math.min(held, -bytes);
        held -= refund;
        instance.give(refund);
        return;
      }
      if (held + bytes > limit) throw new TooLargeToDecide(held + bytes, limit);
      instance.take(bytes);
      held += bytes;
    },
    held: () => held,
    release() {
      over = true;
      instance.give(held);
      held = 0;
    },
  };
}

const MiB = 1024 * 1024;
const mib = (bytes: number) => (bytes >= MiB ? `${(bytes / MiB).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`);

export const SNAPSHOT_VARIABLE = 'NEOSET_SNAPSHOT_MAX_BYTES';
export const INSTANCE_VARIABLE = 'NEOSET_READ_BUDGET_BYTES';

/**
 * A snapshot held at most (JSON bytes as kept). A pod as kept is 2–5 KB (README "Memory"): 16 MiB is
 * about 4,000 pods, or a NeoSet at etcd's 1.5 MiB with ten revisions of it and their pods.
 */
export const SNAPSHOT_MAX_BYTES = 16 * MiB;
/**
 * All runs of an instance together: one snapshot at the limit, or 32 sweep runs (SWEEP_PARALLELISM) of
 * 512 KiB each. Parsed, a pod's JSON takes about 1.4 times its bytes of heap (a MiB string about its
 * length). 48 MiB, the default until 2026-12-08, held 60 of memory-bounded.test.ts's 1 MiB NeoSets at
 * once and put reconcile's VmHWM at 296–309 MiB, past the manifests' 256 Mi; at 16 MiB it was 257 MiB,
 * and 247 MiB with the image's glibc settings (Dockerfile; README "Memory").
 */
export const READ_BUDGET_BYTES = 16 * MiB;

/** A byte count from the environment (a positive integer), else `fallback`. */
export function bytesFromEnv(variable: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env[variable]);
  return Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

/** The instance's budget: one per process, read from the environment at start. */
export const instanceReads = new InstanceBudget(bytesFromEnv(INSTANCE_VARIABLE, READ_BUDGET_BYTES));
export const snapshotMaxBytes = bytesFromEnv(SNAPSHOT_VARIABLE, SNAPSHOT_MAX_BYTES);
