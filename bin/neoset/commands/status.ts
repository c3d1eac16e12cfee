import type { Cluster } from '../cluster.ts';
import { formatDuration } from '../../../shared/core/duration.ts';
import { describeApiError, EXIT_OK, EXIT_ROLLOUT_FAILED } from '../errors.ts';
import { readNeoSet, ref } from '../neosets.ts';
import { plainProgress, terminalProgress } from '../progress.ts';
import { rolloutStatus } from '../rollout-status.ts';
import { ApiError } from '../../../shared/k8s/client.ts';
import type { Io } from './io.ts';

const POLL_MS = 1000;

/**
 * Polls the NeoSet once a second rather than watching it: as simple as it gets, and immune to the
 * silently stalled watches of SPEC §8. The API server's status is the only input.
 */
export async function status({ client, namespace }: Cluster, name: string, opts: { watch: boolean; timeoutMs: number }, io: Io): Promise<number> {
  const progress = io.out.isTTY ? terminalProgress(io.out) : plainProgress(io.out);
  const deadline = opts.timeoutMs > 0 ? io.now() + opts.timeoutMs : Infinity;
  let last = 'Waiting for the API server...';
  for (;;) {
    try {
      const neoset = await readNeoSet(client, namespace, name);
      const s = rolloutStatus(neoset, io.now());
      if (s.state === 'failed') {
        io.err.write(`error: ${ref(name)} ${s.message}\n`);
        return EXIT_ROLLOUT_FAILED;
      }
      progress.show(neoset, s);
      if (s.state === 'done' || !opts.watch) return EXIT_OK;
      last = s.message;
    } catch (err) {
      // An API server that is briefly unavailable is waited for, like any other condition.
      if (!(opts.watch && err instanceof ApiError && err.isTransient)) throw err;
      last = describeApiError(err).replace(/^error: /, '');
    }
    if (io.now() >= deadline) {
      io.err.write(`error: timed out after ${formatDuration(opts.timeoutMs)} waiting for ${ref(name)} to roll out: ${last}\n`);
      return EXIT_ROLLOUT_FAILED;
    }
    await io.sleep(Math.min(POLL_MS, deadline - io.now()));
  }
}
