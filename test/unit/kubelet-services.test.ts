// What process mode takes from the Services stack: the Service variables kubelet gives containers
// (which Services, in what names, under the container's own env) and the image table's programs
// ({program:NAME}, e.g. CoreDNS's build).
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { containerEnv } from '../../dev/kubelet/process/environment.ts';
import { createImageTable } from '../../dev/kubelet/process/image-table.ts';
import { linkedServices, serviceEnv } from '../../dev/kubelet/process/service-env.ts';
import { COREFILE_PATH } from '../../dev/cluster/coredns.ts';

const service = (namespace: string, name: string, spec: V1Service['spec']): V1Service => ({ metadata: { namespace, name }, spec });
const kubernetes = service('default', 'kubernetes', { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP' }] });
const web = service('ns', 'my-web', { clusterIP: '10.96.3.4', ports: [{ port: 80 }, { name: 'dns', port: 53, protocol: 'UDP' }] });
const headless = service('ns', 'headless', { clusterIP: 'None', ports: [{ port: 80 }] });
const external = service('ns', 'ext', { type: 'ExternalName', externalName: 'example.com' });
const elsewhere = service('other', 'far', { clusterIP: '10.96.9.9', ports: [{ port: 1 }] });
const all = [kubernetes, web, headless, external, elsewhere];

describe('Service variables', () => {
  it("names default's kubernetes always, and the pod's namespace's Services with a ClusterIP unless enableServiceLinks is false", () => {
    const pod = { metadata: { namespace: 'ns' }, spec: { containers: [] } };
    expect(linkedServices(pod, all).map((s) => s.metadata!.name)).toEqual(['kubernetes', 'my-web']);
    expect(linkedServices({ ...pod, spec: { containers: [], enableServiceLinks: false } }, all).map((s) => s.metadata!.name)).toEqual(['kubernetes']);
    // A Service named kubernetes in the pod's own namespace is the one its variables name.
    const own = service('ns', 'kubernetes', { clusterIP: '10.96.7.7', ports: [{ port: 1 }] });
    expect(serviceEnv(linkedServices(pod, [...all, own])).KUBERNETES_SERVICE_HOST).toBe('10.96.7.7');
  });

  it('writes the names kubelet writes', () => {
    expect(serviceEnv([kubernetes, web])).toEqual({
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      KUBERNETES_SERVICE_PORT_HTTPS: '443',
      KUBERNETES_PORT: 'tcp://10.96.0.1:443',
      KUBERNETES_PORT_443_TCP: 'tcp://10.96.0.1:443',
      KUBERNETES_PORT_443_TCP_PROTO: 'tcp',
      KUBERNETES_PORT_443_TCP_PORT: '443',
      KUBERNETES_PORT_443_TCP_ADDR: '10.96.0.1',
      MY_WEB_SERVICE_HOST: '10.96.3.4',
      MY_WEB_SERVICE_PORT: '80',
      MY_WEB_SERVICE_PORT_DNS: '53',
      MY_WEB_PORT: 'tcp://10.96.3.4:80',
      MY_WEB_PORT_80_TCP: 'tcp://10.96.3.4:80',
      MY_WEB_PORT_80_TCP_PROTO: 'tcp',
      MY_WEB_PORT_80_TCP_PORT: '80',
      MY_WEB_PORT_80_TCP_ADDR: '10.96.3.4',
      MY_WEB_PORT_53_UDP: 'udp://10.96.3.4:53',
      MY_WEB_PORT_53_UDP_PROTO: 'udp',
      MY_WEB_PORT_53_UDP_PORT: '53',
      MY_WEB_PORT_53_UDP_ADDR: '10.96.3.4',
    });
  });

  it("puts them under the container's env, which $(VAR) may expand them in and which wins", async () => {
    const pod = { metadata: { namespace: 'ns' }, spec: { containers: [] } };
    const none = { configMap: async () => undefined, secret: async () => undefined };
    const container = { name: 'c', env: [{ name: 'URL', value: 'https://$(KUBERNETES_SERVICE_HOST)' }, { name: 'KUBERNETES_SERVICE_PORT', value: '6443' }] };
    const env = await containerEnv(pod, container, '10.244.1.2', none, serviceEnv([kubernetes]));
    expect(env).toMatchObject({ URL: 'https://10.96.0.1', KUBERNETES_SERVICE_PORT: '6443', KUBERNETES_SERVICE_HOST: '10.96.0.1' });
  });
});

describe('image table programs', () => {
  it('runs CoreDNS images with the program given, and simulates them without it', () => {
    expect(createImageTable([], {}).lookup('registry.k8s.io/coredns/coredns:v1.14.6')).toBeUndefined();
    const table = createImageTable([], {}, { coredns: '/cache/coredns-1.15.0/coredns' });
    expect(table.lookup('registry.k8s.io/coredns/coredns:v1.14.6')?.entrypoint).toEqual(['/cache/coredns-1.15.0/coredns', '-conf', COREFILE_PATH]);
    expect(table.lookup('ghcr.io/neoset/neoset:0.1.0')).toBeDefined();
  });
});
