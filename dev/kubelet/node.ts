// The simulated kubelet's Node: registered as kubelet registers itself (create, or take over an
// existing Node of that name), kept alive with a Lease in kube-node-lease renewed every few seconds —
// without it the node lifecycle controller marks the Node NotReady after its grace period and sets
// every pod on it to Ready=False.

import {
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  V1MicroTime,
  setHeaderOptions,
  type KubeConfig,
  type V1Node,
} from '@kubernetes/client-node';
import { describeError, statusCode } from './api-errors.ts';

export interface RegisteredNode {
  hostIP: string;
  /** The first three octets of the node's pod CIDR `10.244.N.0/24` (`<podNetwork>.N`); pod IPs are `<podSubnet>.<2..254>`. */
  podSubnet: string;
  stop(): Promise<void>;
}

/**
 * Where kube-apiserver reaches this kubelet's HTTPS port (log-server.ts): reported as the Node's
 * ExternalIP, which control-plane.ts's --kubelet-preferred-address-types puts first, and as
 * daemonEndpoints' port. The InternalIP stays the host IP that pods are given.
 */
export interface KubeletEndpoint {
  address: string;
  port: number;
}

const LEASE_NAMESPACE = 'kube-node-lease';
const LEASE_DURATION_SECONDS = 40;
const LEASE_RENEW_MS = 10_000;

export async function registerNode(
  kubeConfig: KubeConfig,
  nodeName: string,
  log: (msg: string) => void,
  allocatable: { cpu: string; memory: string } = { cpu: '8', memory: '32Gi' },
  kubeletEndpoint?: KubeletEndpoint,
  /** The first two octets of the cluster's pods' /16 (address-plan.ts): the nodes take its /24s. */
  podNetwork = '10.244',
): Promise<RegisteredNode> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const node = await ensureNode(core, nodeName, podNetwork);
  const index = subnetIndex(node.spec?.podCIDR, podNetwork) ?? 2;
  const hostIP = `172.18.0.${index}`;
  await core.patchNodeStatus(
    { name: nodeName, body: { status: nodeStatus(nodeName, hostIP, allocatable, kubeletEndpoint) } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );

  const coordination = kubeConfig.makeApiClient(CoordinationV1Api);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let renewing: Promise<void> = Promise.resolve();
  const renew = async (): Promise<void> => {
    try {
      await renewLease(coordination, node);
    } catch (err) {
      log(`lease ${nodeName}: ${describeError(err)}`);
    }
    if (!stopped) timer = setTimeout(() => (renewing = renew()), LEASE_RENEW_MS);
  };
  renewing = renew();
  await renewing;
  return {
    hostIP,
    podSubnet: `${podNetwork}.${index}`,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await renewing;
    },
  };
}

/** The Node named `nodeName`, created with a pod CIDR no other Node uses if it does not exist yet. */
async function ensureNode(core: CoreV1Api, nodeName: string, podNetwork: string): Promise<V1Node> {
  for (;;) {
    let existing: V1Node | undefined;
    try {
      existing = await core.readNode({ name: nodeName });
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
    }
    if (existing && subnetIndex(existing.spec?.podCIDR, podNetwork) !== undefined) return existing;
    const used = new Set((await core.listNode()).items.map((n) => subnetIndex(n.spec?.podCIDR, podNetwork)));
    let index = 2;
    while (used.has(index) && index < 254) index++;
    const podCIDR = `${podNetwork}.${index}.0/24`;
    try {
      if (existing) {
        // spec.podCIDR may be set once, from empty (the node IPAM controller does the same).
        return await core.patchNode(
          { name: nodeName, body: { spec: { podCIDR, podCIDRs: [podCIDR] } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      }
      return await core.createNode({
        body: {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name: nodeName,
            labels: {
              'kubernetes.io/hostname': nodeName,
              'kubernetes.io/os': 'linux',
              'kubernetes.io/arch': 'amd64',
              'kubelet.neo.io/simulated': 'true',
            },
          },
          spec: { podCIDR, podCIDRs: [podCIDR] },
        },
      });
    } catch (err) {
      if (statusCode(err) !== 409) throw err; // another kubelet registered it meanwhile: read again
    }
  }
}

/**
 * Pods a node takes (its allocatable `pods`): what its /24 of pod IPs holds, with room to spare. The
 * simulated kubelet binds (as a scheduler would) only while it runs fewer; the rest stay Pending for
 * another node, as unschedulable pods do.
 */
export const MAX_PODS = 250;

function subnetIndex(podCIDR: string | undefined, podNetwork: string): number | undefined {
  const [network, index] = [podCIDR?.split('.').slice(0, 2).join('.'), /^\d+\.\d+\.(\d+)\.0\/24$/.exec(podCIDR ?? '')?.[1]];
  return network === podNetwork && index !== undefined ? Number(index) : undefined;
}

function nodeStatus(nodeName: string, hostIP: string, allocatable: { cpu: string; memory: string }, endpoint?: KubeletEndpoint): Record<string, unknown> {
  const now = new Date().toISOString();
  // The allocatable cpu/memory kube-apiserver's PodResizeValidator checks a resize against (SPEC §4.9).
  const resources = { ...allocatable, pods: String(MAX_PODS), 'ephemeral-storage': '100Gi' };
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  });
  return {
    capacity: resources,
    allocatable: resources,
    addresses: [
      { type: 'InternalIP', address: hostIP },
      ...(endpoint ? [{ type: 'ExternalIP', address: endpoint.address }] : []),
      { type: 'Hostname', address: nodeName },
    ],
    conditions: [
      condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status (simulated)'),
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: endpoint?.port ?? 10250 } },
    nodeInfo: {
      machineID: nodeName,
      systemUUID: nodeName,
      bootID: nodeName,
      kernelVersion: 'simulated',
      osImage: 'NeoSet simulated kubelet',
      containerRuntimeVersion: 'containerd://simulated',
      kubeletVersion: 'v1.37.2',
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

/** Renew (or create) the node's Lease, owned by the Node as kubelet does, so it goes with the Node. */
async function renewLease(coordination: CoordinationV1Api, node: V1Node): Promise<void> {
  const name = node.metadata!.name!;
  const spec = { holderIdentity: name, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: new V1MicroTime() };
  try {
    await coordination.patchNamespacedLease(
      { name, namespace: LEASE_NAMESPACE, body: { spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  } catch (err) {
    if (statusCode(err) !== 404) throw err;
    await coordination.createNamespacedLease({
      namespace: LEASE_NAMESPACE,
      body: {
        metadata: {
          name,
          namespace: LEASE_NAMESPACE,
          ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata!.uid! }],
        },
        spec,
      },
    });
  }
}
