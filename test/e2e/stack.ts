// The whole controller on the real control plane, for end-to-end tests: a namespace with its own
// simulated kubelet, N reconcile and M readiness function instances (hono apps, called in-process
// through app.fetch with real CloudEvents), the event pump that feeds them, and an observer that
// runs the invariant checker over every Pod/NeoSet state it sees (SPEC §7).
import type { KubeConfig } from '@kubernetes/client-node';
import { createApp as createReconcile } from '../../functions/reconcile/app.ts';
import { createApp as createReadiness } from '../../functions/readiness/app.ts';
import { API_VERSION, KIND, LABEL_NEOSET_NAME } from '../../shared/api/names.ts';
import { createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { createTestNamespace, kubeConfig, kubectl, type KubectlResult } from '../cluster/harness.ts';
import { startKubelet, type KubeletOptions } from '../../dev/kubelet/kubelet.ts';
import { startPump, type Pump, type Sink } from '../../dev/bridge/pump.ts';
import { startObserver, type Observer } from './observer.ts';
import type { LifecycleSink } from '../../shared/events/lifecycle-sink.ts';
import type { AnalysisAddresses } from '../../shared/core/canary/addresses.ts';
import pino from 'pino';

export interface StackOptions {
  prefix: string;
  reconcileInstances?: number;
  readinessInstances?: number;
  /** Deliver each event this many times to each instance. */
  copies?: number;
  shuffleWindowMs?: number;
  resyncMs?: number;
  readyDelayMs?: number;
  startDelayMs?: number;
  /** The client of reconcile instance `index` (e.g. one whose reads lag); default the plain client. */
  reconcileClient?: (index: number, client: KubeClient) => KubeClient;
  /** The client of readiness instance `index` (e.g. one with its ServiceAccount's token); default the plain client. */
  readinessClient?: (index: number, client: KubeClient) => KubeClient;
  /** The functions' logger (default: silent, or LOG_LEVEL). */
  logger?: pino.Logger;
  /** Where the reconcile instances send lifecycle CloudEvents (SPEC §4.10, their $K_SINK). */
  sink?: LifecycleSink;
  /** The Prometheus addresses the reconcile instances' canary analyses may query (NEOSET_ANALYSIS_ADDRESSES); default none. */
  analysisAddresses?: AnalysisAddresses;
  /** The kubelet's storage (dev/kubelet/volumes.ts: claims bound and resized as a CSI driver would); off unless given. */
  volumes?: KubeletOptions['volumes'];
}

export interface Stack {
  namespace: string;
  kc: KubeConfig;
  client: KubeClient;
  pump: Pump;
  observer: Observer;
  kubectl(args: string[], input?: string): Promise<KubectlResult>;
  /**
   * Kills every function instance — the event pump (ApiServerSource, Broker, PingSource) and the
   * apps with their in-process bookkeeping — and, `downMs` later, starts new ones: a cold start of
   * the whole controller with nothing but the cluster to go on (SPEC §2 "no in-process memory").
   */
  restartFunctions(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const ns = await createTestNamespace(opts.prefix);
  const kc = kubeConfig();
  const client = createKubeClient(kc);
  const kubelet = await startKubelet({
    kubeConfig: kc,
    nodeName: `node-${ns.name}`,
    namespace: ns.name,
    readyDelayMs: opts.readyDelayMs ?? 300,
    startDelayMs: opts.startDelayMs ?? 100,
    volumes: opts.volumes,
  });
  const logger = opts.logger ?? pino({ level: process.env.LOG_LEVEL ?? 'silent' });
  const startFunctions = (): Pump => {
    const sinks: Sink[] = [];
    for (let i = 0; i < (opts.reconcileInstances ?? 1); i++) {
      const instanceClient = opts.reconcileClient?.(i, createKubeClient(kc)) ?? createKubeClient(kc);
      sinks.push({ target: createReconcile({ client: instanceClient, logger, recheck: () => {}, sink: opts.sink, analysisAddresses: opts.analysisAddresses }).fetch, kinds: ['NeoSet', 'Pod', 'ping'] });
    }
    for (let i = 0; i < (opts.readinessInstances ?? 1); i++) {
      const instanceClient = opts.readinessClient?.(i, createKubeClient(kc)) ?? createKubeClient(kc);
      sinks.push({ target: createReadiness({ client: instanceClient, logger }).fetch, kinds: ['Pod'] });
    }
    return startPump({
      kubeConfig: kc,
      namespace: ns.name,
      sinks,
      copies: opts.copies,
      shuffleWindowMs: opts.shuffleWindowMs,
      resyncMs: opts.resyncMs ?? 1000,
    });
  };
  let pump = startFunctions();
  const observer = startObserver(kc, ns.name);
  await Promise.all([pump.ready, observer.ready]);
  return {
    namespace: ns.name,
    kc,
    client,
    get pump() {
      return pump;
    },
    observer,
    kubectl: (args, input) => kubectl(['-n', ns.name, ...args], { input }),
    async restartFunctions(downMs) {
      await pump.stop();
      await new Promise((r) => setTimeout(r, downMs));
      pump = startFunctions();
      await pump.ready;
    },
    async stop() {
      await pump.stop();
      observer.stop();
      // The kubelet confirms the pods' deletions, so it outlives the namespace.
      await ns.cleanup({ wait: true }).catch(() => {});
      await kubelet.stop();
    },
  };
}

export interface NeoSetManifestOptions {
  name: string;
  replicas?: number;
  image?: string;
  spec?: Record<string, unknown>;
  updateStrategy?: Record<string, unknown>;
}

/** A NeoSet like the seeds' mysql example, with a readinessProbe on its container (Probe mode). */
export function neosetManifest(o: NeoSetManifestOptions): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: o.name },
    spec: {
      replicas: o.replicas ?? 5,
      selector: { matchLabels: { app: o.name } },
      serviceName: o.name,
      template: {
        metadata: { labels: { app: o.name } },
        spec: {
          containers: [{ name: 'main', image: o.image ?? 'mysql:8.0', readinessProbe: { tcpSocket: { port: 3306 } } }],
        },
      },
      updateStrategy: { maxUnavailable: 1, ...o.updateStrategy },
      ...o.spec,
    },
  };
}

export const podLabelSelector = (name: string) => `${LABEL_NEOSET_NAME}=${name}`;
export { paths };
