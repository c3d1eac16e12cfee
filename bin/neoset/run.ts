// Runs one parsed command against the cluster. Kept apart from cli.ts so that --help and usage
// errors answer without loading @kubernetes/client-node (about 0.4 s of a 0.5 s start).
import { ApiError } from '../../shared/k8s/client.ts';
import type { ClusterFlags, Command } from './args.ts';
import { connect } from './cluster.ts';
import { get } from './commands/get.ts';
import { history } from './commands/history.ts';
import type { Io } from './commands/io.ts';
import { setPause } from './commands/pause.ts';
import { canary } from './commands/canary.ts';
import { promote } from './commands/promote.ts';
import { status } from './commands/status.ts';
import { undo } from './commands/undo.ts';
import { version } from './commands/version.ts';
import { CliError, describeApiError, EXIT_API, EXIT_OK } from './errors.ts';

/** A write command's result: its message on stdout. */
async function said(message: Promise<string>, io: Io): Promise<number> {
  io.out.write(`${await message}\n`);
  return EXIT_OK;
}

async function dispatch(flags: ClusterFlags, c: Command, io: Io): Promise<number> {
  // Before connecting: `version --client`, and a version whose functions all have URLs, need no cluster.
  if (c.name === 'version') return version(() => connect(flags), c, io);
  const cluster = connect(flags);
  switch (c.name) {
    case 'get':
      return get(cluster, c.neoset, io);
    case 'status':
      return status(cluster, c.neoset, c, io);
    case 'history':
      return history(cluster, c.neoset, c.revision, io);
    case 'undo':
      return said(undo(cluster, c.neoset, c.toRevision, { ...c, warn: (w) => io.err.write(`Warning: ${w}\n`) }), io);
    case 'pause':
      return said(setPause(cluster, c.neoset, true), io);
    case 'resume':
      return said(setPause(cluster, c.neoset, false), io);
    case 'promote':
      return said(promote(cluster, c.neoset, c.full), io);
    case 'abort':
    case 'retry':
      return said(canary(cluster, c.neoset, c.name), io);
    case 'dashboard': {
      // Loaded only here: the other commands need none of hono or the page.
      const { dashboard } = await import('./dashboard/command.ts');
      return dashboard(cluster, c, io);
    }
  }
}

export async function run(flags: ClusterFlags, command: Command, io: Io): Promise<number> {
  try {
    return await dispatch(flags, command, io);
  } catch (err) {
    if (err instanceof CliError) throw err;
    if (err instanceof ApiError) {
      io.err.write(`${describeApiError(err)}\n`);
      return EXIT_API;
    }
    // Not an answer of the API server (a TLS or credential problem, or a bug): still an exit code
    // the README documents, never 1, which scripts read as "the rollout failed".
    io.err.write(`error: ${(err as Error).message}\n`);
    return EXIT_API;
  }
}
