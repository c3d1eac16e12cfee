// `npm test`'s runner: two vitest processes side by side, one per lane of vitest.config.ts —
//   - the `unit` project, then the `integration` lane (the shared control plane), in this terminal;
//   - the `integration-services` lane (the machine's one service network), its lines prefixed
//     "[services] ".
// One process cannot do it: vitest runs every file of the projects that turn file parallelism off
// one after another, whichever project they belong to. The closing line adds up both processes'
// counts (test/summary-reporter.ts); the exit code is non-zero when either failed.
//
// With --prepare-services, the services lane first runs `node test/cluster/prepare.ts --only services`
// at nice 19 (its output prefixed too): on a first run, the services stack's Go builds (CNI, CoreDNS,
// Knative Eventing and Serving, Traefik, kn: most of a first npm test's time) overlap the first
// lane's tests, which need only the control plane, instead of coming before them; the services lane's
// own files run in three vitest runs, each as soon as what it needs is built (below).
//
//   node test/run.ts [--integration-only] [--prepare-services] [vitest args…]
// With `--project` among the args, one vitest process runs just what they name.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { BALANCE_FILES, EVENTING_FILES, SERVING_FILES } from './lanes.ts';

const LANE_PREFIX = '[services] ';
const SUMMARY = /^tests: (\d+) passed, (\d+) failed, (\d+) skipped$/;

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

interface Lane {
  name: string;
  child: ChildProcess;
  counts?: Counts;
  exit: Promise<number>;
  /** Its last TAIL_LINES lines of output (stdout and stderr), repeated at the end when it failed. */
  tail: string[];
}

/**
 * A failed lane's last lines are printed again after both lanes end: a CI log that keeps only the end
 * of the output (or only stdout) then still says why — the services lane's failures were otherwise
 * interleaved far above, or on stderr.
 */
const TAIL_LINES = 80;

const args = process.argv.slice(2);
const integrationOnly = args.includes('--integration-only');
const prepareServices = args.includes('--prepare-services');
const vitestArgs = args.filter((a) => a !== '--integration-only' && a !== '--prepare-services');

/** Starts `command` (default `vitest run` with `args`); with `prefix` (may be ''), its output is relayed line by line, prefixed, and its counts read. */
function startLane(name: string, laneArgs: string[], prefix?: string, command: [string, ...string[]] = ['vitest', 'run']): Lane {
  const [program, ...programArgs] = command;
  const child = spawn(program, [...programArgs, ...laneArgs], { stdio: prefix === undefined ? 'inherit' : ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: process.stdout.isTTY ? '1' : process.env.FORCE_COLOR } });
  const exit = new Promise<number>((resolve) => {
    child.on('error', (err) => {
      process.stderr.write(`${name}: vitest did not start: ${err.message}\n`);
      resolve(1);
    });
    // 'close', not 'exit': after the pipes are drained, so the count line has been read.
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
  const lane: Lane = { name, child, exit, tail: [] };
  const relay = (stream: NodeJS.ReadableStream | null, to: NodeJS.WriteStream) => {
    if (!stream) return;
    createInterface({ input: stream }).on('line', (line) => {
      lane.tail.push(line);
      if (lane.tail.length > TAIL_LINES) lane.tail.shift();
      const counted = SUMMARY.exec(line);
      if (counted) lane.counts = { passed: Number(counted[1]), failed: Number(counted[2]), skipped: Number(counted[3]) };
      // The lanes' own count lines are named, so that only the total below reads "tests: …".
      to.write(counted ? `[${name}] ${line}\n` : `${prefix}${line}\n`);
    });
  };
  if (prefix !== undefined) {
    relay(child.stdout, process.stdout);
    relay(child.stderr, process.stderr);
  }
  return lane;
}

if (vitestArgs.includes('--project')) {
  const lane = startLane('vitest', vitestArgs);
  process.exitCode = await lane.exit;
} else {
  const started = Date.now();
  const live = new Set<Lane>();
  const start = (...args: Parameters<typeof startLane>): Lane => {
    const lane = startLane(...args);
    live.add(lane);
    void lane.exit.then(() => live.delete(lane));
    return lane;
  };
  let stopped = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      stopped = true;
      for (const lane of live) lane.child.kill(signal);
    });
  }
  const first = start(integrationOnly ? 'integration' : 'unit + integration', [...(integrationOnly ? [] : ['--project', 'unit']), '--project', 'integration', '--passWithNoTests', ...vitestArgs], '');
  // The services lane: each vitest run of it, and the builds when they failed, in order.
  const servicesRuns: { lane: Lane; code: number }[] = [];
  const runServices = async (name: string, files: string[]): Promise<number> => {
    const lane = start(name, ['--project', 'integration-services', '--passWithNoTests', ...vitestArgs, ...files], LANE_PREFIX);
    const code = await lane.exit;
    servicesRuns.push({ lane, code });
    return code;
  };
  // Builds first when asked, then the tests that need them (not started if their builds failed). With
  // no filter of the caller's, in three runs, one after another (never three vitest processes at once):
  //   1. BALANCE_FILES, which need only a control plane, while the builds run;
  //   2. EVENTING_FILES, once CNI, kube-proxy, CoreDNS and Eventing are built;
  //   3. SERVING_FILES, once Serving, Traefik (the longest build) and kn are too.
  // On a first run the files of 1 and 2 would otherwise wait for Traefik's build, then run alone at the end.
  const split = prepareServices && vitestArgs.length === 0;
  const build = (name: string, only: string) => start(name, ['--only', only], LANE_PREFIX, ['nice', '-n', '19', process.execPath, 'test/cluster/prepare.ts']);
  const failedBuild = async (builds: Lane): Promise<number> => {
    const code = await builds.exit;
    if (code !== 0 || stopped) servicesRuns.push({ lane: builds, code: code || 1 });
    return code !== 0 || stopped ? code || 1 : 0;
  };
  const servicesExit = (async (): Promise<number> => {
    if (!prepareServices) return runServices('integration-services', []);
    if (!split) {
      const built = await failedBuild(build('services builds', 'services'));
      return built !== 0 ? built : runServices('integration-services', []);
    }
    const eventingBuilds = failedBuild(build('services builds (Eventing)', 'services-eventing'));
    const servingBuilds = failedBuild(build('services builds (Serving)', 'serving'));
    const codes = [await runServices('integration-services (a control plane only)', BALANCE_FILES)];
    const eventing = await eventingBuilds;
    if (eventing !== 0) return eventing;
    codes.push(await runServices('integration-services (Eventing)', EVENTING_FILES));
    const serving = await servingBuilds;
    if (serving !== 0) return serving;
    codes.push(await runServices('integration-services (Serving)', SERVING_FILES));
    return codes.find((c) => c !== 0) ?? 0;
  })();
  const [firstCode, servicesCode] = await Promise.all([first.exit, servicesExit]);
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const ran = [{ lane: first, code: firstCode }, ...servicesRuns];
  const said = ({ lane, code }: { lane: Lane; code: number }) =>
    `${lane.name} ${code === 0 ? 'passed' : `FAILED (exit ${code})`}${lane.counts ? ` (${lane.counts.passed} passed, ${lane.counts.failed} failed, ${lane.counts.skipped} skipped)` : ' (no counts: did it start?)'}`;
  const total = (k: keyof Counts) => ran.reduce((sum, r) => sum + (r.lane.counts?.[k] ?? 0), 0);
  // A run that printed no counts failed to run: one failure more, so that the total never reads clean.
  const unreported = ran.filter((r) => !r.lane.counts).length;
  for (const { lane, code } of ran) {
    if (code === 0 || lane.tail.length === 0) continue;
    process.stdout.write(`\n${lane.name} failed (exit ${code}); its last ${lane.tail.length} lines again:\n${lane.tail.map((l) => `  | ${l}`).join('\n')}\n`);
  }
  process.stdout.write(`\n${ran.map(said).join('; ')}; both lanes in ${seconds} s\n`);
  process.stdout.write(`tests: ${total('passed')} passed, ${total('failed') + unreported} failed, ${total('skipped')} skipped\n`);
  process.exitCode = firstCode !== 0 ? firstCode : servicesCode !== 0 ? servicesCode : unreported;
}
