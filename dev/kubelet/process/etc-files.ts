// The pod's /etc/hosts and /etc/resolv.conf as kubelet writes them (kubelet_pods.go
// managedHostsFileContent, dns.go GetPodDNS): the hosts file names the pod's IP with its hostname
// (and FQDN with a subdomain) plus hostAliases; resolv.conf follows dnsPolicy — ClusterFirst searches
// <ns>.svc.<domain>, svc.<domain>, <domain> and asks the cluster DNS with ndots:5, Default takes the
// host's file, None only dnsConfig — and dnsConfig's nameservers, searches and options are merged in.

import { readFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';

export interface DnsSettings {
  clusterDNS: string;
  clusterDomain: string;
}

export function hostnameOf(pod: V1Pod): string {
  return (pod.spec?.hostname || pod.metadata?.name || 'pod').slice(0, 63);
}

export function hostsFile(pod: V1Pod, podIP: string, dns: DnsSettings): string {
  const hostname = hostnameOf(pod);
  const subdomain = pod.spec?.subdomain;
  const names = subdomain ? `${hostname}.${subdomain}.${pod.metadata?.namespace}.svc.${dns.clusterDomain}\t${hostname}` : hostname;
  const lines = [
    '# Kubernetes-managed hosts file.',
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    'fe00::0\tip6-localnet',
    'fe00::0\tip6-mcastprefix',
    'fe00::1\tip6-allnodes',
    'fe00::2\tip6-allrouters',
    `${podIP}\t${names}`,
  ];
  const aliases = pod.spec?.hostAliases ?? [];
  if (aliases.length > 0) {
    lines.push('', '# Entries added by HostAliases.');
    for (const alias of aliases) lines.push(`${alias.ip}\t${(alias.hostnames ?? []).join('\t')}`);
  }
  return `${lines.join('\n')}\n`;
}

function hostResolvConf(): { nameservers: string[]; searches: string[]; options: string[] } {
  const text = (() => {
    try {
      return readFileSync('/etc/resolv.conf', 'utf8');
    } catch {
      return '';
    }
  })();
  const result = { nameservers: [] as string[], searches: [] as string[], options: [] as string[] };
  for (const line of text.split('\n')) {
    const [key, ...values] = line.trim().split(/\s+/);
    if (key === 'nameserver' && values[0]) result.nameservers.push(values[0]);
    else if (key === 'search' || key === 'domain') result.searches = values;
    else if (key === 'options') result.options.push(...values);
  }
  return result;
}

export function resolvConf(pod: V1Pod, dns: DnsSettings): string {
  const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  const host = hostResolvConf();
  const domain = dns.clusterDomain;
  let conf: { nameservers: string[]; searches: string[]; options: string[] };
  if (policy === 'None') conf = { nameservers: [], searches: [], options: [] };
  else if (policy === 'Default' || (policy === 'ClusterFirst' && pod.spec?.hostNetwork)) conf = host;
  else {
    const namespace = pod.metadata?.namespace ?? 'default';
    conf = { nameservers: [dns.clusterDNS], searches: [`${namespace}.svc.${domain}`, `svc.${domain}`, domain, ...host.searches], options: ['ndots:5'] };
  }
  const extra = pod.spec?.dnsConfig;
  conf.nameservers = [...new Set([...conf.nameservers, ...(extra?.nameservers ?? [])])].slice(0, 3);
  conf.searches = [...new Set([...conf.searches, ...(extra?.searches ?? [])])].slice(0, 32);
  const options = new Map(conf.options.map((o) => [o.split(':')[0], o] as const));
  for (const o of extra?.options ?? []) options.set(o.name ?? '', o.value ? `${o.name}:${o.value}` : (o.name ?? ''));
  const lines = [
    ...(conf.searches.length ? [`search ${conf.searches.join(' ')}`] : []),
    ...conf.nameservers.map((ns) => `nameserver ${ns}`),
    ...(options.size ? [`options ${[...options.values()].join(' ')}`] : []),
  ];
  return `${lines.join('\n')}\n`;
}
