// Services that route, beneath a control plane started with `serviceNetwork` and a process-mode
// kubelet: kube-proxy on the host (its network namespace) in nftables mode, and CoreDNS as a pod of
// the stack (coredns.ts), so that ClusterIP and ExternalName Services and *.svc.cluster.local resolve
// and connect from every pod (and ClusterIPs from the host too).
//
// Pods reach ClusterIPs through the host: a pod's default route is its bridge's gateway, so its
// packets are routed by the host (not bridged) and pass the host's nftables prerouting hook, where
// kube-proxy DNATs them; br_netfilter is not needed. A pod reaching its own Service is hairpin
// traffic, which kube-proxy masquerades (to the bridge's address), so the reply comes back through
// the host too.

import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, DiscoveryV1Api } from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { toYaml } from '../manifests.ts';
import { waitFor } from '../kubelet/wait-for.ts';
import { resolveKubeProxy } from './binaries.ts';
import { issueClientCert } from './certs.ts';
import { filesIn, type ControlPlane } from './control-plane.ts';
import { corednsManifests } from './coredns.ts';
import { kubectl } from './knative.ts';
import { kubeconfigYaml } from './kubeconfig.ts';
import { freePorts } from './ports.ts';
import { probe, waitForHealthy } from './probe.ts';
import { startProcess, type ManagedProcess } from './processes.ts';
import { execute } from '../kubelet/process/network.ts';
import { clusterDNSIP, DEFAULT_ADDRESS_PLAN, type AddressPlan } from './address-plan.ts';
import { deleteKubeProxyTables, kubeProxyTables } from './service-network.ts';
import { PROCESS_GRACE_MS } from './shutdown.ts';

export interface ServicesOptions {
  /**
   * The Node kube-proxy runs as (--hostname-override): one kube-proxy serves every simulated node of
   * this machine, so Services with internalTrafficPolicy/externalTrafficPolicy Local see this node's
   * endpoints only.
   */
  nodeName: string;
  /** The ranges the control plane's service network was claimed for (default: address-plan.ts's defaults). */
  addresses?: AddressPlan;
  /** CoreDNS ready within this. Default 60 s (the image must be in the kubelet's image table: coredns). */
  timeoutMs?: number;
  log?: (line: string) => void;
}

export interface Services {
  kubeProxy: ManagedProcess;
  /** kube-proxy's log file. */
  kubeProxyLog: string;
  /** Removes CoreDNS's objects, stops kube-proxy and deletes its nftables tables; never throws. */
  stop(): Promise<void>;
  /**
   * Stops kube-proxy and deletes its nftables tables, leaving CoreDNS's objects: for a stop that takes
   * the whole cluster along (the dev stack's Ctrl-C), where asking a stopping API server to delete
   * them would only wait. Never throws.
   */
  stopProxy(): Promise<void>;
}

function kubeProxyArgs(kubeconfig: string, clusterCIDR: string, nodeName: string, healthzPort: number, metricsPort: number): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    '--proxy-mode=nftables',
    `--cluster-cidr=${clusterCIDR}`,
    '--detect-local-mode=ClusterCIDR',
    `--hostname-override=${nodeName}`,
    `--healthz-bind-address=127.0.0.1:${healthzPort}`,
    `--metrics-bind-address=127.0.0.1:${metricsPort}`,
    // The host's conntrack settings are the host's: kube-proxy leaves them as they are.
    '--conntrack-max-per-core=0',
    '--conntrack-tcp-timeout-established=0',
    '--conntrack-tcp-timeout-close-wait=0',
    // NodePorts are not part of this stack; on the Node's (simulated) address only.
    '--nodeport-addresses=primary',
    '--config-sync-period=1m',
  ];
}

async function kubeProxyKubeconfig(cp: ControlPlane): Promise<string> {
  const files = filesIn(cp.dir);
  const ca = { certPem: await readFile(files.ca, 'utf8'), keyPem: await readFile(files.caKey, 'utf8') };
  // system:kube-proxy is bound to system:node-proxier by RBAC's bootstrap policy, as kubeadm's kube-proxy.
  const client = await issueClientCert(ca, { commonName: 'system:kube-proxy' });
  const path = join(cp.dir, 'kube-proxy.kubeconfig');
  await writeFile(path, kubeconfigYaml({ server: cp.server, caPem: ca.certPem, client, user: 'system:kube-proxy' }), { mode: 0o600 });
  return path;
}

/**
 * The only program kube-proxy may run: nft, in a directory that is its whole PATH. At every start,
 * whatever its mode, kube-proxy first removes the other modes' rules (platformCleanup,
 * cmd/kube-proxy/app/server_linux.go; no flag turns it off): in nftables mode the iptables chains a
 * kube-proxy in iptables or ipvs mode keeps (KUBE-SERVICES, KUBE-SVC-…, found with iptables-save),
 * every IPVS virtual server of the host (ipvs.Flush) and the kube-ipvs0 interface. On a host whose own
 * kube-proxy runs in one of those modes, that is its Services taken down. Without iptables on its
 * PATH it finds no iptables to clean (utiliptables.NewBestEffort: none present), and without modprobe
 * the IPVS cleanup gives up at once (`modprobe -va ip_vs` fails); nftables mode itself needs nft only
 * (sigs.k8s.io/knftables). `kube-proxy --cleanup` is never run: it removes all three modes' rules.
 */
async function kubeProxyPath(dir: string): Promise<string> {
  const nft = (await execute('sh', ['-c', 'command -v nft'])).stdout.trim();
  if (!nft) throw new Error('nft (nftables) is not installed: kube-proxy runs in nftables mode');
  const bin = join(dir, 'kube-proxy-path');
  await rm(bin, { recursive: true, force: true });
  await mkdir(bin, { recursive: true });
  await symlink(nft, join(bin, 'nft'));
  return bin;
}

export async function startServices(cp: ControlPlane, opts: ServicesOptions): Promise<Services> {
  const log = opts.log ?? (() => {});
  const addresses = opts.addresses ?? DEFAULT_ADDRESS_PLAN;
  if (new URL(cp.server).hostname !== addresses.apiAddress) {
    throw new Error(`startServices needs a control plane started with serviceNetwork (its API server at ${addresses.apiAddress}), not ${cp.server}`);
  }
  const tables = await kubeProxyTables();
  if (tables.length > 0) throw new Error(`nftables already has ${tables.join(', ')}: another kube-proxy runs on this machine`);
  const [binary, kubeconfig, [healthzPort, metricsPort], path] = await Promise.all([resolveKubeProxy(), kubeProxyKubeconfig(cp), freePorts(2), kubeProxyPath(cp.dir)]);
  const logPath = join(cp.dir, 'kube-proxy.log');
  const kubeProxy = startProcess('kube-proxy', binary, kubeProxyArgs(kubeconfig, addresses.clusterCIDR, opts.nodeName, healthzPort, metricsPort), logPath, { PATH: path });
  log(`started kube-proxy (pid ${kubeProxy.pid}, nftables; no iptables or IPVS cleanup: only nft on its PATH), log ${logPath}`);
  const manifests = corednsManifests(clusterDNSIP(addresses));

  // kube-proxy's nftables mode keeps its rules in its two tables, deleted by name (what `kube-proxy
  // --cleanup` would do for them, without its iptables and IPVS cleanup; see kubeProxyPath).
  const stopProxy = async () => {
    await kubeProxy.stop(PROCESS_GRACE_MS);
    await deleteKubeProxyTables();
  };
  const stop = async () => {
    spawnSync('kubectl', ['--kubeconfig', cp.kubeconfigPath, 'delete', '--ignore-not-found', '--wait=false', '-f', '-'], {
      input: toYaml(manifests),
      stdio: ['pipe', 'ignore', 'ignore'],
      timeout: 10_000,
    });
    await stopProxy();
    log('kube-proxy stopped, its nftables tables deleted, CoreDNS removed');
  };

  try {
    await waitForHealthy(kubeProxy, `http://127.0.0.1:${healthzPort}/healthz`, undefined, 30_000);
    // Asynchronous: the dev stack installs Knative meanwhile.
    const applied = await kubectl(cp.kubeconfigPath, ['apply', '-f', '-'], toYaml(manifests));
    if (applied.code !== 0) throw new Error(`installing CoreDNS failed: ${applied.out.trim()}`);
    const kc = cp.kubeConfig();
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    await waitFor(
      async () => {
        const slices = await discovery.listNamespacedEndpointSlice({ namespace: 'kube-system', labelSelector: 'kubernetes.io/service-name=kube-dns' });
        const ready = slices.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready);
        // A CoreDNS that answers, not only a Ready pod: a kubelet without the coredns program simulates it.
        const answers = await Promise.all(ready.map((e) => probe(`http://${e.addresses[0]}:8181/ready`)));
        return answers.some((answer) => answer?.status === 200);
      },
      {
        intervalMs: 250,
        what: 'CoreDNS answering behind kube-dns (needs deployment-controller and replicaset-controller, and the process-mode kubelet given programs.coredns)',
        timeoutMs: opts.timeoutMs ?? 60_000,
      },
    ).catch(async (err: unknown) => {
      const pods = await core.listNamespacedPod({ namespace: 'kube-system', labelSelector: 'k8s-app=kube-dns' }).catch(() => undefined);
      const states = pods?.items.map((p) => `${p.metadata?.name} ${p.status?.phase} ${JSON.stringify(p.status?.containerStatuses?.[0]?.state ?? {})}`);
      throw new Error(`${(err as Error).message}; CoreDNS pods: ${states?.join('; ') || 'none'}`, { cause: err });
    });
    log('CoreDNS ready behind kube-dns');
  } catch (err) {
    await stop();
    throw err;
  }
  return { kubeProxy, kubeProxyLog: logPath, stop, stopProxy };
}
