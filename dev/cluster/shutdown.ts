// Stopping the local stack within a few seconds whatever state the API server is in.
//
// A terminal's Ctrl-C sends SIGINT to the whole foreground process group: etcd exits at once, and
// kube-apiserver starts its graceful shutdown, in which a request that needs etcd waits out its 60 s
// request timeout. Anything of ours still talking to it (the simulated kubelet's syncs, the bridge's
// deliveries to functions that are themselves waiting on it) would hold the stop for as long; and
// kube-apiserver itself drains those requests before it exits. So every part gets a bounded stop: an
// in-process part is given `PART_BUDGET_MS`, after which what it still awaits is abandoned (the
// process stopping takes it along), and a child process gets `PROCESS_GRACE_MS` after SIGTERM before
// SIGKILL — the dev control plane's data is thrown away, there is nothing worth a longer drain.

/** How long an in-process part (kubelet, bridge) may take to stop before it is abandoned. */
export const PART_BUDGET_MS = 500;
/** SIGTERM → SIGKILL for the stack's child processes (etcd, kube-*, the functions). */
export const PROCESS_GRACE_MS = 1000;
/** The whole stop, as a backstop: past it whatever is left is killed (the goal is 5 s from Ctrl-C). */
export const STOP_DEADLINE_MS = 4000;

export interface Part {
  name: string;
  stop(): Promise<void> | void;
  /** Budget for this part's stop; default PART_BUDGET_MS. A child process's stop bounds itself. */
  budgetMs?: number;
}

/** Resolves with whether `promise` settled within `ms` (a rejection counts as settled). */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([promise.then(() => true, () => true), late]).finally(() => clearTimeout(timer));
}

/**
 * Stops `parts` one after another in the order given (callers pass last started first), each within
 * its budget; a failure or an overrun is logged and the next part is stopped anyway.
 */
export async function stopInOrder(parts: Part[], log: (line: string) => void): Promise<void> {
  for (const part of parts) await stopWithinBudget(part, log);
}

/**
 * Stops `parts` all at once, each within its budget: for parts that do not need one another while
 * they stop. The Knative dev stack's: the kubelet's in-flight syncs wait on an API server whose etcd
 * a terminal's Ctrl-C has already ended, until the control plane's own stop ends kube-apiserver too.
 */
export async function stopAtOnce(parts: Part[], log: (line: string) => void): Promise<void> {
  await Promise.all(parts.map((part) => stopWithinBudget(part, log)));
}

async function stopWithinBudget(part: Part, log: (line: string) => void): Promise<void> {
  const stopping = (async () => part.stop())();
  stopping.catch((error: Error) => log(`stop ${part.name}: ${error.message}`));
  const budget = part.budgetMs ?? PART_BUDGET_MS;
  if (!(await settlesWithin(stopping, budget))) log(`stop ${part.name}: still busy after ${budget} ms, left behind (it goes with this process)`);
}
