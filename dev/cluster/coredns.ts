// The cluster DNS as kubeadm installs it (its CoreDNS add-on): in kube-system a ServiceAccount with
// the read access CoreDNS's kubernetes plugin needs, a Deployment of the CoreDNS image (its Corefile
// the checkout's, COREFILE_PATH below) and the `kube-dns` Service at CLUSTER_DNS_IP. The image runs in process mode through
// the image table's CoreDNS entry (dev/kubelet/process/image-table.ts), as our build (build-coredns.sh).
// There is no upstream resolver to forward to (nothing here reaches the internet): only the cluster's
// names are answered, and every other name gets CoreDNS's SERVFAIL/REFUSED.

import { fileURLToPath } from 'node:url';
import type { Manifest } from '../manifests.ts';
import { CLUSTER_DNS_IP } from './service-network.ts';

export const COREDNS_IMAGE = 'registry.k8s.io/coredns/coredns:v1.15.0';
const NAMESPACE = 'kube-system';
const LABELS = { 'k8s-app': 'kube-dns' };

/**
 * The Corefile every CoreDNS pod runs (dev/cluster/Corefile): kubeadm's (v1.37) without `forward .
 * /etc/resolv.conf` (no upstream) and `loop` (which only guards a forward loop); `pods insecure`
 * answers a-b-c-d.<ns>.pod names as kube-dns does, and the cluster's own names are not cached (a
 * Service just created is not denied for 30 s). It is the checkout's file, named by the image table's
 * fixed `-conf`, not a ConfigMap a pod mounts: CoreDNS runs as root on this host, and a Corefile of a
 * pod's choosing could read host files (`hosts`, the kubernetes plugin's `kubeconfig` and `tls`) or
 * write them (`-pidfile`); the checkout is a path no pod may mount over (mount-targets.ts).
 */
export const COREFILE_PATH = fileURLToPath(new URL('./Corefile', import.meta.url));

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
                ports: [
                  { name: 'dns', containerPort: 53, protocol: 'UDP' },
                  { name: 'dns-tcp', containerPort: 53, protocol: 'TCP' },
                  { name: 'metrics', containerPort: 9153, protocol: 'TCP' },
                ],
                livenessProbe: { httpGet: { path: '/health', port: 8080 }, initialDelaySeconds: 5, periodSeconds: 5, failureThreshold: 5 },
                readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 1 },
              },
            ],
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
