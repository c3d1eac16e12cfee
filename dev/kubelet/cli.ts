// Run the simulated kubelet by hand against any cluster:
//   node dev/kubelet/cli.ts --kubeconfig /tmp/kubeconfig [--node sim-node] [--namespace ns]
//                            [--start-delay-ms 200] [--ready-delay-ms 300] [--bind-except ns1,ns2]
// Stops cleanly (lease, watch, timers) on SIGINT / SIGTERM. Bad arguments exit with code 2.

import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { startKubelet } from './kubelet.ts';

function fail(message: string): never {
  process.stderr.write(`kubelet: ${message}\n`);
  process.exit(2);
}

function milliseconds(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) fail(`--${name}: expected a whole number of milliseconds, got "${value}"`);
  return n;
}

let args;
try {
  args = parseArgs({
    options: {
      kubeconfig: { type: 'string', default: process.env.KUBECONFIG },
      node: { type: 'string' },
      namespace: { type: 'string' },
      'start-delay-ms': { type: 'string' },
      'ready-delay-ms': { type: 'string' },
      'bind-except': { type: 'string' },
    },
    strict: true,
  }).values;
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}

const kubeConfig = new KubeConfig();
if (args.kubeconfig) kubeConfig.loadFromFile(args.kubeconfig);
else kubeConfig.loadFromDefault();

const kubelet = await startKubelet({
  kubeConfig,
  nodeName: args.node,
  namespace: args.namespace,
  startDelayMs: milliseconds('start-delay-ms', args['start-delay-ms']),
  readyDelayMs: milliseconds('ready-delay-ms', args['ready-delay-ms']),
  // Unscheduled pods of these namespaces are left to other nodes (KubeletOptions.binds).
  binds: args['bind-except'] ? { except: args['bind-except'].split(',').filter(Boolean) } : undefined,
  log: (msg) => process.stdout.write(`${new Date().toISOString()} ${msg}\n`),
});

let stopping = false;
const shutdown = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`${signal}: stopping\n`);
  // Nothing else holds the event loop once the kubelet is stopped: the process ends by itself.
  void kubelet.stop();
};
process.once('SIGINT', () => shutdown('SIGINT'));
process.once('SIGTERM', () => shutdown('SIGTERM'));
