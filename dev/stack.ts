// The whole system on one machine, light (`npm run dev -- --bridge`; the default runs the real Knative,
// dev/knative-stack.ts): the test control plane and simulated kubelet,
// the NeoSet CRD, the three functions as child processes running as their knative/ ServiceAccounts,
// the admission webhooks registered over TLS, and the local event bridge — the event pump
// (dev/bridge) playing ApiServerSource (Resource mode, binary CloudEvents), Broker, Triggers (those of
// knative/eventing.yaml: their filters and delivery retry policy, concurrent delivery bounded by the
// Services' containerConcurrency) and PingSource (a resync tick every few seconds).
import { appendFileSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKubeClient } from '../shared/k8s/client.ts';
import { DEFAULT_RESYNC_SOURCE, RESYNC_SOURCE_VARIABLE, resyncSourceFromEnv } from '../shared/events/target.ts';
import { ANALYSIS_ADDRESSES_VARIABLE, analysisAddressesFromEnv } from '../shared/core/canary/addresses.ts';
import { createCa, issueServingCert, LOOPBACK_HOSTS } from './cluster/certs.ts';
import { PROCESS_GRACE_MS, stopInOrder, type Part } from './cluster/shutdown.ts';
import { freePorts } from './cluster/ports.ts';
import { installCrds } from './cluster/crd.ts';
import { startKubelet, type Kubelet } from './kubelet/kubelet.ts';
import { startPump, type Pump } from './bridge/pump.ts';
import { sinksFromTriggers } from './bridge/triggers.ts';
import { startFunction, type FunctionName, type RunningFunction } from './functions.ts';
import { applyIdentities, serviceAccountKubeconfig } from './identities.ts';
import { followFile, formatLogLine } from './log-view.ts';
import { kustomize } from './manifests.ts';
import { createRecorder, type Recorder } from './recorder.ts';
import { startHookReceiver } from './hook-receiver.ts';
import { localWebhooks, registerWebhooks } from './webhooks.ts';
import { connectCluster, deleteManifests, deleteManifestsNow, startLocalCluster, type Cluster } from './your-cluster.ts';

/** The analysis address of README "Automated canary" (unreachable on purpose: the rollout holds). */
export const DEV_ANALYSIS_ADDRESSES = 'http://prometheus.invalid:9090';

/**
 * The Prometheus addresses canary analyses may query in either mode (SPEC §2.3), comma-separated:
 * yours in NEOSET_ANALYSIS_ADDRESSES, else the one README "Automated canary" walks through.
 */
export const devAnalysisAddresses = () =>
  analysisAddressesFromEnv({ [ANALYSIS_ADDRESSES_VARIABLE]: process.env[ANALYSIS_ADDRESSES_VARIABLE] ?? DEV_ANALYSIS_ADDRESSES }).join(',');

export interface DevStackOptions {
  /** Working directory: kubeconfig, logs, certificates, the control plane's data. */
  dir: string;
  /** Local ports of the functions; 0 picks a free one. */
  ports: Record<FunctionName, number>;
  /** PingSource period of the bridge. */
  resyncMs: number;
  /** Save every event the bridge delivers into this directory. */
  recordDir?: string;
  /** Run the dist/ bundles (npm run build) instead of the sources. */
  bundled?: boolean;
  /** Print every invocation, not only those that wrote something. */
  verbose?: boolean;
  /** Run against this cluster (`--kubeconfig`, `--context`): no local control plane, no simulated kubelet. */
  cluster?: { kubeconfig: string; context?: string };
  /** The address the API server calls the admission webhooks at (default 127.0.0.1). */
  admissionHost?: string;
  /** Hand the lifecycle CloudEvents (SPEC §4.10) on to this hook owner too (`--hook-owner`). */
  hookOwner?: string;
  /** Progress and invocation lines. */
  log: (line: string) => void;
}

export interface DevStack {
  /** Admin kubeconfig: `<dir>/kubeconfig`. */
  kubeconfigPath: string;
  cluster: Cluster;
  functions: Record<FunctionName, RunningFunction>;
  pump: Pump;
  recorder?: Recorder;
  logsDir: string;
  /** Resolves, with what happened, when a part of the stack dies on its own. */
  failed: Promise<string>;
  stop(): Promise<void>;
  /** For an exit that cannot wait for stop(): undoes, synchronously, what would outlive the process. */
  stopNow(): void;
}

const NODE_NAME = 'neoset-dev';

export async function startDevStack(opts: DevStackOptions): Promise<DevStack> {
  const { dir, log } = opts;
  const logsDir = join(dir, 'logs');
  const secretsDir = join(dir, 'secrets');
  const kubeconfigPath = join(dir, 'kubeconfig');
  // A fresh cluster and fresh logs each time (the log views follow the files from their start).
  for (const old of ['cluster', 'logs']) rmSync(join(dir, old), { recursive: true, force: true });
  for (const d of [dir, logsDir, secretsDir]) mkdirSync(d, { recursive: true, mode: 0o700 });
  // Tokens and keys go with the stack; the logs stay for a post-mortem.
  const parts: Part[] = [{ name: 'secrets', stop: () => rmSync(secretsDir, { recursive: true, force: true }) }];
  // Last started, first stopped: nothing should see the API server vanish while still working. Each
  // within a bounded time (dev/cluster/shutdown.ts), whatever state the API server is in.
  const stop = () => stopInOrder(parts.splice(0).reverse(), log);

  try {
    const cluster = opts.cluster
      ? await connectCluster(opts.cluster.kubeconfig, opts.cluster.context, join(secretsDir, 'admin.kubeconfig'))
      : await startLocalCluster(join(dir, 'cluster'), (line) => log(`control plane: ${line}`));
    if (cluster.local) parts.push(cluster.local.part);
    else log(`your cluster: kube-apiserver ${cluster.version} at ${cluster.server} (no local control plane, no simulated kubelet)`);
    const kc = cluster.kubeConfig();
    const crds = await installCrds(kc);
    log(`installed CRD ${crds.join(', ')}`);

    // The functions' identities and RBAC, straight from knative/.
    const manifests = kustomize();
    await applyIdentities(cluster.kubeconfigPath, manifests);
    const admin = createKubeClient(kc);
    const kubeconfigOf = (serviceAccount: string) => serviceAccountKubeconfig(admin, cluster.entry, serviceAccount, secretsDir);
    const [reconcileKc, readinessKc, admissionKc] = await Promise.all(['neoset-reconcile', 'neoset-readiness', 'neoset-admission'].map(kubeconfigOf));
    log('functions run as the ServiceAccounts neoset-reconcile, neoset-readiness, neoset-admission (knative/rbac.yaml, knative/admission-webhooks.yaml)');

    if (cluster.local) {
      // Your cluster has kubelets of its own.
      const kubeletLog = join(logsDir, 'kubelet.log');
      const kubelet: Kubelet = await startKubelet({
        kubeConfig: kc,
        nodeName: NODE_NAME,
        // §4.12: StorageClass `standard`, claims bound and resized as a CSI driver would (volumes.ts).
        volumes: {},
        log: (line) => appendFileSync(kubeletLog, `${new Date().toISOString()} ${line}\n`),
      });
      parts.push({ name: 'simulated kubelet', stop: () => kubelet.stop() });
      log(`simulated kubelet: node ${NODE_NAME}, all namespaces (log ${kubeletLog})`);
    }

    // The API server calls webhooks only over https: a serving certificate for the address it calls
    // (127.0.0.1 unless --admission-host says otherwise) from a dev CA.
    const admissionHost = opts.admissionHost ?? '127.0.0.1';
    const ca = await createCa('neoset-dev-ca');
    const serving = await issueServingCert(ca, [...new Set([admissionHost, ...LOOPBACK_HOSTS])]);
    const certFile = join(secretsDir, 'admission.crt');
    const keyFile = join(secretsDir, 'admission.key');
    writeFileSync(certFile, serving.certPem, { mode: 0o600 });
    writeFileSync(keyFile, serving.keyPem, { mode: 0o600 });

    // $K_SINK of the reconcile function (SPEC §4.10; a SinkBinding sets it on Knative): a local
    // receiver that prints each lifecycle CloudEvent, and hands it on to --hook-owner.
    const hooks = await startHookReceiver({ port: 0, forwardTo: opts.hookOwner, log });
    parts.push({ name: 'hook receiver', stop: () => hooks.stop() });
    log(`hook events (K_SINK): ${hooks.url}${opts.hookOwner ? `, handed on to ${opts.hookOwner}` : ''}`);

    // The PingSource the bridge's ticks come from, and the one reconcile takes ticks from (SPEC §2.3).
    const resyncSource = resyncSourceFromEnv();
    // For reconcile and admission alike.
    const analysis = { [ANALYSIS_ADDRESSES_VARIABLE]: devAnalysisAddresses() };
    log(`canary analyses may query: ${analysis[ANALYSIS_ADDRESSES_VARIABLE] || 'no Prometheus address'} (${ANALYSIS_ADDRESSES_VARIABLE})`);
    const common = (name: FunctionName, kubeconfig: string) => ({ name, kubeconfig, port: opts.ports[name], logPath: join(logsDir, `${name}.log`), bundled: opts.bundled });
    const started = await Promise.allSettled([
      // METRICS_PORT: the series that name NeoSets are served there only (SPEC §2.5), as knative/ sets it.
      startFunction({ ...common('reconcile', reconcileKc), metricsPort: (await freePorts(1))[0], env: { K_SINK: hooks.url, [RESYNC_SOURCE_VARIABLE]: resyncSource, ...analysis } }),
      startFunction({ ...common('readiness', readinessKc), metricsPort: (await freePorts(1))[0] }),
      // The local API server presents a client certificate to webhooks (control-plane.ts) and admission
      // takes no other caller; your cluster's API server is not ours to configure (SPEC §2.3).
      startFunction({ ...common('admission', admissionKc), tls: { certFile, keyFile, caPem: ca.certPem, clientCaFile: cluster.local?.controlPlane.webhookClientCaPath }, host: admissionHost, metricsPort: (await freePorts(1))[0], env: analysis }),
    ]);
    const running = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    parts.push({ name: 'functions', stop: () => Promise.all(running.map((fn) => fn.process.stop(PROCESS_GRACE_MS))).then(() => {}), budgetMs: 2 * PROCESS_GRACE_MS });
    const failure = started.find((s) => s.status === 'rejected');
    if (failure) throw (failure as PromiseRejectedResult).reason;
    const [reconcile, readiness, admission] = started.map((s) => (s as PromiseFulfilledResult<RunningFunction>).value);
    for (const fn of [reconcile, readiness, admission]) log(`${fn.name}: ${fn.url} (pid ${fn.process.pid}, metrics ${fn.metricsUrl}, log ${fn.process.logPath})`);
    const unfollow = [reconcile, readiness, admission].map((fn) =>
      followFile(fn.process.logPath, (line) => {
        const text = formatLogLine(fn.name, line, opts.verbose);
        if (text) log(text);
      }),
    );
    parts.push({ name: 'log views', stop: () => unfollow.forEach((f) => f()) });

    const webhooks = localWebhooks(manifests, admission.url, ca.certPem);
    await registerWebhooks(cluster.kubeconfigPath, webhooks);
    // On your cluster the registration must go with us: under failurePolicy Fail a webhook that no
    // longer answers refuses every NeoSet write. (The local control plane goes away as a whole.)
    const deregister = () => !cluster.local && deleteManifestsNow(cluster.kubeconfigPath, webhooks);
    if (!cluster.local) parts.push({ name: 'webhook registration', stop: () => deleteManifests(cluster.kubeconfigPath, webhooks), budgetMs: 3000 });
    log(`admission webhooks registered: ${admission.url}/mutate, ${admission.url}/validate${cluster.local ? '' : ' (removed again when this stops)'}`);

    const recorder = opts.recordDir ? createRecorder(opts.recordDir) : undefined;
    // The pump's ticks carry resyncSource (NEOSET_RESYNC_SOURCE may name another PingSource than the
    // manifests'): the resync Trigger's source filter follows it, as the operator's Trigger would.
    const sinks = sinksFromTriggers(manifests, { 'neoset-reconcile': `${reconcile.url}/`, 'neoset-readiness': `${readiness.url}/` }).map((sink) =>
      sink.source === DEFAULT_RESYNC_SOURCE ? { ...sink, source: resyncSource } : sink,
    );
    const pump = startPump({
      kubeConfig: kc,
      sinks,
      resyncMs: opts.resyncMs,
      resyncSource,
      record: recorder ? (event) => recorder.record(event) : undefined,
      log: (line) => log(`bridge: ${line}`),
    });
    parts.push({ name: 'event bridge', stop: () => pump.stop() });
    await pump.ready;
    const pods = sinks.find((s) => s.kinds.includes('Pod'))!;
    log(
      `event bridge: the ${sinks.length} Triggers of knative/eventing.yaml — NeoSets and labelled Pods → reconcile, Pods → readiness; ` +
        `concurrent, ≤ ${pods.parallelism ?? 50} in flight per function; retry ${pods.delivery!.retry}, ${pods.delivery!.backoffPolicy} from ${pods.delivery!.backoffDelayMs} ms; ` +
        `resync every ${opts.resyncMs} ms${recorder ? `, recording into ${recorder.dir}` : ''}`,
    );

    copyFileSync(cluster.kubeconfigPath, kubeconfigPath);
    parts.unshift({ name: 'kubeconfig', stop: () => rmSync(kubeconfigPath, { force: true }) });
    const failed = Promise.race([
      ...(cluster.local ? [cluster.local.exited] : []),
      ...[reconcile, readiness, admission].map(async (fn) => `${fn.name} exited (${await fn.process.exited}); log ${fn.process.logPath}:\n${fn.process.tail(20)}`),
    ]);
    return {
      kubeconfigPath,
      cluster,
      functions: { reconcile, readiness, admission },
      pump,
      recorder,
      logsDir,
      failed,
      stop,
      stopNow() {
        if (parts.length > 0) deregister();
        rmSync(kubeconfigPath, { force: true });
        rmSync(secretsDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
