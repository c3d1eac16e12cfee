// `npm run dev`: the whole NeoSet system in the foreground. Prints `export KUBECONFIG=<dir>/kubeconfig`,
// then `NeoSet dev stack ready`, then one line per function invocation that wrote something.
// Ctrl-C (SIGINT), SIGTERM or a closed terminal (SIGHUP) stops everything it started.
//
// Two modes:
//   (default)   the real Knative (dev/knative-stack.ts): a control plane on the service network, a
//               process-mode kubelet, kube-proxy and CoreDNS, Knative Eventing v0.50.0 and Serving
//               v0.50.0 from their release manifests with Traefik as Serving's ingress, and NeoSet as
//               users deploy it on Knative (`kubectl apply -k knative/`): reconcile and readiness as
//               Knative Services fed by ApiServerSources → Broker → Triggers and a PingSource (minute
//               ticks). Needs root and the machine's service network (one such stack per machine).
//   --bridge    the light imitation (dev/stack.ts): the functions as host processes and dev/bridge/
//               playing ApiServerSource, Broker, Triggers and PingSource (ticks every --resync-ms).
//
//   --dir DIR           working directory (default .neoset/dev; NEOSET_DEV_DIR)
//   --verbose           print every invocation, no-ops included
//   default mode only:
//   --eventing-only     no Knative Serving: knative/eventing-only/ (the functions as Deployments behind
//                       Services), as on a cluster with Eventing alone
//   --kn                deploy the functions with `kn service apply -f knative/{reconcile,readiness}.yaml`
//                       (kn v0.42.0, built and cached like the other binaries) instead of kubectl apply -k
//   (the addresses it takes on this host; it refuses to start when one of the host's routes covers
//   one, dev/cluster/address-plan.ts):
//   --pod-network-cidr CIDR  the pods' /16 (default 10.244.0.0/16)
//   --service-cidr CIDR      the Services' range (default 10.96.0.0/12)
//   --api-address IP         kube-apiserver's address (default 10.245.0.1)
//   --bridge only:
//   --record DIR        save every event the bridge delivers (also NEOSET_RECORD=DIR); README "Record and replay"
//   --resync-ms N       PingSource period of the bridge (default 3000; NEOSET_RESYNC_MS)
//   --reconcile-port N  (default 8081)  --readiness-port N (8082)  --admission-port N (8443); 0: any free port
//   --kubeconfig PATH   run against your cluster (kind, minikube, ...) instead of a local control plane
//                       (implies --bridge); no simulated kubelet; the CRD, the functions' RBAC and the
//                       admission webhooks installed, the webhooks removed on exit
//   --context NAME      its context (default: the current one)
//   --admission-host H  the address your API server calls the admission webhooks at (default 127.0.0.1)
//   --hook-owner URL    hand the lifecycle CloudEvents (SPEC §4.10; printed as `hook event: ...`) on to
//                       this hook owner, e.g. examples/hooks/ (NEOSET_HOOK_OWNER)
//   --bundled           run the dist/ bundles (built first) instead of the sources
//   NEOSET_ANALYSIS_ADDRESSES  the Prometheus addresses canary analyses may query, comma-separated (default
//                       http://prometheus.invalid:9090, README "Automated canary"; empty: none)
import { rmSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from '../scripts/build.ts';
import { AddressConflictError, addressPlanFrom, type AddressPlan } from './cluster/address-plan.ts';
import { STOP_DEADLINE_MS } from './cluster/shutdown.ts';
import { REPO_ROOT } from './functions.ts';
import { startKnativeDevStack, type KnativeDevStack } from './knative-stack.ts';
import { startDevStack, type DevStack } from './stack.ts';

const say = (line: string) => process.stderr.write(`${line}\n`);
// A reader gone (the terminal closed, `| head` done) makes a write fail with EPIPE, which unhandled
// would end this process without its stop: pod processes, network namespaces and nftables tables
// left behind. The lines go nowhere instead; a closed terminal's SIGHUP stops the stack below.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

function usage(message: string): never {
  say(`npm run dev: ${message}`);
  say('usage: npm run dev -- [--eventing-only | --kn] [--dir DIR] [--pod-network-cidr CIDR] [--service-cidr CIDR] [--api-address IP] [--verbose]');
  say('       npm run dev -- --bridge [--kubeconfig PATH [--context NAME] [--admission-host HOST]] [--record DIR] [--resync-ms N] [--reconcile-port N] [--readiness-port N] [--admission-port N] [--dir DIR] [--hook-owner URL] [--bundled] [--verbose]');
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      options: {
        bridge: { type: 'boolean', default: false },
        'eventing-only': { type: 'boolean', default: false },
        kn: { type: 'boolean', default: false },
        record: { type: 'string' },
        'resync-ms': { type: 'string' },
        'reconcile-port': { type: 'string' },
        'readiness-port': { type: 'string' },
        'admission-port': { type: 'string' },
        dir: { type: 'string', default: process.env.NEOSET_DEV_DIR ?? join(REPO_ROOT, '.neoset', 'dev') },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        'admission-host': { type: 'string' },
        'hook-owner': { type: 'string' },
        'pod-network-cidr': { type: 'string' },
        'service-cidr': { type: 'string' },
        'api-address': { type: 'string' },
        bundled: { type: 'boolean', default: false },
        verbose: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    usage((error as Error).message);
  }
}

function integer(flag: string, raw: string | undefined, min: number, max: number): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw ?? '') || n < min || n > max) usage(`--${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

const args = parse();
// Your cluster has its own (or no) Knative: the bridge feeds the functions there.
const bridge = args.bridge || args.kubeconfig !== undefined;
// Flags only: the variables standing for them (NEOSET_RECORD, ...) are the bridge's and ignored here.
const BRIDGE_ONLY = ['record', 'resync-ms', 'reconcile-port', 'readiness-port', 'admission-port', 'hook-owner', 'bundled'] as const;
const misplaced = BRIDGE_ONLY.filter((flag) => args[flag] !== undefined && args[flag] !== false);
if (!bridge && misplaced.length > 0) {
  usage(`--${misplaced[0]} goes with --bridge: on the real Knative the events go through its Broker, the functions run as pods and the resync is its PingSource's minute`);
}
if (bridge && (args['eventing-only'] || args.kn)) usage('--eventing-only and --kn choose how NeoSet runs on the real Knative: --bridge runs no Knative');
if (args['eventing-only'] && args.kn) usage('--kn deploys the functions as Knative Services; --eventing-only runs them as Deployments, without Knative Serving');
const addressFlags: Partial<AddressPlan> = { clusterCIDR: args['pod-network-cidr'], serviceCIDR: args['service-cidr'], apiAddress: args['api-address'] };
if (bridge && Object.values(addressFlags).some((v) => v !== undefined)) {
  usage('--pod-network-cidr, --service-cidr and --api-address go with the default mode: --bridge puts no addresses on this host');
}
const planned = addressPlanFrom(addressFlags);
if ('error' in planned) usage(planned.error);
if (!bridge && process.getuid?.() !== 0) {
  usage('the default mode (the real Knative) runs pods in network namespaces of their own and needs root; npm run dev -- --bridge (the light imitation) does not');
}
const absolute = (p: string) => (isAbsolute(p) ? p : resolve(process.cwd(), p));
const record = args.record ?? process.env.NEOSET_RECORD;
const options = {
  dir: absolute(args.dir!),
  recordDir: record ? absolute(record) : undefined,
  resyncMs: integer('resync-ms', args['resync-ms'] ?? process.env.NEOSET_RESYNC_MS ?? '3000', 100, 3_600_000),
  ports: {
    reconcile: integer('reconcile-port', args['reconcile-port'] ?? '8081', 0, 65535),
    readiness: integer('readiness-port', args['readiness-port'] ?? '8082', 0, 65535),
    admission: integer('admission-port', args['admission-port'] ?? '8443', 0, 65535),
  },
  cluster: args.kubeconfig ? { kubeconfig: absolute(args.kubeconfig), context: args.context } : undefined,
  admissionHost: args['admission-host'],
  hookOwner: args['hook-owner'] ?? process.env.NEOSET_HOOK_OWNER,
  bundled: args.bundled,
  verbose: args.verbose,
};
if (!args.kubeconfig && (args.context || args['admission-host'])) usage('--context and --admission-host go with --kubeconfig');

/** Signals closer together than this are one Ctrl-C (see shutdown). */
const REPEAT_MS = 1000;
/** Time for a signal already delivered to be handled: its byte is in libuv's pipe, one poll reads it. */
const SIGNAL_LANDS_MS = 100;
let stack: DevStack | KnativeDevStack | undefined;
let stopping: { why: string; at: number } | undefined;
const kubeconfigPath = join(options.dir, 'kubeconfig');

/**
 * Exits now: the children die with this process (processes.ts); what would outlive it (the kubeconfig,
 * on your cluster the webhook registration) is undone first.
 */
function exit(code: number): never {
  stack?.stopNow();
  rmSync(kubeconfigPath, { force: true });
  process.exit(code);
}

async function shutdown(why: string, code: number): Promise<void> {
  if (stopping) {
    // A terminal's Ctrl-C reaches us twice: from the terminal (the whole foreground process group)
    // and forwarded by npm. Only a later one is the user pressing it again.
    if (Date.now() - stopping.at < REPEAT_MS) return;
    say(`${why} again: exiting now (the children die with this process)`);
    exit(1);
  }
  stopping = { why, at: Date.now() };
  say(`stopping (${why})`);
  // The parts' stops are bounded (dev/cluster/shutdown.ts); this is the backstop for the sum.
  setTimeout(() => {
    say(`not stopped within ${STOP_DEADLINE_MS} ms: killing what is left`);
    exit(code);
  }, STOP_DEADLINE_MS).unref();
  await stack?.stop();
  say('stopped');
  exit(code);
}
/**
 * Whether a stop is under way, once a signal that is already here has landed. A terminal's SIGINT
 * reaches the whole process group at once, so a child it ended (kubectl, kube-apiserver) can fail the
 * startup or end the stack before this process has run its own handler: that is Ctrl-C, not a failure.
 */
async function signalled(): Promise<boolean> {
  if (!stopping) await new Promise((resolve) => setTimeout(resolve, SIGNAL_LANDS_MS));
  return stopping !== undefined;
}
process.on('SIGINT', () => void shutdown('SIGINT', 0));
process.on('SIGTERM', () => void shutdown('SIGTERM', 0));
process.on('SIGHUP', () => void shutdown('SIGHUP (the terminal closed)', 0));
// `npm run dev` runs us through `exec`, so npm's forwarded signals reach this process. Should the
// parent still die without passing a signal on (npm killed with SIGKILL), stop rather than linger.
const parent = process.ppid;
setInterval(() => {
  if (!stopping && process.ppid !== parent) void shutdown('parent process exited', 0);
}, 500).unref();

try {
  if (options.bundled) {
    say('building dist/ (npm run build)');
    await build();
  }
  const started = Date.now();
  const log = (line: string) => (stopping ? say(line) : process.stdout.write(`${line}\n`));
  const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
  if (bridge) {
    const light = await startDevStack({ ...options, log });
    stack = light;
    const { reconcile, readiness, admission } = light.functions;
    process.stdout.write(`export KUBECONFIG=${light.kubeconfigPath}\n`);
    process.stdout.write(
      `NeoSet dev stack ready in ${seconds()} s: kube-apiserver ${light.cluster.version} at ${light.cluster.server}; ` +
        `reconcile ${reconcile.url}, readiness ${readiness.url}, admission ${admission.url}; logs in ${light.logsDir}. Ctrl-C stops it.\n`,
    );
  } else {
    // Its stop is there from the start: its pods' processes would not die with this one.
    const layout = args['eventing-only'] ? 'eventing-only' : 'serving';
    stack = startKnativeDevStack({ dir: options.dir, verbose: options.verbose, addresses: planned.plan, layout, deployer: args.kn ? 'kn' : 'kubectl', log });
    const real = await stack.ready;
    for (const line of real.summary) process.stdout.write(`${line}\n`);
    process.stdout.write(`export KUBECONFIG=${real.kubeconfigPath}\n`);
    const on = layout === 'serving' ? `the real Knative Serving and Eventing v${real.knativeVersion}` : `the real Knative Eventing v${real.knativeVersion}`;
    const functions = layout === 'serving' ? "NeoSet's functions as Knative Services fed by its Broker" : "NeoSet's functions as pods fed by its Broker";
    process.stdout.write(
      `NeoSet dev stack ready in ${seconds()} s on ${on}: kube-apiserver ${real.controlPlane.version} at ${real.controlPlane.server}; ` +
        `${functions}; logs in ${real.logsDir}. Ctrl-C stops it.\n`,
    );
  }
  // A part dying on its own ends the stack; during a deliberate stop the parts exit anyway.
  void stack.failed.then(async (why) => ((await signalled()) ? undefined : shutdown(why, 1)));
} catch (error) {
  // A startup cut short by Ctrl-C is not a failure: the stop under way exits.
  if (error instanceof AddressConflictError) {
    // A refusal before anything was made: the host stays as it was.
    say(`npm run dev: ${error.message}`);
    await shutdown('refused to start', 2);
  } else if (!(await signalled())) {
    say(`npm run dev failed: ${(error as Error).stack ?? error}`);
    if (!bridge) say('(npm run dev -- --bridge runs the light imitation instead: no Knative, no service network, no network namespaces)');
    await shutdown('startup failed', 1);
  }
}
