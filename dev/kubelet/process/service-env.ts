// The Service environment variables kubelet gives every container (kubelet_pods.go
// getServiceEnvVarMap, pkg/kubelet/envvars FromServices): the `kubernetes` Service of `default`
// always (in-cluster clients find the API server by KUBERNETES_SERVICE_HOST/PORT), and with
// enableServiceLinks (default true) every Service of the pod's namespace that has a ClusterIP, as
// <NAME>_SERVICE_HOST/_PORT[/_<PORT NAME>] and Docker's link variables <NAME>_PORT[_<port>_<PROTO>…].

import type { V1Pod, V1Service } from '@kubernetes/client-node';

const varName = (name: string) => name.toUpperCase().replace(/-/g, '_');

const hasClusterIP = (service: V1Service) => !!service.spec?.clusterIP && service.spec.clusterIP !== 'None';

/** The Services a pod's environment names: a Service of its own namespace wins over default's `kubernetes`. */
export function linkedServices(pod: V1Pod, services: V1Service[]): V1Service[] {
  const namespace = pod.metadata?.namespace ?? 'default';
  const links = pod.spec?.enableServiceLinks ?? true;
  const byName = new Map<string, V1Service>();
  for (const service of services) {
    if (!hasClusterIP(service)) continue;
    const { name = '', namespace: ns } = service.metadata ?? {};
    if (ns === 'default' && name === 'kubernetes' && !byName.has(name)) byName.set(name, service);
    else if (ns === namespace && links) byName.set(name, service);
  }
  return [...byName.values()];
}

export function serviceEnv(services: V1Service[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const service of services) {
    const prefix = varName(service.metadata?.name ?? '');
    const ip = service.spec!.clusterIP!;
    const ports = service.spec?.ports ?? [];
    if (ports.length === 0) continue;
    env[`${prefix}_SERVICE_HOST`] = ip;
    env[`${prefix}_SERVICE_PORT`] = String(ports[0].port);
    for (const port of ports) if (port.name) env[`${prefix}_SERVICE_PORT_${varName(port.name)}`] = String(port.port);
    ports.forEach((port, i) => {
      const protocol = (port.protocol ?? 'TCP').toLowerCase();
      const url = `${protocol}://${ip.includes(':') ? `[${ip}]` : ip}:${port.port}`;
      if (i === 0) env[`${prefix}_PORT`] = url;
      const at = `${prefix}_PORT_${port.port}_${protocol.toUpperCase()}`;
      Object.assign(env, { [at]: url, [`${at}_PROTO`]: protocol, [`${at}_PORT`]: String(port.port), [`${at}_ADDR`]: ip });
    });
  }
  return env;
}
