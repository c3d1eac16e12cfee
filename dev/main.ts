// `npm run dev`: the whole NeoSet system in the foreground (dev/stack.ts). Prints
// `export KUBECONFIG=<dir>/kubeconfig`, then `NeoSet dev stack ready`, then one line per function
// invocation that wrote something. Ctrl-C (SIGINT) or SIGTERM stops everything it started.
//
//   --record DIR        save every event the bridge delivers (also NEOSET_RECORD=DIR); README "Record and replay"
//   --resync-ms N       PingSource period of the bridge (default 3000; NEOSET_RESYNC_MS)
//   --reconcile-port N  (default 8081)  --readiness-port N (8082)  --admission-port N (8443); 0: any free port
//   --dir DIR           working directory (default .neoset/dev; NEOSET_DEV_DIR)
//   --kubeconfig PATH   run against your cluster (kind, minikube, ...) instead of a local control plane:
//   --context NAME      its context (default: the current one); no simulated kubelet; the CRD, the
//                       functions' RBAC and the admission webhooks installed, the webhooks removed on exit
//   --admission-host H  the address your API server calls the admission webhooks at (default 127.0.0.1)
//   --hook-owner URL    hand the lifecycle CloudEvents (SPEC §4.10; printed as `hook event: ...`) on to
//                       this hook owner, e.g. examples/hooks/ (NEOSET_HOOK_OWNER)
//   --bundled           run the dist/ bundles (built first) instead of the sources
//   --verbose           print every invocation, no-ops included
//   NEOSET_ANALYSIS_ADDRESSES  the Prometheus addresses canary analyses may query, comma-separated (default
//                       http://prometheus.invalid:9090, README "Automated canary"; empty: none)
import { rmSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from '../scripts/build.ts';
import { STOP_DEADLINE_MS } from './cluster/shutdown.ts';
import { REPO_ROOT } from './functions.ts';
import { startDevStack, type DevStack } from './stack.ts';

const say = (line: string) => process.stderr.write(`${line}\n`);

function usage(message: string): never {
  say(`npm run dev: ${message}`);
  say('usage: npm run dev -- [--kubeconfig PATH [--context NAME] [--admission-host HOST]] [--record DIR] [--resync-ms N] [--reconcile-port N] [--readiness-port N] [--admission-port N] [--dir DIR] [--hook-owner URL] [--bundled] [--verbose]');
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      options: {
        record: { type: 'string', default: process.env.NEOSET_RECORD },
        'resync-ms': { type: 'string', default: process.env.NEOSET_RESYNC_MS ?? '3000' },
        'reconcile-port': { type: 'string', default: '8081' },
        'readiness-port': { type: 'string', default: '8082' },
        'admission-port': { type: 'string', default: '8443' },
        dir: { type: 'string', default: process.env.NEOSET_DEV_DIR ?? join(REPO_ROOT, '.neoset', 'dev') },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        'admission-host': { type: 'string' },
        'hook-owner': { type: 'string', default: process.env.NEOSET_HOOK_OWNER },
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
const absolute = (p: string) => (isAbsolute(p) ? p : resolve(process.cwd(), p));
const options = {
  dir: absolute(args.dir!),
  recordDir: args.record ? absolute(args.record) : undefined,
  resyncMs: integer('resync-ms', args['resync-ms'], 100, 3_600_000),
  ports: {
    reconcile: integer('reconcile-port', args['reconcile-port'], 0, 65535),
    readiness: integer('readiness-port', args['readiness-port'], 0, 65535),
    admission: integer('admission-port', args['admission-port'], 0, 65535),
  },
  cluster: args.kubeconfig ? { kubeconfig: absolute(args.kubeconfig), context: args.context } : undefined,
  admissionHost: args['admission-host'],
  hookOwner: args['hook-owner'],
  bundled: args.bundled,
  verbose: args.verbose,
};
if (!args.kubeconfig && (args.context || args['admission-host'])) usage('--context and --admission-host go with --kubeconfig');

/** Signals closer together than this are one Ctrl-C (see shutdown). */
const REPEAT_MS = 1000;
let stack: DevStack | undefined;
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
process.on('SIGINT', () => void shutdown('SIGINT', 0));
process.on('SIGTERM', () => void shutdown('SIGTERM', 0));
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
  stack = await startDevStack({ ...options, log: (line) => (stopping ? say(line) : process.stdout.write(`${line}\n`)) });
  // A part dying on its own ends the stack; during a deliberate stop the parts exit anyway.
  void stack.failed.then((why) => (stopping ? undefined : shutdown(why, 1)));
  const { reconcile, readiness, admission } = stack.functions;
  process.stdout.write(`export KUBECONFIG=${stack.kubeconfigPath}\n`);
  process.stdout.write(
    `NeoSet dev stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s: kube-apiserver ${stack.cluster.version} at ${stack.cluster.server}; ` +
      `reconcile ${reconcile.url}, readiness ${readiness.url}, admission ${admission.url}; logs in ${stack.logsDir}. Ctrl-C stops it.\n`,
  );
} catch (error) {
  say(`npm run dev failed: ${(error as Error).stack ?? error}`);
  await shutdown('startup failed', 1);
}
