// A real Kubernetes control plane for tests and local development (SPEC §7): etcd, kube-apiserver
// and kube-controller-manager as child processes on free loopback ports, with a generated PKI.
// No kubelet, scheduler or cloud: pods are run by the simulated kubelet (dev/kubelet).
import { KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { resolveBinaries } from './binaries.ts';
import { createClusterPki, issueClientCert, issueServingCert, LOOPBACK_HOSTS, type ClusterPki } from './certs.ts';
import { kubeconfigYaml } from './kubeconfig.ts';
import { freePorts } from './ports.ts';
import { probe, waitForHealthy, type TlsClient } from './probe.ts';
import { startProcess, type ManagedProcess } from './processes.ts';
import { DEFAULT_ADDRESS_PLAN, kubernetesServiceIP, type AddressPlan } from './address-plan.ts';
import { claimServiceNetwork, type ServiceNetworkClaim } from './service-network.ts';
import { PROCESS_GRACE_MS } from './shutdown.ts';

export interface ControlPlaneOptions {
  /** Working directory (certs, etcd data, logs, kubeconfig). Default: a new temporary directory. */
  dir?: string;
  /** Run kube-controller-manager (garbage collector, namespaces, service accounts). Default true. */
  controllerManager?: boolean;
  /** Progress lines. Default: none. */
  log?: (line: string) => void;
  /**
   * Services that route (services.ts): kube-apiserver binds and advertises API_ADDRESS on an
   * interface of its own (service-network.ts) instead of 127.0.0.1, so that the `kubernetes` Service
   * gets it as its endpoint and pods reach it; the service range is SERVICE_CIDR (10.96.0.0/12, the
   * cluster DNS at 10.96.0.10); admission webhooks and aggregated APIs named by Service are dialled at
   * their endpoints (--enable-aggregator-routing). Needs root. Default off: loopback as before. An
   * AddressPlan (address-plan.ts) moves the ranges and the API address off the defaults.
   */
  serviceNetwork?: boolean | AddressPlan;
  /** kube-controller-manager loops to run besides CONTROLLERS, e.g. WORKLOAD_CONTROLLERS. */
  extraControllers?: string[];
  /**
   * Audit pod patches and updates at Request level (AUDIT_POD_REQUESTS): each entry carries the body
   * sent (`requestObject`), so a test can tell which patch set which image. Default off: pods at
   * Metadata level like the rest.
   */
  auditPodRequests?: boolean;
}

/** The processes a test may stop and start again on their own, under the others (stopComponent). */
export type Component = 'etcd' | 'kube-apiserver';

export interface ControlPlane {
  dir: string;
  /** https URL of kube-apiserver. */
  server: string;
  /** Admin kubeconfig (system:masters, credentials embedded). */
  kubeconfigPath: string;
  /** The API server's audit log (JSON lines): every write to pods, revisions and NeoSets. */
  auditLogPath: string;
  /**
   * The CA of the client certificate kube-apiserver presents to every admission webhook it calls
   * (its --admission-control-config-file): what an admission server verifies callers against
   * (TLS_CLIENT_CA_FILE).
   */
  webhookClientCaPath: string;
  /** kube-apiserver gitVersion from /version, e.g. "v1.37.2". */
  version: string;
  /** etcd server version from its /version, e.g. "3.7.0". */
  etcdVersion: string;
  caPem: string;
  /** Log file of each process, by process name. */
  logs: Record<string, string>;
  /**
   * Resolves when any of the processes exits (after stop(), or on a crash) with a line saying which;
   * not for a stopComponent.
   */
  exited: Promise<string>;
  /**
   * Stops one process, leaving the others running: `kill` SIGKILLs it (a crash), else SIGTERM with
   * the short grace. Its ports, data directory, certificates and log file are kept for startComponent.
   */
  stopComponent(name: Component, opts?: { kill?: boolean }): Promise<void>;
  /** Starts a stopped process again with the flags it first ran with; resolves once it is healthy. */
  startComponent(name: Component): Promise<void>;
  /** A new admin KubeConfig for client-node. */
  kubeConfig(): KubeConfig;
  /** Stops every process; removes `dir` unless KEEP_CLUSTER_DIR is set. */
  stop(): Promise<void>;
}

/**
 * kube-controller-manager loops we run. Not podgc, node-lifecycle or taint-eviction: with no real
 * nodes they would delete or evict the simulated kubelet's pods. pvc-protection is needed because
 * admission puts its finalizer on every PVC (a deleted PVC would otherwise never go away).
 */
export const CONTROLLERS = [
  'garbage-collector-controller',
  'namespace-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  'persistentvolumeclaim-protection-controller',
  'persistentvolume-protection-controller',
  'endpointslice-controller',
  // ResourceQuota admission refuses every pod while a quota's status is unknown: the controller fills it.
  'resourcequota-controller',
];

/** Deployments and their ReplicaSets (e.g. CoreDNS's, services.ts): not run unless asked for. */
export const WORKLOAD_CONTROLLERS = ['deployment-controller', 'replicaset-controller'];

const SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';
const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const KUBERNETES_SERVICE_NAMES = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];
const STARTUP_TIMEOUT_MS = 120_000;

export interface Files {
  ca: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  kcmCert: string;
  kcmKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  kubeconfig: string;
  kcmKubeconfig: string;
  auditPolicy: string;
  auditLog: string;
  webhookClientCa: string;
  webhookKubeconfig: string;
  admissionConfig: string;
  kubeletClientCert: string;
  kubeletClientKey: string;
}

/** Where startControlPlane keeps its PKI, kubeconfigs and logs under `dir`. */
export function filesIn(dir: string): Files {
  const at = (name: string) => join(dir, name);
  return {
    ca: at('pki/ca.crt'),
    caKey: at('pki/ca.key'),
    apiserverCert: at('pki/apiserver.crt'),
    apiserverKey: at('pki/apiserver.key'),
    kcmCert: at('pki/kube-controller-manager.crt'),
    kcmKey: at('pki/kube-controller-manager.key'),
    serviceAccountKey: at('pki/sa.key'),
    serviceAccountPub: at('pki/sa.pub'),
    kubeconfig: at('kubeconfig'),
    kcmKubeconfig: at('kube-controller-manager.kubeconfig'),
    auditPolicy: at('audit-policy.yaml'),
    auditLog: at('audit.log'),
    webhookClientCa: at('pki/webhook-client-ca.crt'),
    webhookKubeconfig: at('webhook-client.kubeconfig'),
    admissionConfig: at('admission-config.yaml'),
    kubeletClientCert: at('pki/apiserver-kubelet-client.crt'),
    kubeletClientKey: at('pki/apiserver-kubelet-client.key'),
  };
}

/**
 * kube-apiserver's client credentials for admission webhooks (SPEC §2.3): an AdmissionConfiguration
 * whose webhook plugins read a kubeconfig of users named after the webhook's host[:port] — here `*`,
 * the default entry, because the webhooks are registered later on ports not known yet. It is read
 * once, at start. Presenting a certificate to a webhook that does not ask for one changes nothing.
 */
export function admissionConfiguration(webhookKubeconfig: string): string {
  const plugin = (name: string) => [
    `  - name: ${name}`,
    '    configuration:',
    '      apiVersion: apiserver.config.k8s.io/v1',
    '      kind: WebhookAdmissionConfiguration',
    `      kubeConfigFile: ${JSON.stringify(webhookKubeconfig)}`,
  ];
  return ['apiVersion: apiserver.config.k8s.io/v1', 'kind: AdmissionConfiguration', 'plugins:', ...plugin('ValidatingAdmissionWebhook'), ...plugin('MutatingAdmissionWebhook'), ''].join('\n');
}

export function webhookClientKubeconfig(client: { certPem: string; keyPem: string }): string {
  const b64 = (pem: string) => Buffer.from(pem).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'users:',
    "  - name: '*'",
    '    user:',
    `      client-certificate-data: ${b64(client.certPem)}`,
    `      client-key-data: ${b64(client.keyPem)}`,
    '',
  ].join('\n');
}

/**
 * The API server's own record of every write to NeoSets, pods and revisions (Metadata level): the
 * order in which writes really landed, e.g. that a claim (neosets/status) precedes the pod writes it
 * claims (SPEC §2.0). Reads are left out: there are many and no test needs them.
 */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [create, update, patch, delete]
    resources:
      - group: ""
        resources: [pods, pods/status, pods/resize]
      - group: apps
        resources: [controllerrevisions]
      - group: neo.io
        resources: [neosets, neosets/status]
  - level: None
`;

/**
 * Put before AUDIT_POLICY's rules (the first rule that matches decides): pod patches and updates with
 * their bodies, e.g. the strategic merge patch that sets a container's image (ControlPlaneOptions.auditPodRequests).
 */
const AUDIT_POD_REQUESTS = `  - level: Request
    verbs: [update, patch]
    resources:
      - group: ""
        resources: [pods]
`;

export function auditPolicy(podRequests = false): string {
  return podRequests ? AUDIT_POLICY.replace('rules:\n', `rules:\n${AUDIT_POD_REQUESTS}`) : AUDIT_POLICY;
}

async function writePki(files: Files, pki: ClusterPki, server: string, policy: string): Promise<void> {
  // kube-controller-manager serves /healthz with a certificate of our CA, so the probe can verify it.
  const [kcmServing, kubeletClient] = await Promise.all([
    issueServingCert(pki.ca, LOOPBACK_HOSTS),
    issueClientCert(pki.ca, { commonName: KUBELET_CLIENT_USER }),
  ]);
  const admin = kubeconfigYaml({ server, caPem: pki.ca.certPem, client: pki.admin, user: 'admin' });
  const kcm = kubeconfigYaml({ server, caPem: pki.ca.certPem, client: pki.controllerManager, user: 'system:kube-controller-manager' });
  const contents: [string, string][] = [
    [files.ca, pki.ca.certPem],
    [files.caKey, pki.ca.keyPem],
    [files.apiserverCert, pki.apiserver.certPem],
    [files.apiserverKey, pki.apiserver.keyPem],
    [files.kcmCert, kcmServing.certPem],
    [files.kcmKey, kcmServing.keyPem],
    [files.serviceAccountKey, pki.serviceAccount.privateKeyPem],
    [files.serviceAccountPub, pki.serviceAccount.publicKeyPem],
    [files.kubeconfig, admin],
    [files.kcmKubeconfig, kcm],
    [files.auditPolicy, policy],
    [files.webhookClientCa, pki.webhookClientCa.certPem],
    [files.webhookKubeconfig, webhookClientKubeconfig(pki.webhookClient)],
    [files.admissionConfig, admissionConfiguration(files.webhookKubeconfig)],
    [files.kubeletClientCert, kubeletClient.certPem],
    [files.kubeletClientKey, kubeletClient.keyPem],
  ];
  await mkdir(dirname(files.ca), { recursive: true, mode: 0o700 });
  await Promise.all(contents.map(([path, content]) => writeFile(path, content, { mode: 0o600 })));
}

function etcdArgs(dir: string, clientPort: number, peerPort: number): string[] {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return [
    '--name=neoset',
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=neoset=${peer}`,
    // Throwaway data: durability buys nothing and fsync dominates write latency on a busy disk.
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

/** What kube-apiserver's flags differ in when Services route (ControlPlaneOptions.serviceNetwork). */
function serviceNetworkArgs({ address, plan }: ServiceNetworkClaim): string[] {
  return [
    `--bind-address=${address}`,
    `--advertise-address=${address}`,
    `--service-cluster-ip-range=${plan.serviceCIDR}`,
    // The `kubernetes` Service's endpoint is the advertise address, kept by the lease reconciler.
    '--endpoint-reconciler-type=lease',
    // Webhooks and aggregated APIs by Service: their endpoints' pod IPs, which the host routes to.
    '--enable-aggregator-routing=true',
  ];
}

function apiserverArgs(files: Files, port: number, etcdPort: number, serviceNetwork?: ServiceNetworkClaim): string[] {
  const loopback = [
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
    // The "kubernetes" Service's endpoints would be 127.0.0.1, which Endpoints validation rejects.
    '--endpoint-reconciler-type=none',
  ];
  return [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    ...(serviceNetwork ? serviceNetworkArgs(serviceNetwork) : loopback),
    `--secure-port=${port}`,
    `--tls-cert-file=${files.apiserverCert}`,
    `--tls-private-key-file=${files.apiserverKey}`,
    `--client-ca-file=${files.ca}`,
    '--authorization-mode=Node,RBAC',
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
    `--service-account-key-file=${files.serviceAccountPub}`,
    `--service-account-signing-key-file=${files.serviceAccountKey}`,
    '--allow-privileged=true',
    '--profiling=false',
    `--audit-policy-file=${files.auditPolicy}`,
    `--audit-log-path=${files.auditLog}`,
    '--audit-log-format=json',
    `--admission-control-config-file=${files.admissionConfig}`,
    // pods/log, exec and port-forward call the node's kubelet (dev/kubelet/log-server.ts) with this
    // certificate, at the address a simulated kubelet serves on: its ExternalIP (127.0.0.1), else the
    // Hostname (a simulated node's name, which resolves nowhere: a quick error, not a dial that hangs).
    // Its self-signed serving certificate is not verified (no --kubelet-certificate-authority).
    `--kubelet-client-certificate=${files.kubeletClientCert}`,
    `--kubelet-client-key=${files.kubeletClientKey}`,
    '--kubelet-preferred-address-types=ExternalIP,Hostname,InternalDNS,InternalIP,ExternalDNS',
  ];
}

/** The user of kube-apiserver's kubelet client certificate. */
export const KUBELET_CLIENT_USER = 'kube-apiserver-kubelet-client';

/**
 * What the kubelet asks of the API server's authorizer for a log request (nodes/proxy, by
 * SubjectAccessReview): granted to the API server's certificate by the bootstrap role kubeadm binds
 * it to, system:kubelet-api-admin. Idempotent (a restart of the API server finds it in etcd).
 */
async function allowKubeletClient(kubeconfig: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  try {
    await kc.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
      body: {
        metadata: { name: KUBELET_CLIENT_USER },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:kubelet-api-admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: KUBELET_CLIENT_USER }],
      },
    });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

export function controllerManagerArgs(files: Files, port: number, controllers = CONTROLLERS, kubeconfig = files.kcmKubeconfig): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    // Each loop runs as its own kube-system ServiceAccount, bound by RBAC's bootstrap controller roles
    // (as kubeadm does); system:kube-controller-manager alone may not, e.g., publish kube-root-ca.crt.
    '--use-service-account-credentials=true',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--tls-cert-file=${files.kcmCert}`,
    `--tls-private-key-file=${files.kcmKey}`,
    '--leader-elect=false',
    `--controllers=${controllers.join(',')}`,
    `--root-ca-file=${files.ca}`,
    `--service-account-private-key-file=${files.serviceAccountKey}`,
    '--profiling=false',
  ];
}

async function versionOf(url: string, tls: TlsClient | undefined, field: string): Promise<string> {
  const answer = await probe(url, tls);
  if (answer?.status !== 200) throw new Error(`GET ${url}: ${answer ? answer.status : 'no answer'}`);
  return String(JSON.parse(answer.body)[field]);
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'neoset-control-plane-')));
  await mkdir(dir, { recursive: true });
  const [binaries, pki, ports] = await Promise.all([resolveBinaries(), createClusterPki(), freePorts(4)]);
  const [etcdPort, etcdPeerPort, apiserverPort, kcmPort] = ports;
  const serviceNetwork = opts.serviceNetwork ? await claimServiceNetwork(log, opts.serviceNetwork === true ? DEFAULT_ADDRESS_PLAN : opts.serviceNetwork) : undefined;
  const server = `https://${serviceNetwork?.address ?? '127.0.0.1'}:${apiserverPort}`;
  const files = filesIn(dir);
  try {
    if (serviceNetwork) {
      // Pods verify the API server as kubernetes.default.svc (their ca.crt) at its ClusterIP.
      pki.apiserver = await issueServingCert(pki.ca, [...LOOPBACK_HOSTS, serviceNetwork.address, kubernetesServiceIP(serviceNetwork.plan), ...KUBERNETES_SERVICE_NAMES]);
    }
    await writePki(files, pki, server, auditPolicy(opts.auditPodRequests));
  } catch (error) {
    await serviceNetwork?.release();
    throw error;
  }
  const admin: TlsClient = { ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem };
  const processes = new Map<string, ManagedProcess>();
  const stopAll = async () => {
    // Controllers first, storage last: nothing should see etcd vanish while still serving. A short
    // grace (shutdown.ts): the data is thrown away, and after a terminal's Ctrl-C etcd is gone first,
    // so kube-apiserver's drain would only wait out its request timeout.
    await Promise.all([processes.get('kube-controller-manager')?.stop(PROCESS_GRACE_MS), processes.get('kube-apiserver')?.stop(PROCESS_GRACE_MS)]);
    await processes.get('etcd')?.stop(PROCESS_GRACE_MS);
    await serviceNetwork?.release();
  };
  // The first exit of a process that was not stopped on purpose (stopComponent) is `exited`.
  let reportExit: (line: string) => void = () => {};
  const exited = new Promise<string>((resolve) => (reportExit = resolve));
  const stoppedOnPurpose = new Set<ManagedProcess>();
  const spawnLogged = (name: string, binary: string, args: string[]) => {
    const child = startProcess(name, binary, args, join(dir, `${name}.log`));
    processes.set(name, child);
    void child.exited.then((code) => stoppedOnPurpose.has(child) || reportExit(`${name} exited (${code}); log ${child.logPath}`));
    log(`started ${name} (pid ${child.pid}), log ${child.logPath}`);
    return child;
  };
  const components: Record<Component, { binary: string; args: string[]; health: string; tls?: TlsClient }> = {
    etcd: { binary: binaries.etcd, args: etcdArgs(dir, etcdPort, etcdPeerPort), health: `http://127.0.0.1:${etcdPort}/health` },
    'kube-apiserver': { binary: binaries.kubeApiserver, args: apiserverArgs(files, apiserverPort, etcdPort, serviceNetwork), health: `${server}/readyz`, tls: admin },
  };
  const launch = async (name: Component) => {
    const { binary, args, health, tls } = components[name];
    await waitForHealthy(spawnLogged(name, binary, args), health, tls, STARTUP_TIMEOUT_MS);
  };
  try {
    await launch('etcd');
    await launch('kube-apiserver');
    await allowKubeletClient(files.kubeconfig);
    if (opts.controllerManager ?? true) {
      const controllers = [...CONTROLLERS, ...(opts.extraControllers ?? [])];
      const kcm = spawnLogged('kube-controller-manager', binaries.kubeControllerManager, controllerManagerArgs(files, kcmPort, controllers));
      await waitForHealthy(kcm, `https://127.0.0.1:${kcmPort}/healthz`, { ca: pki.ca.certPem }, STARTUP_TIMEOUT_MS);
    }
    const [version, etcdVersion] = await Promise.all([
      versionOf(`${server}/version`, admin, 'gitVersion'),
      versionOf(`http://127.0.0.1:${etcdPort}/version`, undefined, 'etcdserver'),
    ]);
    log(`control plane ready in ${Date.now() - started} ms: kube-apiserver ${version} (etcd ${etcdVersion}) at ${server}`);
    return {
      dir,
      server,
      kubeconfigPath: files.kubeconfig,
      auditLogPath: files.auditLog,
      webhookClientCaPath: files.webhookClientCa,
      version,
      etcdVersion,
      caPem: pki.ca.certPem,
      logs: Object.fromEntries([...processes.values()].map((p) => [p.name, p.logPath])),
      exited,
      kubeConfig() {
        const kc = new KubeConfig();
        kc.loadFromFile(files.kubeconfig);
        return kc;
      },
      async stopComponent(name, { kill = false } = {}) {
        const running = processes.get(name);
        if (!running) throw new Error(`${name} is not one of this control plane's processes`);
        stoppedOnPurpose.add(running);
        await (kill ? running.kill() : running.stop(PROCESS_GRACE_MS));
        log(`${kill ? 'killed' : 'stopped'} ${name} (pid ${running.pid})`);
      },
      async startComponent(name) {
        if (processes.get(name)?.hasExited() === false) throw new Error(`${name} is running`);
        await launch(name);
      },
      async stop() {
        await stopAll();
        if (!process.env.KEEP_CLUSTER_DIR) await rm(dir, { recursive: true, force: true });
        else log(`kept ${dir} (KEEP_CLUSTER_DIR)`);
      },
    };
  } catch (error) {
    await stopAll();
    // The directory stays: its logs are what explains the failure.
    const logs = [...processes.values()].map((p) => `  ${p.name}: ${p.logPath}`).join('\n');
    throw new Error(`control plane failed to start (files kept in ${dir}; logs:\n${logs})\n${(error as Error).message}`, { cause: error });
  }
}
