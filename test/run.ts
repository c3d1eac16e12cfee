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
// lane's tests, which need only the control plane, instead of coming before them.
//
//   node test/run.ts [--integration-only] [--prepare-services] [vitest args…]
// With `--project` among the args, one vitest process runs just what they name.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

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
  const first = startLane(integrationOnly ? 'integration' : 'unit + integration', [...(integrationOnly ? [] : ['--project', 'unit']), '--project', 'integration', '--passWithNoTests', ...vitestArgs], '');
  // The services lane: its builds first when asked, then its tests (not started if the builds failed).
  const servicesArgs = ['--project', 'integration-services', '--passWithNoTests', ...vitestArgs];
  let services: Lane = prepareServices
    ? startLane('services builds', ['--only', 'services'], LANE_PREFIX, ['nice', '-n', '19', process.execPath, 'test/cluster/prepare.ts'])
    : startLane('integration-services', servicesArgs, LANE_PREFIX);
  let stopped = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      stopped = true;
      for (const lane of [first, services]) lane.child.kill(signal);
    });
  }
  const servicesExit = (async () => {
    if (!prepareServices) return services.exit;
    const built = await services.exit;
    if (built !== 0 || stopped) return built || 1;
    services = startLane('integration-services', servicesArgs, LANE_PREFIX);
    return services.exit;
  })();
  const [firstCode, servicesCode] = await Promise.all([first.exit, servicesExit]);
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const said = (lane: Lane, code: number) =>
    `${lane.name} ${code === 0 ? 'passed' : `FAILED (exit ${code})`}${lane.counts ? ` (${lane.counts.passed} passed, ${lane.counts.failed} failed, ${lane.counts.skipped} skipped)` : ' (no counts: did it start?)'}`;
  const total = (k: keyof Counts) => (first.counts?.[k] ?? 0) + (services.counts?.[k] ?? 0);
  // A lane that printed no counts failed to run: one failure more, so that the total never reads clean.
  const unreported = [first, services].filter((lane) => !lane.counts).length;
  for (const [lane, code] of [[first, firstCode], [services, servicesCode]] as const) {
    if (code === 0 || lane.tail.length === 0) continue;
    process.stdout.write(`\n${lane.name} failed (exit ${code}); its last ${lane.tail.length} lines again:\n${lane.tail.map((l) => `  | ${l}`).join('\n')}\n`);
  }
  process.stdout.write(`\n${said(first, firstCode)}; ${said(services, servicesCode)}; both lanes in ${seconds} s\n`);
  process.stdout.write(`tests: ${total('passed')} passed, ${total('failed') + unreported} failed, ${total('skipped')} skipped\n`);
  process.exitCode = firstCode !== 0 ? firstCode : servicesCode !== 0 ? servicesCode : unreported;
}
