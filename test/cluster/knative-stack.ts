// The real Knative Eventing beneath a stack, for the tests and scripts that need what it sends or
// what it measures (knative-contract, prometheus-knative, examples/events/record.ts): a serviceNetwork
// control plane, a process-mode kubelet whose image table runs Knative's built binaries and the event
// receiver (test/fixtures/process-pods/event-receiver.ts), kube-proxy and CoreDNS, then Knative
// installed from its release manifests and NeoSet's CRD. With `serving`, Knative Serving and Traefik
// too, as `npm run dev` runs them (dev/knative-stack.ts: SERVING_CONTROLLERS, the process grace cap
// that lets queue-proxy drain), for NeoSet deployed as the Knative Services of knative/
// (dev/cluster/neoset-on-serving.ts). Claims the machine's service network: run under
// `flock /tmp/neoset-service-network.lock` (common rules).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { resolveCoreDns, resolveKnativeEventing, resolveKnativeServing, resolveTraefik } from '../../dev/cluster/binaries.ts';
import { startControlPlane, type ControlPlane } from '../../dev/cluster/control-plane.ts';
import { installCrds } from '../../dev/cluster/crd.ts';
import { installKnativeEventing, KNATIVE_CONTROLLERS, knativeImageTable } from '../../dev/cluster/knative.ts';
import { startServices, type Services } from '../../dev/cluster/services.ts';
import { installKnativeServing, SERVING_CONTROLLERS, servingPrograms } from '../../dev/cluster/serving.ts';
import { installTraefik, traefikPrograms } from '../../dev/cluster/traefik.ts';
import { PROCESS_GRACE_SECONDS } from '../../dev/knative-stack.ts';
import type { ImageTableEntry } from '../../dev/kubelet/process/image-table.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { STATE_ROOT } from '../../dev/kubelet/process/network.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';

/** The receiver's image: a process-mode pod keeping every CloudEvent POSTed to it (GET /events). */
export const RECEIVER_IMAGE = 'neoset.local/event-receiver:1';

export interface KnativeStack {
  cp: ControlPlane;
  kubelet: Kubelet;
  services: Services;
  /** resolveKnativeEventing's directory: the binaries (a process whose command line names it is Knative's). */
  knativeDir: string;
  /** With `serving`: resolveKnativeServing's directory (Serving's binaries, queue-proxy's among them). */
  servingDir?: string;
  /** Progress lines so far. */
  log: string[];
  /** The last lines of every process-mode container's log: what to read when Knative misbehaves. */
  containerLogTails(): string;
  stop(): Promise<void>;
}

export interface KnativeStackOptions {
  nodeName: string;
  imageTable?: ImageTableEntry[];
  /**
   * Knative Serving (with Traefik as its ingress) beside Eventing, as `npm run dev` runs it; a deleted
   * process-mode pod gets its grace period up to PROCESS_GRACE_SECONDS. Default false.
   */
  serving?: boolean;
  /** config-autoscaler keys for Serving (e.g. SHORT_AUTOSCALER_WINDOWS). Default none: Serving's own windows, as npm run dev's. */
  autoscaler?: Record<string, string>;
}

export async function startKnativeStack(opts: KnativeStackOptions): Promise<KnativeStack> {
  const log: string[] = [];
  const push = (l: string) => log.push(l);
  const [knativeDir, coredns, servingDir, traefik] = await Promise.all([resolveKnativeEventing(), resolveCoreDns(), opts.serving ? resolveKnativeServing() : undefined, opts.serving ? resolveTraefik() : undefined]);
  const cp = await startControlPlane({ serviceNetwork: true, extraControllers: opts.serving ? SERVING_CONTROLLERS : KNATIVE_CONTROLLERS, log: push });
  let kubelet: Kubelet | undefined;
  let services: Services | undefined;
  const stop = async () => {
    await services?.stop();
    await kubelet?.stop();
    await cp.stop();
  };
  try {
    kubelet = await startKubelet({
      kubeConfig: cp.kubeConfig(),
      nodeName: opts.nodeName,
      log: push,
      ...(opts.serving ? { maxProcessGraceSeconds: PROCESS_GRACE_SECONDS } : {}),
      processMode: {
        imageTable: [
          ...knativeImageTable(knativeDir),
          { image: 'neoset.local/event-receiver:*', entrypoint: ['{node}', '{checkout}/test/fixtures/process-pods/event-receiver.ts'], env: { PORT: '8080' } },
          ...(opts.imageTable ?? []),
        ],
        programs: { coredns, ...(servingDir && traefik ? { ...servingPrograms(servingDir), ...traefikPrograms(traefik) } : {}) },
        backoffMs: 1000,
        maxBackoffMs: 10_000,
      },
    });
    services = await startServices(cp, { nodeName: kubelet.nodeName, log: push });
    await Promise.all([
      installKnativeEventing(cp, { dir: knativeDir, log: push, timeoutMs: 150_000 }),
      ...(servingDir ? [installKnativeServing(cp, { dir: servingDir, autoscaler: opts.autoscaler, log: push, timeoutMs: 200_000 }), installTraefik(cp, { log: push, timeoutMs: 150_000 })] : []),
    ]);
    await installCrds(cp.kubeConfig());
  } catch (err) {
    console.log(log.slice(-60).join('\n'), '\n', containerLogTails());
    await stop();
    throw err;
  }
  return { cp, kubelet, services, knativeDir, servingDir, log, containerLogTails, stop };
}

/** The last 15 lines of every process-mode container's log on this machine (they go with the pods at stop). */
export function containerLogTails(): string {
  const out: string[] = [];
  for (const bridge of existsSync(STATE_ROOT) ? readdirSync(STATE_ROOT).filter((d) => d.startsWith('neoset')) : []) {
    const podsDir = join(STATE_ROOT, bridge, 'pods');
    for (const uid of existsSync(podsDir) ? readdirSync(podsDir) : []) {
      const logs = join(podsDir, uid, 'logs');
      for (const container of existsSync(logs) ? readdirSync(logs) : []) {
        for (const file of readdirSync(join(logs, container))) {
          const lines = readFileSync(join(logs, container, file), 'utf8').trim().split('\n').slice(-15);
          out.push(`--- ${container}/${file} (${uid})`, ...lines.map((l) => l.slice(0, 400)));
        }
      }
    }
  }
  return out.join('\n');
}

type Conditioned = { status?: { conditions?: { type: string; status: string; message?: string }[] } };

/** Waits for a namespaced custom object's Ready condition to be True; the error says its conditions. */
export async function readyObject(cp: ControlPlane, ref: { group: string; version: string; plural: string; namespace: string; name: string }, timeoutMs = 60_000): Promise<unknown> {
  const custom = cp.kubeConfig().makeApiClient(CustomObjectsApi);
  let last: unknown;
  return waitFor(
    async () => {
      const o = (await custom.getNamespacedCustomObject(ref)) as Conditioned;
      last = o.status?.conditions;
      return o.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && o;
    },
    { what: `${ref.plural}/${ref.name} Ready`, timeoutMs, intervalMs: 500 },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; conditions: ${JSON.stringify(last)}`, { cause: err });
  });
}

/** A CloudEvent as the receiver got it: the path, every request header (lower-case names) and the body. */
export interface ReceivedEvent {
  path: string;
  headers: Record<string, string>;
  attributes: Record<string, string>;
  data: string;
}

/**
 * Starts the receiver pod `name` in `namespace` behind a Service of the same name (port 80), Ready;
 * returns how to read what it received (from the host, at its pod IP).
 */
export async function startReceiver(cp: ControlPlane, namespace: string, name = 'receiver'): Promise<{ ip: string; events(): Promise<ReceivedEvent[]> }> {
  const core = cp.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, namespace, labels: { app: name } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'receiver', image: RECEIVER_IMAGE, readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1 } }],
      },
    },
  });
  await core.createNamespacedService({ namespace, body: { metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }] } } });
  const pod = await waitFor(async () => {
    const p = await core.readNamespacedPod({ name, namespace });
    return p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && p;
  }, { what: `${name} Ready`, timeoutMs: 30_000 });
  const ip = pod.status!.podIP!;
  return { ip, events: async () => (await (await fetch(`http://${ip}:8080/events`, { signal: AbortSignal.timeout(5000) })).json()) as ReceivedEvent[] };
}
