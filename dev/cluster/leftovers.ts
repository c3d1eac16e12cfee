// What a dev stack killed with SIGKILL leaves on its host, which nothing of it could undo: the pods'
// processes (in process groups of their own, not tied to the stack's life as its other children are,
// processes.ts), their network namespaces and veths, the nodes' bridges, the service network's
// interface, kube-proxy's nftables tables (kube-proxy itself dies with the stack) and ip_forward
// turned on. The next start removes all of it before it changes anything, and says what it removed.
// Only what carries our names and a gone owner's pid is touched (network.ts cleanStale,
// service-network.ts removeStaleServiceNetwork): another live stack's, or another owner's, stays.

import { cleanStale } from '../kubelet/process/network.ts';
import { API_LINK, removeStaleServiceNetwork } from './service-network.ts';

/** Removes what stacks whose process is gone left on this host; one line says what, when anything. */
export async function removeLeftovers(log: (line: string) => void): Promise<void> {
  // The pods first: their processes are killed with their namespaces, before the interface they reach the API server by goes.
  const nodes = await cleanStale(-1, () => {});
  const services = await removeStaleServiceNetwork();
  const counted = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const removed = [
    ...(nodes.processes > 0 ? [counted(nodes.processes, 'pod process', 'pod processes')] : []),
    ...(nodes.namespaces > 0 ? [`${counted(nodes.namespaces, 'network namespace', 'network namespaces')} (their veths with them)`] : []),
    ...(nodes.nodes.length > 0 ? [`the ${nodes.nodes.length === 1 ? 'bridge' : 'bridges'} ${nodes.nodes.join(', ')}`] : []),
    ...(services?.link ? [API_LINK] : []),
    ...(services?.tables ?? []).map((table) => `nftables table ${table}`),
    ...(nodes.ipForward !== undefined ? [`net.ipv4.ip_forward set back to ${nodes.ipForward}`] : []),
  ];
  if (removed.length === 0) return;
  const whose = services ? ` (pid ${services.pid}, gone without its stop)` : ' (its process gone without its stop)';
  log(`removed what an earlier dev stack left${whose}: ${removed.join(', ')}`);
}
