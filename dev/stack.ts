// The whole system on one machine (`npm run dev`): the test control plane and simulated kubelet,
// the NeoSet CRD, the three functions as child processes running as their knative/ ServiceAccounts,
// the admission webhooks registered over TLS, and the local event bridge — the event pump
// (dev/bridge) playing ApiServerSource (Resource mode, binary CloudEvents), Broker, Triggers (those of
// knative/eventing.yaml: their filters and delivery retry policy, concurrent delivery bounded by the
// Services' containerConcurrency) and PingSource (a resync tick every few seconds).
import { appendFileSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKubeClient } from '../shared/k8s/client.ts';
import { createCa, issueServingCert, LOOPBACK_HOSTS } from './cluster/certs.ts';
import { startControlPlane, type ControlPlane } from './cluster/control-plane.ts';
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
import { localWebhooks, registerWebhooks } from './webhooks.ts';

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
  /** Progress and invocation lines. */
  log: (line: string) => void;
}

export interface DevStack {
  /** Admin kubeconfig: `<dir>/kubeconfig`. */
  kubeconfigPath: string;
  controlPlane: ControlPlane;
  functions: Record<FunctionName, RunningFunction>;
  pump: Pump;
  recorder?: Recorder;
  logsDir: string;
  /** Resolves, with what happened, when a part of the stack dies on its own. */
  failed: Promise<string>;
  stop(): Promise<void>;
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
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(secretsDir, { recursive: true, force: true })];
  const stop = async () => {
    // Last started, first stopped: nothing should see the API server vanish while still working.
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        log(`stop: ${(error as Error).message}`);
      }
    }
    cleanups.length = 0;
  };

  try {
    const controlPlane = await startControlPlane({ dir: join(dir, 'cluster'), log: (line) => log(`control plane: ${line}`) });
    cleanups.push(() => controlPlane.stop());
    const kc = controlPlane.kubeConfig();
    const crds = await installCrds(kc);
    log(`installed CRD ${crds.join(', ')}`);

    // The functions' identities and RBAC, straight from knative/.
    const manifests = kustomize();
    applyIdentities(controlPlane.kubeconfigPath, manifests);
    const admin = createKubeClient(kc);
    const kubeconfigOf = (serviceAccount: string) => serviceAccountKubeconfig(admin, controlPlane.server, controlPlane.caPem, serviceAccount, secretsDir);
    const [reconcileKc, readinessKc, admissionKc] = await Promise.all(['neoset-reconcile', 'neoset-readiness', 'neoset-admission'].map(kubeconfigOf));
    log('functions run as the ServiceAccounts neoset-reconcile, neoset-readiness, neoset-admission (knative/rbac.yaml, knative/admission-webhooks.yaml)');

    const kubeletLog = join(logsDir, 'kubelet.log');
    const kubelet: Kubelet = await startKubelet({
      kubeConfig: kc,
      nodeName: NODE_NAME,
      log: (line) => appendFileSync(kubeletLog, `${new Date().toISOString()} ${line}\n`),
    });
    cleanups.push(() => kubelet.stop());
    log(`simulated kubelet: node ${NODE_NAME}, all namespaces (log ${kubeletLog})`);

    // The API server calls webhooks only over https: a serving certificate for 127.0.0.1 from a dev CA.
    const ca = await createCa('neoset-dev-ca');
    const serving = await issueServingCert(ca, LOOPBACK_HOSTS);
    const certFile = join(secretsDir, 'admission.crt');
    const keyFile = join(secretsDir, 'admission.key');
    writeFileSync(certFile, serving.certPem, { mode: 0o600 });
    writeFileSync(keyFile, serving.keyPem, { mode: 0o600 });

    const common = (name: FunctionName, kubeconfig: string) => ({ name, kubeconfig, port: opts.ports[name], logPath: join(logsDir, `${name}.log`), bundled: opts.bundled });
    const started = await Promise.allSettled([
      startFunction(common('reconcile', reconcileKc)),
      startFunction(common('readiness', readinessKc)),
      // Like knative/admission.yaml: https for the API server, /metrics on a plain-http port for Prometheus.
      startFunction({ ...common('admission', admissionKc), tls: { certFile, keyFile, caPem: ca.certPem }, metricsPort: (await freePorts(1))[0] }),
    ]);
    for (const s of started) if (s.status === 'fulfilled') cleanups.push(() => s.value.process.stop());
    const failure = started.find((s) => s.status === 'rejected');
    if (failure) throw (failure as PromiseRejectedResult).reason;
    const [reconcile, readiness, admission] = started.map((s) => (s as PromiseFulfilledResult<RunningFunction>).value);
    for (const fn of [reconcile, readiness, admission]) log(`${fn.name}: ${fn.url} (pid ${fn.process.pid}, log ${fn.process.logPath})`);
    const unfollow = [reconcile, readiness, admission].map((fn) =>
      followFile(fn.process.logPath, (line) => {
        const text = formatLogLine(fn.name, line, opts.verbose);
        if (text) log(text);
      }),
    );
    cleanups.push(() => unfollow.forEach((f) => f()));

    registerWebhooks(controlPlane.kubeconfigPath, localWebhooks(manifests, admission.url, ca.certPem));
    log(`admission webhooks registered: ${admission.url}/mutate, ${admission.url}/validate`);

    const recorder = opts.recordDir ? createRecorder(opts.recordDir) : undefined;
    const sinks = sinksFromTriggers(manifests, { 'neoset-reconcile': `${reconcile.url}/`, 'neoset-readiness': `${readiness.url}/` });
    const pump = startPump({
      kubeConfig: kc,
      sinks,
      resyncMs: opts.resyncMs,
      record: recorder ? (event) => recorder.record(event) : undefined,
      log: (line) => log(`bridge: ${line}`),
    });
    cleanups.push(() => pump.stop());
    await pump.ready;
    const pods = sinks.find((s) => s.kinds.includes('Pod'))!;
    log(
      `event bridge: the ${sinks.length} Triggers of knative/eventing.yaml — NeoSets and labelled Pods → reconcile, Pods → readiness; ` +
        `concurrent, ≤ ${pods.parallelism ?? 50} in flight per function; retry ${pods.delivery!.retry}, ${pods.delivery!.backoffPolicy} from ${pods.delivery!.backoffDelayMs} ms; ` +
        `resync every ${opts.resyncMs} ms${recorder ? `, recording into ${recorder.dir}` : ''}`,
    );

    copyFileSync(controlPlane.kubeconfigPath, kubeconfigPath);
    cleanups.unshift(() => rmSync(kubeconfigPath, { force: true }));
    const failed = Promise.race([
      controlPlane.exited,
      ...[reconcile, readiness, admission].map(async (fn) => `${fn.name} exited (${await fn.process.exited}); log ${fn.process.logPath}:\n${fn.process.tail(20)}`),
    ]);
    return {
      kubeconfigPath,
      controlPlane,
      functions: { reconcile, readiness, admission },
      pump,
      recorder,
      logsDir,
      failed,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
