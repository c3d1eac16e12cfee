// The addresses the dev stack on the real Knative puts on its host (service-network.ts): the pods'
// range, whose /24s become the nodes' bridges (10.244.N.0/24, dev/kubelet/process/network.ts), the
// Services' range, which kube-proxy DNATs — and drops, for an address of it no Service holds ("Drop
// traffic to unallocated ClusterIPs", pkg/proxy/nftables/proxier.go) — and the API server's address
// on an interface of its own. While the stack runs, the host's traffic to any of them is the stack's:
// a range that one of the host's routes also covers (a VPN's 10.0.0.0/8, a cloud VPC, a Docker
// network) would be taken from the host. So the stack refuses to start on such a host, naming the
// route and the flag that picks another range (kubeadm's words: --service-cidr, --pod-network-cidr).

import { isIPv4 } from 'node:net';
import { execute } from '../kubelet/process/network.ts';

export interface AddressPlan {
  /** The pods' range, a /16: each node's pods take one /24 of it (`<a>.<b>.<node>.0/24`). */
  clusterCIDR: string;
  /** kube-apiserver's --service-cluster-ip-range: the `kubernetes` Service at its first address, kube-dns at its tenth. */
  serviceCIDR: string;
  /** Where kube-apiserver binds and what the `kubernetes` Service's endpoint is: outside both ranges. */
  apiAddress: string;
}

/** kubeadm's defaults (its pod network add-ons' 10.244.0.0/16 and service CIDR), the API server beside them. */
export const DEFAULT_ADDRESS_PLAN: AddressPlan = { clusterCIDR: '10.244.0.0/16', serviceCIDR: '10.96.0.0/12', apiAddress: '10.245.0.1' };

/** The flag of `npm run dev` that sets each address (dev/main.ts). */
export const ADDRESS_FLAGS: Record<keyof AddressPlan, string> = { clusterCIDR: '--pod-network-cidr', serviceCIDR: '--service-cidr', apiAddress: '--api-address' };

const toNumber = (ip: string): number => ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
const toIP = (n: number): string => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');

interface Range {
  first: number;
  last: number;
}

/** `a.b.c.d/len` (or a bare address: /32) as its first and last address; undefined when it is not one. */
export function rangeOf(cidr: string): Range | undefined {
  const [ip, bits = '32', extra] = cidr.split('/');
  if (extra !== undefined || !isIPv4(ip) || !/^\d{1,2}$/.test(bits) || Number(bits) > 32) return undefined;
  const size = 2 ** (32 - Number(bits));
  const first = Math.floor(toNumber(ip) / size) * size;
  return { first, last: first + size - 1 };
}

const overlap = (a: Range, b: Range): boolean => a.first <= b.last && b.first <= a.last;

/** The `kubernetes` Service's ClusterIP: the first address of the service range. */
export const kubernetesServiceIP = (plan: AddressPlan): string => toIP(rangeOf(plan.serviceCIDR)!.first + 1);
/** The `kube-dns` Service's ClusterIP (kubeadm's: the tenth address). */
export const clusterDNSIP = (plan: AddressPlan): string => toIP(rangeOf(plan.serviceCIDR)!.first + 10);
/** The first two octets of the pods' /16 (`10.244`): a node's pods are `<podNetwork>.<node>.<2..254>`. */
export const podNetworkOf = (plan: AddressPlan): string => plan.clusterCIDR.split('.').slice(0, 2).join('.');

/**
 * The plan with `flags` (those of ADDRESS_FLAGS that were given) over the defaults, or what is wrong
 * with it: each range well-formed and at its network address, the pods' a /16, the service range
 * between /12 and /24 (room for kube-dns at its tenth address), the API address outside both.
 */
export function addressPlanFrom(flags: Partial<AddressPlan>): { plan: AddressPlan } | { error: string } {
  const plan = { ...DEFAULT_ADDRESS_PLAN, ...Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) };
  const cluster = rangeOf(plan.clusterCIDR);
  const service = rangeOf(plan.serviceCIDR);
  const api = rangeOf(plan.apiAddress);
  const bits = (cidr: string) => Number(cidr.split('/')[1]);
  if (!cluster || !plan.clusterCIDR.endsWith('.0.0/16') || toIP(cluster.first) !== plan.clusterCIDR.split('/')[0]) {
    return { error: `${ADDRESS_FLAGS.clusterCIDR} must be an IPv4 /16 such as 10.244.0.0/16, got ${JSON.stringify(plan.clusterCIDR)}` };
  }
  if (!service || !plan.serviceCIDR.includes('/') || bits(plan.serviceCIDR) < 12 || bits(plan.serviceCIDR) > 24 || toIP(service.first) !== plan.serviceCIDR.split('/')[0]) {
    return { error: `${ADDRESS_FLAGS.serviceCIDR} must be an IPv4 range from /12 to /24 at its network address, such as 10.96.0.0/12, got ${JSON.stringify(plan.serviceCIDR)}` };
  }
  if (!api || plan.apiAddress.includes('/')) return { error: `${ADDRESS_FLAGS.apiAddress} must be an IPv4 address, got ${JSON.stringify(plan.apiAddress)}` };
  if (overlap(cluster, service)) return { error: `${ADDRESS_FLAGS.clusterCIDR} ${plan.clusterCIDR} and ${ADDRESS_FLAGS.serviceCIDR} ${plan.serviceCIDR} overlap` };
  if (overlap(api, cluster) || overlap(api, service)) return { error: `${ADDRESS_FLAGS.apiAddress} ${plan.apiAddress} must be outside ${plan.clusterCIDR} and ${plan.serviceCIDR}` };
  return { plan };
}

/** One of the host's IPv4 routes, as `ip -j route show table all` gives it. */
export interface HostRoute {
  dst: string;
  dev?: string;
  table?: string;
  type?: string;
}

/** The devices the stacks of this machine name (the nodes' bridges neoset<N>, the API's neoset-api): their routes are ours. */
const OURS = /^neoset(\d+|-api)$/;

/**
 * Which of the host's routes `plan` would take traffic from, as sentences naming the route and the
 * flag that moves the range. The default route covers everything and takes nothing; nor do the
 * routes of our own devices (a stack killed before it could remove them; the next start does).
 */
export function conflicts(plan: AddressPlan, routes: HostRoute[]): string[] {
  const found: string[] = [];
  for (const route of routes) {
    if (route.dst === 'default' || (route.dev !== undefined && OURS.test(route.dev))) continue;
    const taken = rangeOf(route.dst);
    if (!taken) continue;
    for (const key of ['clusterCIDR', 'serviceCIDR', 'apiAddress'] as const) {
      const range = rangeOf(plan[key])!;
      if (!overlap(range, taken)) continue;
      const where = [route.type && route.type !== 'unicast' ? route.type : '', route.dst, route.dev ? `dev ${route.dev}` : '', route.table && route.table !== 'main' ? `table ${route.table}` : ''].filter(Boolean).join(' ');
      found.push(`${key === 'apiAddress' ? 'the API address' : key === 'clusterCIDR' ? 'the pod network' : 'the service range'} ${plan[key]} overlaps the host's route ${where} (pick another with ${ADDRESS_FLAGS[key]})`);
    }
  }
  return [...new Set(found)];
}

/** The host's IPv4 routes, every table. */
export async function hostRoutes(): Promise<HostRoute[]> {
  const r = await execute('ip', ['-4', '-j', 'route', 'show', 'table', 'all']);
  if (r.code !== 0) throw new Error(`ip -4 -j route show table all: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout || '[]') as HostRoute[];
}

/** Thrown when the host's routes and the stack's ranges meet: a usage error of `npm run dev`, not a crash. */
export class AddressConflictError extends Error {}

/** Refuses (AddressConflictError) when one of the host's routes covers an address of `plan`. */
export async function checkHostRoutes(plan: AddressPlan): Promise<void> {
  const found = conflicts(plan, await hostRoutes());
  if (found.length > 0) throw new AddressConflictError(`this host routes addresses the dev stack would take over: ${found.join('; ')}`);
}
