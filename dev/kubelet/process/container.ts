// One container of a process-mode pod: its process in the pod's network namespace (and a mount and
// UTS namespace of its own, where the pod's /etc/hosts, /etc/resolv.conf and volumes are bind-mounted
// and the hostname is the pod's), its log file per start, its probes, its lifecycle hooks
// (lifecycle-hooks.ts: postStart after each start, preStop before each kill), and its restarts per the
// pod's restartPolicy with kubelet's back-off (the first restart at once, then initial, doubling,
// capped). What it reports is a containerStatus as kubelet writes it.
// The start is a chain of host programs run as root — ip netns exec, unshare, sh (the mounts), then
// exec-program.mjs, which execs the program — each by its absolute path with the kubelet's tool
// environment (host-tools.ts); the pod's environment goes to exec-program.mjs on fd 3 and reaches
// the program only. A pod's PATH chooses none of the kubelet's programs.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { V1Container, V1ContainerState, V1ContainerStatus, V1Probe } from '@kubernetes/client-node';
import { imageIDOf, newContainerID, normalizeImage } from '../image.ts';
import { apiTime } from '../pod-status.ts';
import { reportedResources } from '../resize.ts';
import { hostTool, TOOL_ENV } from './host-tools.ts';
import { node24 } from './image-table.ts';
import { runHook, stopContainer, type Stopping } from './lifecycle-hooks.ts';
import { probeOnce } from './probes.ts';
import type { Mount } from './volumes.ts';

export interface ContainerSpec {
  container: V1Container;
  argv: string[];
  env: Record<string, string>;
  workingDir: string;
  mounts: Mount[];
}

export interface ContainerSettings {
  netns: string;
  hostname: string;
  podIP: string;
  /** The pod's /etc/hosts and /etc/resolv.conf files. */
  etcDir: string;
  logDir: string;
  restartPolicy: string;
  backoffMs: number;
  maxBackoffMs: number;
  /** The grace period (preStop hook, then SIGTERM, SIGKILL at its end) when a liveness, startup probe or postStart hook fails. */
  graceMs: number;
  /** Where the previous status (a kubelet restart) leaves off. */
  previous?: V1ContainerStatus;
  onChange: () => void;
  log: (msg: string) => void;
}

export interface ContainerRun {
  name: string;
  status(): V1ContainerStatus;
  running(): boolean;
  /**
   * Its preStop hook (within `graceMs`), SIGTERM to its process group, SIGKILL when `graceMs` ends; no
   * restart after. A second call may only shorten the grace (0: killed at once). Resolves once it has exited.
   */
  stop(graceMs: number): Promise<void>;
}

/** kubelet's PLEG relist period (genericPlegRelistPeriod): how soon it sees a container started. */
const PLEG_RELIST_MS = 1000;

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The program that hands the pod's environment (fd 3) to its program and execs it. */
export const EXEC_PROGRAM = fileURLToPath(new URL('./exec-program.mjs', import.meta.url));

/**
 * The shell run inside the container's namespaces before the program: hostname, mounts, cwd — every
 * program by its absolute path — then exec-program.mjs with the program's argv ("$@").
 */
export function setupScript(spec: Pick<ContainerSpec, 'mounts' | 'workingDir'>, etcDir: string): string {
  const [hostname, mount, mkdir, dirname] = ['hostname', 'mount', 'mkdir', 'dirname'].map((tool) => shellQuote(hostTool(tool)));
  const lines = ['set -e', `${hostname} "$1"; shift`];
  for (const file of ['hosts', 'resolv.conf']) lines.push(`${mount} --bind ${shellQuote(join(etcDir, file))} /etc/${file}`);
  for (const m of spec.mounts) {
    const [source, target] = [shellQuote(m.source), shellQuote(m.target)];
    // A mount point that does not exist is made (on the host's file system: left there, empty).
    lines.push(`if [ -d ${source} ]; then ${mkdir} -p ${target}; else ${mkdir} -p "$(${dirname} ${target})"; [ -e ${target} ] || : > ${target}; fi`);
    lines.push(`${mount} --bind ${source} ${target}`);
    if (m.readOnly) lines.push(`${mount} -o remount,bind,ro ${target}`);
  }
  lines.push(`cd ${shellQuote(spec.workingDir)}`, `exec ${shellQuote(node24())} ${shellQuote(EXEC_PROGRAM)} "$@"`);
  return lines.join('\n');
}

/** The host command that starts the container: what is spawned, with TOOL_ENV and the pod's env on fd 3. */
export function startCommand(spec: Pick<ContainerSpec, 'argv' | 'mounts' | 'workingDir'>, settings: Pick<ContainerSettings, 'netns' | 'etcDir' | 'hostname'>): { file: string; args: string[] } {
  const shell = setupScript(spec, settings.etcDir);
  return {
    file: hostTool('ip'),
    args: ['netns', 'exec', settings.netns, hostTool('unshare'), '--uts', '--', hostTool('sh'), '-c', shell, 'sh', settings.hostname, ...spec.argv],
  };
}

export function runContainer(spec: ContainerSpec, settings: ContainerSettings): ContainerRun {
  const { container } = spec;
  const image = normalizeImage(container.image ?? '');
  const base = { name: container.name, image, imageID: imageIDOf(container.image ?? ''), resources: reportedResources(container) };
  const prev = settings.previous;
  let restartCount = prev?.containerID ? prev.restartCount + 1 : 0;
  // A container stopped for an in-place image change left its real end; one found running by a
  // restarted kubelet is unknown (its process went with the earlier kubelet), as kubelet reports it.
  let lastState: V1ContainerState = prev?.state?.terminated
    ? { terminated: prev.state.terminated }
    : prev?.containerID
      ? { terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', finishedAt: apiTime(Date.now()) } }
      : {};
  let state: V1ContainerState = { waiting: { reason: 'ContainerCreating' } };
  let containerID: string | undefined;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let stopping = false;
  let ready = false;
  let started = false;
  let backoff = 0;
  let startedAtMs = 0;
  let timers: NodeJS.Timeout[] = [];
  let restartTimer: NodeJS.Timeout | undefined;
  /** The kill under way of the current process (preStop, SIGTERM, SIGKILL). */
  let killing: Stopping | undefined;
  /** Ends the current process's postStart hook; set while it runs (kubelet reports the container created, not running, until it returns). */
  let postStart: AbortController | undefined;

  const clearProbes = () => {
    for (const t of timers) clearTimeout(t);
    timers = [];
  };
  const signalGroup = (proc: ChildProcess, signal: NodeJS.Signals) => {
    if (!proc.pid || proc.exitCode !== null || proc.signalCode !== null) return;
    try {
      process.kill(-proc.pid, signal);
    } catch {
      // the group is gone
    }
  };
  /** kubelet's killContainer (lifecycle-hooks.ts stopContainer) of the current process; again: only hurries it. */
  const killContainer = (graceMs: number): Promise<void> => {
    if (killing) {
      killing.hurry(graceMs);
      return killing.done;
    }
    const proc = child;
    postStart?.abort(); // kubelet kills a container whose postStart still runs the same way
    postStart = undefined;
    const hook = container.lifecycle?.preStop;
    killing = stopContainer(graceMs, {
      // Bound to this process: a restart may replace `child` before the kill is over.
      preStop: hook && proc?.pid && state.running ? (signal) => runHook(hook, { podIP: settings.podIP, container, pid: proc.pid!, env: spec.env }, signal) : undefined,
      signal: (sig) => proc && signalGroup(proc, sig),
      exited,
      log: (msg) => settings.log(`${container.name}: ${msg}`),
    });
    return killing.done;
  };

  const setReady = (value: boolean) => {
    if (ready === value) return;
    ready = value;
    settings.onChange();
  };

  /**
   * Runs `probe` every periodSeconds; `onResult` sees each outcome against its thresholds. With
   * `manualAtMs`, once more at that time unless ready by then (see startProbes).
   */
  const schedule = (probe: V1Probe, kind: string, onResult: (passed: boolean, failed: boolean) => void, manualAtMs?: number) => {
    const period = (probe.periodSeconds ?? 10) * 1000;
    const initialDelay = (probe.initialDelaySeconds ?? 0) * 1000;
    let successes = 0;
    let failures = 0;
    const tick = async (periodic = true) => {
      if (!child?.pid || stopping) return;
      const result = await probeOnce(probe, { podIP: settings.podIP, container, pid: child.pid, env: spec.env });
      if (!child || stopping || state.running === undefined) return;
      successes = result.ok ? successes + 1 : 0;
      failures = result.ok ? 0 : failures + 1;
      if (!result.ok) settings.log(`${container.name}: ${kind} probe failed: ${result.message}`);
      onResult(successes >= (probe.successThreshold ?? 1), failures >= (probe.failureThreshold ?? 3));
      if (periodic && state.running !== undefined) timers.push(setTimeout(() => void tick(), period));
    };
    timers.push(setTimeout(() => void tick(), initialDelay));
    if (manualAtMs !== undefined && manualAtMs >= initialDelay) timers.push(setTimeout(() => void (ready || tick(false)), manualAtMs));
  };

  const startProbes = () => {
    const afterStartup = () => {
      started = true;
      if (container.readinessProbe) {
        // kubelet's prober manager runs a readiness probe at once whenever the pod's status is
        // synced while the container runs unready ("Trigger an immediate run of the readinessProbe",
        // prober_manager.go UpdatePodStatus); the first such sync follows the PLEG relist (every 1 s)
        // that sees the container started. Without it a program up within a second (Knative's
        // adapters, periodSeconds 10) would be Ready only a whole period after its start.
        schedule(
          container.readinessProbe,
          'readiness',
          (passed, failed) => {
            if (passed) setReady(true);
            else if (failed) setReady(false);
          },
          PLEG_RELIST_MS,
        );
      } else setReady(true);
      if (container.livenessProbe) {
        schedule(container.livenessProbe, 'liveness', (_passed, failed) => {
          if (!failed) return;
          settings.log(`${container.name}: liveness probe failed, restarting`);
          void killContainer(container.livenessProbe?.terminationGracePeriodSeconds ? container.livenessProbe.terminationGracePeriodSeconds * 1000 : settings.graceMs);
        });
      }
      settings.onChange();
    };
    if (!container.startupProbe) return afterStartup();
    let done = false;
    schedule(container.startupProbe, 'startup', (passed, failed) => {
      if (done) return;
      if (passed) {
        done = true;
        afterStartup();
      } else if (failed) {
        done = true;
        void killContainer(settings.graceMs);
      }
    });
  };

  const start = () => {
    restartTimer = undefined;
    if (stopping) return;
    containerID = newContainerID();
    startedAtMs = Date.now();
    started = false;
    ready = false;
    mkdirSync(settings.logDir, { recursive: true });
    const fd = openSync(join(settings.logDir, `${restartCount}.log`), 'a');
    const { file, args } = startCommand(spec, settings);
    const proc = spawn(file, args, { env: TOOL_ENV, stdio: ['ignore', fd, fd, 'pipe'], detached: true });
    closeSync(fd);
    // The pod's environment, for exec-program.mjs alone. A chain that failed before reading it
    // (EPIPE) exits non-zero, and that is what the container's status says.
    const envPipe = proc.stdio[3] as NodeJS.WritableStream | null;
    envPipe?.on('error', () => {});
    envPipe?.end(JSON.stringify(spec.env));
    child = proc;
    killing = undefined;
    state = { running: { startedAt: apiTime(startedAtMs) } };
    const thisID = containerID;
    exited = new Promise((resolve) => {
      proc.on('error', (err) => settings.log(`${container.name}: ${err.message}`));
      proc.on('close', (code, signal) => {
        const exitCode = code ?? 128 + (signal ? (constants.signals[signal] ?? 9) : 9);
        clearProbes();
        const terminated = {
          exitCode,
          reason: exitCode === 0 ? 'Completed' : 'Error',
          startedAt: apiTime(startedAtMs),
          finishedAt: apiTime(Date.now()),
          containerID: thisID,
        };
        ready = false;
        started = false;
        postStart?.abort();
        postStart = undefined;
        settings.log(`${container.name}: exited ${exitCode}${signal ? ` (${signal})` : ''}`);
        const restart = !stopping && (settings.restartPolicy === 'Always' || (settings.restartPolicy === 'OnFailure' && exitCode !== 0));
        if (!restart) state = { terminated };
        else {
          // kubelet forgets the back-off of a container that ran for twice the cap.
          if (Date.now() - startedAtMs > 2 * settings.maxBackoffMs) backoff = 0;
          lastState = { terminated };
          restartCount++;
          const delay = backoff;
          backoff = Math.min(settings.maxBackoffMs, backoff === 0 ? settings.backoffMs : backoff * 2);
          if (delay === 0) start();
          else {
            state = { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${Math.round(delay / 1000)}s restarting failed container=${container.name}` } };
            restartTimer = setTimeout(start, delay);
          }
        }
        settings.onChange();
        resolve();
      });
    });
    const hook = container.lifecycle?.postStart;
    if (!hook || !proc.pid) return startProbes();
    // kubelet's startContainer runs postStart before it reports the container running (and probes
    // it); a hook that fails kills the container (FailedPostStartHook), restarted per restartPolicy.
    const ending = new AbortController();
    postStart = ending;
    void runHook(hook, { podIP: settings.podIP, container, pid: proc.pid, env: spec.env }, ending.signal).then((result) => {
      if (postStart !== ending) return; // the process exited, or is being killed
      postStart = undefined;
      settings.onChange(); // created → running
      if (result.ok) return startProbes();
      settings.log(`${container.name}: FailedPostStartHook: ${result.message}`);
      void killContainer(settings.graceMs);
    });
  };
  start();

  return {
    name: container.name,
    running: () => state.running !== undefined,
    status() {
      const shown: V1ContainerState = postStart ? { waiting: { reason: 'ContainerCreating' } } : state;
      const waitingNow = shown.waiting !== undefined;
      return {
        ...base,
        containerID: waitingNow && restartCount === 0 ? undefined : (containerID ?? undefined),
        restartCount,
        ready,
        started,
        state: shown,
        lastState,
      };
    },
    async stop(graceMs) {
      stopping = true;
      clearTimeout(restartTimer);
      clearProbes();
      await killContainer(graceMs);
    },
  };
}
