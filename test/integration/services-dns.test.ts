// Services that route, on a control plane of its own started with `serviceNetwork` (the API server on
// an address of its own that the pods reach, service range 10.96.0.0/12), a process-mode kubelet, kube-proxy in
// nftables mode on the host and CoreDNS as a pod (dev/cluster/services.ts): ClusterIP Services by
// name and IP from pods (a pod reaching its own Service too), ExternalName Services through the
// cluster DNS, the `kubernetes` Service with the pod's ServiceAccount token, endpoints following the
// pods, an admission webhook registered by Service, and nothing left behind once it all stops.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { AdmissionregistrationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveCoreDns } from '../../dev/cluster/binaries.ts';
import { issueServingCert } from '../../dev/cluster/certs.ts';
import { filesIn, startControlPlane, WORKLOAD_CONTROLLERS, type ControlPlane } from '../../dev/cluster/control-plane.ts';
import { probe } from '../../dev/cluster/probe.ts';
import { API_LINK, claimServiceNetwork, CLUSTER_DNS_IP, KUBERNETES_SERVICE_IP, kubeProxyTables } from '../../dev/cluster/service-network.ts';
import { startServices, type Services } from '../../dev/cluster/services.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';

const namespace = 'svc';
const ECHO = 'neoset.local/echo-server:1';
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
let cp: ControlPlane | undefined;
let kubelet: Kubelet | undefined;
let services: Services | undefined;
const log: string[] = [];
const core = () => cp!.kubeConfig().makeApiClient(CoreV1Api);
const pids: number[] = [];

let refusedForeignTable: unknown;

/**
 * What a crashed run leaves: its claim with an owner that is gone, the interface, a kube-proxy table.
 * Before that, a kube-proxy table with no claim of ours (a real kube-proxy of this host) is refused.
 */
async function leaveStaleServices(): Promise<void> {
  execFileSync('nft', ['add', 'table', 'ip', 'kube-proxy']);
  refusedForeignTable = await claimServiceNetwork(() => {}).then((claim) => claim.release(), (err: unknown) => err);
  mkdirSync('/run/neoset/services', { recursive: true });
  writeFileSync('/run/neoset/services/owner', '999999999\n');
  spawnSync('ip', ['link', 'add', API_LINK, 'type', 'bridge']);
  execFileSync('nft', ['add', 'chain', 'ip', 'kube-proxy', 'left-behind']);
}

beforeAll(async () => {
  const started = Date.now();
  await leaveStaleServices();
  cp = await startControlPlane({ serviceNetwork: true, extraControllers: WORKLOAD_CONTROLLERS, log: (l) => log.push(l) });
  kubelet = await startKubelet({
    kubeConfig: cp.kubeConfig(),
    nodeName: 'svc-node',
    startDelayMs: 100,
    readyDelayMs: 200,
    log: (l) => log.push(l),
    processMode: {
      imageTable: [
        { image: 'neoset.local/echo-server:*', entrypoint: ['{node}', '{checkout}/test/fixtures/process-pods/echo-server.ts'], env: { PORT: '8080' } },
        { image: 'neoset.local/webhook:*', entrypoint: ['{node}', '{checkout}/test/fixtures/process-pods/webhook-server.ts'], env: { PORT: '8443' } },
      ],
      programs: { coredns: await resolveCoreDns() },
      backoffMs: 500,
    },
  });
  services = await startServices(cp, { nodeName: kubelet.nodeName, log: (l) => log.push(l) });
  pids.push(services.kubeProxy.pid!);
  await core().createNamespace({ body: { metadata: { name: namespace } } });
  log.push(`stack ready in ${Date.now() - started} ms`);
}, 120_000);

afterAll(async () => {
  await services?.stop();
  await kubelet?.stop();
  await cp?.stop();
  if (process.env.SERVICES_LOG) console.log(log.join('\n'));
});

function echoPod(name: string, app: string, extra: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    metadata: { name, namespace, labels: { app } },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'app',
          image: ECHO,
          // Node's fetch trusts the cluster CA the ServiceAccount volume carries (kubernetes.default.svc's issuer).
          env: [{ name: 'NODE_EXTRA_CA_CERTS', value: `${SA_DIR}/ca.crt` }],
          readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1 },
        },
      ],
      ...extra,
    },
  };
}

const ready = (name: string) =>
  waitFor(async () => {
    const p = await core().readNamespacedPod({ name, namespace });
    return p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && p;
  }, { what: `${name} Ready`, timeoutMs: 20_000 });

/** GET `path` of the echo server of the pod at `ip` (from the host, which routes to pod IPs). */
async function ask(ip: string, path: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`http://${ip}:8080${path}`, { signal: AbortSignal.timeout(5000) });
  return { status: r.status, text: await r.text() };
}
/** What the pod at `from` gets for `url`, fetched inside its network namespace with its resolv.conf. */
const fetchFrom = (from: string, url: string, extra = '') => ask(from, `/fetch?url=${encodeURIComponent(url)}${extra}`);
const resolveFrom = (from: string, name: string, type: string) => ask(from, `/resolve?name=${encodeURIComponent(name)}&type=${type}`);

describe('Services and cluster DNS (kube-proxy nftables, CoreDNS)', () => {
  let a: V1Pod;
  let b: V1Pod;
  let clusterIP: string;

  it("refused a kube-proxy table that is not ours, and removed what a crashed run of ours had left", () => {
    expect(String(refusedForeignTable)).toContain('another kube-proxy runs on this machine');
    expect(log).toContain(`removed what an earlier services stack (pid 999999999) left: ${API_LINK}, ip kube-proxy`);
    expect(execFileSync('nft', ['list', 'table', 'ip', 'kube-proxy'], { encoding: 'utf8' })).not.toContain('left-behind');
  });

  it('routes the kubernetes Service to the API server, from the host', async () => {
    const answer = await waitFor(() => probe(`https://${KUBERNETES_SERVICE_IP}/version`, { ca: cp!.caPem }), { what: 'kubernetes Service /version', timeoutMs: 10_000 });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).gitVersion).toBe(cp!.version);
  });

  it('routes a ClusterIP Service to its pod, by name and by IP, from another pod and from itself', async () => {
    await core().createNamespacedPod({ namespace, body: echoPod('a', 'a') });
    await core().createNamespacedPod({ namespace, body: echoPod('b', 'b') });
    const svc = await core().createNamespacedService({
      namespace,
      body: { metadata: { name: 'echo-a' }, spec: { selector: { app: 'a' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
    });
    clusterIP = svc.spec!.clusterIP!;
    [a, b] = await Promise.all([ready('a'), ready('b')]);
    const from = b.status!.podIP!;
    const byName = await waitFor(async () => {
      const r = await fetchFrom(from, `http://echo-a.${namespace}.svc.cluster.local/hostname`);
      return r.status === 200 && r;
    }, { what: 'b → echo-a by its FQDN', timeoutMs: 20_000 });
    expect(byName.text).toBe('200 a');
    expect(await fetchFrom(from, 'http://echo-a/hostname')).toEqual({ status: 200, text: '200 a' }); // the search path
    expect(await fetchFrom(from, `http://${clusterIP}/hostname`)).toEqual({ status: 200, text: '200 a' });
    // Hairpin: a pod reaching its own Service (kube-proxy masquerades it, so the reply comes back via the host).
    expect(await fetchFrom(a.status!.podIP!, 'http://echo-a/hostname')).toEqual({ status: 200, text: '200 a' });
    // The host reaches ClusterIPs too (kube-proxy's output hook).
    expect(await probe(`http://${clusterIP}/hostname`)).toMatchObject({ status: 200, body: 'a' });
    // The pod's resolver asks CoreDNS at the kube-dns ClusterIP.
    expect((await ask(from, `/file?path=/etc/resolv.conf`)).text).toContain(`nameserver ${CLUSTER_DNS_IP}`);
    expect(JSON.parse((await resolveFrom(from, `echo-a.${namespace}.svc.cluster.local`, 'A')).text)).toEqual([clusterIP]);
  });

  it('gives containers the Service variables kubelet gives', async () => {
    const env = JSON.parse((await ask(b.status!.podIP!, '/env')).text) as Record<string, string>;
    expect(env).toMatchObject({ KUBERNETES_SERVICE_HOST: KUBERNETES_SERVICE_IP, KUBERNETES_SERVICE_PORT: '443', KUBERNETES_PORT: `tcp://${KUBERNETES_SERVICE_IP}:443` });
    expect(env).toMatchObject({ ECHO_A_SERVICE_HOST: clusterIP, ECHO_A_SERVICE_PORT: '80', ECHO_A_SERVICE_PORT_HTTP: '80' });
  });

  it('resolves an ExternalName Service to its CNAME, and through it to the Service it names', async () => {
    const target = `echo-a.${namespace}.svc.cluster.local`;
    await core().createNamespacedService({ namespace, body: { metadata: { name: 'alias' }, spec: { type: 'ExternalName', externalName: target } } });
    const from = b.status!.podIP!;
    const cname = await waitFor(async () => {
      const r = await resolveFrom(from, `alias.${namespace}.svc.cluster.local`, 'CNAME');
      return r.status === 200 && r;
    }, { what: 'alias CNAME', timeoutMs: 10_000 });
    expect(JSON.parse(cname.text)).toEqual([target]);
    expect(await fetchFrom(from, `http://alias.${namespace}.svc.cluster.local/hostname`)).toEqual({ status: 200, text: '200 a' });
  });

  it('lets a pod call the API server at kubernetes.default.svc with its ServiceAccount token', async () => {
    const from = b.status!.podIP!;
    const token = `&bearer=${encodeURIComponent(`${SA_DIR}/token`)}`;
    const version = await fetchFrom(from, 'https://kubernetes.default.svc/version', token);
    expect(version.text).toMatch(/^200 /);
    expect(JSON.parse(version.text.slice(4)).gitVersion).toBe(cp!.version);
    expect((await fetchFrom(from, 'https://kubernetes.default.svc.cluster.local/healthz', token)).text).toBe('200 ok');
    // Discovery is for authenticated callers only: the token is what gets it.
    expect((await fetchFrom(from, 'https://kubernetes.default.svc/api', token)).text).toMatch(/^200 .*"versions"/);
    expect((await fetchFrom(from, 'https://kubernetes.default.svc/api')).text).toMatch(/^40[13] /);
  });

  it('follows the pods: a deleted pod leaves the Service, a new one behind it is reached', async () => {
    const from = b.status!.podIP!;
    await core().deleteNamespacedPod({ name: 'a', namespace });
    // Once kube-proxy has seen the endpoint go, it rejects connections to the Service without
    // endpoints (before that, a connection to the vanished pod IP times out).
    const refused = await waitFor(async () => {
      const r = await fetchFrom(from, `http://${clusterIP}/hostname`);
      return r.text.endsWith('ECONNREFUSED') && r;
    }, { what: 'echo-a without endpoints: connection refused', timeoutMs: 20_000 });
    expect(refused.status).toBe(502);
    await core().createNamespacedPod({ namespace, body: echoPod('a2', 'a') });
    await ready('a2');
    const again = await waitFor(async () => {
      const r = await fetchFrom(from, 'http://echo-a/hostname');
      return r.status === 200 && r;
    }, { what: 'echo-a → a2', timeoutMs: 20_000 });
    expect(again.text).toBe('200 a2');
  });

  it('calls an admission webhook registered by Service at its pod', async () => {
    const files = filesIn(cp!.dir);
    const ca = { certPem: await readFile(files.ca, 'utf8'), keyPem: await readFile(files.caKey, 'utf8') };
    // The name kube-apiserver verifies a Service's webhook by: <service>.<namespace>.svc.
    const tls = await issueServingCert(ca, [`webhook.${namespace}.svc`]);
    await core().createNamespacedSecret({ namespace, body: { metadata: { name: 'webhook-tls' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': tls.certPem, 'tls.key': tls.keyPem } } });
    await core().createNamespacedService({
      namespace,
      body: { metadata: { name: 'webhook' }, spec: { selector: { app: 'webhook' }, ports: [{ port: 443, targetPort: 8443 }] } },
    });
    await core().createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'webhook', namespace, labels: { app: 'webhook' } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'webhook',
              image: 'neoset.local/webhook:1',
              volumeMounts: [{ name: 'tls', mountPath: '/tls', readOnly: true }],
              readinessProbe: { tcpSocket: { port: 8443 }, periodSeconds: 1 },
            },
          ],
          volumes: [{ name: 'tls', secret: { secretName: 'webhook-tls' } }],
        },
      },
    });
    await ready('webhook');
    await cp!.kubeConfig().makeApiClient(AdmissionregistrationV1Api).createValidatingWebhookConfiguration({
      body: {
        metadata: { name: 'svc-test' },
        webhooks: [
          {
            name: 'deny.svc.neoset.local',
            clientConfig: { service: { namespace, name: 'webhook', path: '/validate', port: 443 }, caBundle: Buffer.from(ca.certPem).toString('base64') },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
            failurePolicy: 'Fail',
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            timeoutSeconds: 5,
          },
        ],
      },
    });
    const create = (name: string, labels: Record<string, string>) => core().createNamespacedConfigMap({ namespace, body: { metadata: { name, labels } } });
    // The configuration takes effect within a moment (kube-apiserver's informer): until then creates pass.
    const refusal = await waitFor(async () => {
      try {
        await create(`probe-${Date.now()}`, { deny: 'yes' });
        return false;
      } catch (err) {
        return String((err as { body?: unknown }).body ?? err);
      }
    }, { what: 'the webhook refusing', timeoutMs: 15_000 });
    expect(refusal).toContain('denied by webhook');
    await expect(create('allowed', {})).resolves.toBeDefined();
  });

  it('leaves no kube-proxy table, process, interface or network namespace behind', async () => {
    const netns = () => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    const node = await core().readNode({ name: kubelet!.nodeName });
    const index = node.spec!.podCIDR!.split('.')[2];
    expect(netns()).toContain(`neoset-${index}-`);
    expect(await kubeProxyTables()).toContain('ip kube-proxy');
    await services!.stop();
    services = undefined;
    await kubelet!.stop();
    kubelet = undefined;
    await cp!.stop();
    cp = undefined;
    expect(await kubeProxyTables()).toEqual([]);
    expect(pids.filter((pid) => { try { process.kill(pid, 0); return true; } catch { return false; } })).toEqual([]);
    expect(execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })).not.toContain(`: ${API_LINK}:`);
    expect(netns()).not.toContain(`neoset-${index}-`);
    expect(existsSync('/run/neoset/services')).toBe(false);
  });
});
