// Polling helpers for tests: wait until the cluster shows something, or fail saying what was awaited.
import { ApiException, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

export interface PollOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls `check` until it returns something other than undefined; that value is the result. */
export async function poll<T>(what: string, check: () => Promise<T | undefined>, opts: PollOptions = {}): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 100 } = opts;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export const isNotFound = (error: unknown) => error instanceof ApiException && error.code === 404;

/** `read()`'s result, or undefined when the object does not exist (404). */
export async function readIfExists<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Waits until `read()` answers 404. */
export async function waitForDeletion(what: string, read: () => Promise<unknown>, opts?: PollOptions): Promise<void> {
  await poll(`${what} to be deleted`, async () => ((await readIfExists(read)) === undefined ? true : undefined), opts);
}

/**
 * Waits for a namespace's `default` ServiceAccount. The serviceaccount controller creates it shortly
 * after the namespace, and until then the ServiceAccount admission plugin rejects every Pod there.
 */
export async function waitForDefaultServiceAccount(kc: KubeConfig, namespace: string, opts?: PollOptions): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await poll(
    `ServiceAccount ${namespace}/default`,
    () => readIfExists(() => core.readNamespacedServiceAccount({ name: 'default', namespace })),
    opts,
  );
}
