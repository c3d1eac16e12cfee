// Tests assert what the cluster reaches by polling the API, never by sleeping a fixed time.

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Said in the timeout error: what was awaited. */
  what?: string;
}

/**
 * Calls `probe` until it returns a value other than undefined/false, and returns that value. A probe
 * that throws counts as "not yet"; on timeout the last error or value is in the message.
 */
export async function waitFor<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, opts: WaitOptions = {}): Promise<T> {
  const { timeoutMs = 15_000, intervalMs = 100, what = 'condition' } = opts;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${detail})`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
