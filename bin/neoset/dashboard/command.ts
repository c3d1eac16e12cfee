// `kubectl neoset dashboard`: serves the page until Ctrl-C (SIGINT) or SIGTERM, then exits 0. The URL
// it prints carries the run's token: whoever has it acts with the user's credentials.
import type { Command } from '../args.ts';
import type { Cluster } from '../cluster.ts';
import type { Io } from '../commands/io.ts';
import { EXIT_OK } from '../errors.ts';
import { isLoopback } from './guard.ts';
import { startDashboard } from './start.ts';

type DashboardCommand = Extract<Command, { name: 'dashboard' }>;

export async function dashboard(cluster: Cluster, c: DashboardCommand, io: Io): Promise<number> {
  const namespace = c.allNamespaces ? undefined : cluster.namespace;
  const running = await startDashboard({ cluster, namespace, port: c.port, address: c.address, readOnly: c.readOnly });
  if (!isLoopback(c.address)) io.err.write(exposedWarning(c.address, running.port));
  const shown = namespace === undefined ? 'all namespaces' : `namespace ${namespace}`;
  io.out.write(`NeoSet dashboard (${shown}${c.readOnly ? ', read-only' : ''}) at ${running.url}\nPress Ctrl-C to stop it.\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await running.close();
  return EXIT_OK;
}

/** Said on stderr when listening beyond this machine: what that gives away, and the safer way. */
export function exposedWarning(address: string, port: number): string {
  return (
    `warning: --address ${address} is not a loopback address: anyone who can reach port ${port} there and has the URL below ` +
    'can see your NeoSets and act on them with your Kubernetes credentials, and the URL (its token) travels unencrypted (plain HTTP). ' +
    `Prefer the default address and a tunnel from the other machine (ssh -L ${port}:127.0.0.1:${port} THIS-HOST), then open the URL there.\n`
  );
}
