// `kubectl neoset dashboard`: serves the page until Ctrl-C (SIGINT) or SIGTERM, then exits 0.
import type { Command } from '../args.ts';
import type { Cluster } from '../cluster.ts';
import type { Io } from '../commands/io.ts';
import { EXIT_OK } from '../errors.ts';
import { startDashboard } from './start.ts';

type DashboardCommand = Extract<Command, { name: 'dashboard' }>;

export async function dashboard(cluster: Cluster, c: DashboardCommand, io: Io): Promise<number> {
  const namespace = c.allNamespaces ? undefined : cluster.namespace;
  const running = await startDashboard({ cluster, namespace, port: c.port, address: c.address, readOnly: c.readOnly });
  const shown = namespace === undefined ? 'all namespaces' : `namespace ${namespace}`;
  io.out.write(`NeoSet dashboard (${shown}${c.readOnly ? ', read-only' : ''}) at ${running.url}\nPress Ctrl-C to stop it.\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await running.close();
  return EXIT_OK;
}
