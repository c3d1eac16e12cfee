// The cluster DNS as kubeadm installs it (its CoreDNS add-on): in kube-system a ServiceAccount with
// the read access CoreDNS's kubernetes plugin needs, the Corefile ConfigMap, a Deployment of the
// CoreDNS image and the `kube-dns` Service at CLUSTER_DNS_IP. The image runs in process mode through
// the image table's CoreDNS entry (dev/kubelet/process/image-table.ts), as our build (build-coredns.sh).
// There is no upstream resolver to forward to (nothing here reaches the internet): only the cluster's
// names are answered, and every other name gets CoreDNS's SERVFAIL/REFUSED.

import type { Manifest } from '../manifests.ts';
import { CLUSTER_DNS_IP, CLUSTER_DOMAIN } from './service-network.ts';

export const COREDNS_IMAGE = 'registry.k8s.io/coredns/coredns:v1.15.0';
const NAMESPACE = 'kube-system';
const LABELS = { 'k8s-app': 'kube-dns' };

/**
 * kubeadm's Corefile (v1.37) without `forward . /etc/resolv.conf` (no upstream) and `loop` (which only
 * guards a forward loop): `pods insecure` answers a-b-c-d.<ns>.pod names as kube-dns does, and the
 * cluster's own names are not cached (a Service just created is not denied for 30 s).
 */
export const COREFILE = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    cache 30 {
       disable success ${CLUSTER_DOMAIN}
       disable denial ${CLUSTER_DOMAIN}
    }
    reload
    loadbalance
}
`;

/** `dnsIP`: the kube-dns Service's ClusterIP (address-plan.ts clusterDNSIP; default CLUSTER_DNS_IP). */
export function corednsManifests(dnsIP = CLUSTER_DNS_IP): Manifest[] {
  const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: NAMESPACE, labels: LABELS, ...extra });
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('coredns') },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns', labels: LABELS },
      rules: [
        { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns', labels: LABELS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: NAMESPACE }],
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('coredns'), data: { Corefile: COREFILE } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta('coredns'),
      spec: {
        replicas: 1,
        selector: { matchLabels: LABELS },
        template: {
          metadata: { labels: LABELS },
          spec: {
            serviceAccountName: 'coredns',
            priorityClassName: 'system-cluster-critical',
            dnsPolicy: 'Default',
            terminationGracePeriodSeconds: 5,
            containers: [
              {
                name: 'coredns',
                image: COREDNS_IMAGE,
                args: ['-conf', '/etc/coredns/Corefile'],
                ports: [
                  { name: 'dns', containerPort: 53, protocol: 'UDP' },
                  { name: 'dns-tcp', containerPort: 53, protocol: 'TCP' },
                  { name: 'metrics', containerPort: 9153, protocol: 'TCP' },
                ],
                volumeMounts: [{ name: 'config-volume', mountPath: '/etc/coredns', readOnly: true }],
                livenessProbe: { httpGet: { path: '/health', port: 8080 }, initialDelaySeconds: 5, periodSeconds: 5, failureThreshold: 5 },
                readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 1 },
              },
            ],
            volumes: [{ name: 'config-volume', configMap: { name: 'coredns', items: [{ key: 'Corefile', path: 'Corefile' }] } }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('kube-dns', { annotations: { 'prometheus.io/port': '9153', 'prometheus.io/scrape': 'true' } }),
      spec: {
        selector: LABELS,
        clusterIP: dnsIP,
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
          { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
        ],
      },
    },
  ];
}
