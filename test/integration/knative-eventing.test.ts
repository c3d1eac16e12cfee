// The real Knative Eventing (v0.50.0, built from its Go module by build-knative.sh) installed from its
// own release manifests (dev/cluster/knative.ts) on a serviceNetwork control plane, a process-mode
// kubelet and the services stack (kube-proxy, CoreDNS): every component runs as a process with a pod
// IP behind its Services, under the manifests' ServiceAccounts and RBAC, its webhook called by the API
// server. Then what NeoSet uses of it: a Broker (MTChannelBasedBroker over the in-memory channel), a
// Trigger whose filter lets one event type through to a receiver pod, and an ApiServerSource whose
// adapter delivers a namespace's ConfigMap events through the Broker. Nothing is left behind.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveCoreDns, resolveKnativeEventing } from '../../dev/cluster/binaries.ts';
import { startControlPlane, type ControlPlane } from '../../dev/cluster/control-plane.ts';
import { installKnativeEventing, KNATIVE_CONTROLLERS, KNATIVE_NAMESPACE, knativeImageTable } from '../../dev/cluster/knative.ts';
import { kubeProxyTables } from '../../dev/cluster/service-network.ts';
import { startServices, type Services } from '../../dev/cluster/services.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';
import { containerLogTails } from '../cluster/knative-stack.ts';
import { hostCommandLines } from '../cluster/host-processes.ts';

const namespace = 'kn-test';
const NODE = 'kn-node';
let cp: ControlPlane | undefined;
let kubelet: Kubelet | undefined;
let services: Services | undefined;
const log: string[] = [];
const pids: number[] = [];
let installMs = 0;
let knativeDir = '';
const core = () => cp!.kubeConfig().makeApiClient(CoreV1Api);
const custom = () => cp!.kubeConfig().makeApiClient(CustomObjectsApi);

beforeAll(async () => {
  const started = Date.now();
  const [dir, coredns] = await Promise.all([resolveKnativeEventing(), resolveCoreDns()]);
  knativeDir = dir;
  cp = await startControlPlane({ serviceNetwork: true, extraControllers: KNATIVE_CONTROLLERS, log: (l) => log.push(l) });
  kubelet = await startKubelet({
    kubeConfig: cp.kubeConfig(),
    nodeName: NODE,
    log: (l) => log.push(l),
    processMode: {
      imageTable: [
        ...knativeImageTable(dir),
        { image: 'neoset.local/event-receiver:*', entrypoint: ['{node}', '{checkout}/test/fixtures/process-pods/event-receiver.ts'], env: { PORT: '8080' } },
      ],
      programs: { coredns },
      backoffMs: 1000,
      maxBackoffMs: 10_000,
    },
  });
  services = await startServices(cp, { nodeName: kubelet.nodeName, log: (l) => log.push(l) });
  pids.push(services.kubeProxy.pid!);
  const installStarted = Date.now();
  try {
    await installKnativeEventing(cp, { dir, log: (l) => log.push(l), timeoutMs: 150_000 });
  } catch (err) {
    console.log(log.slice(-60).join('\n'), '\n', containerLogTails());
    throw err;
  }
  installMs = Date.now() - installStarted;
  log.push(`stack ready in ${Date.now() - started} ms (Knative installed in ${installMs} ms)`);
  await core().createNamespace({ body: { metadata: { name: namespace } } });
}, 240_000);

afterAll(async () => {
  if (process.env.KNATIVE_LOG) console.log(log.join('\n'), '\n', containerLogTails());
  await services?.stop();
  await kubelet?.stop();
  await cp?.stop();
}, 60_000);

const ready = (o: { status?: { conditions?: { type: string; status: string }[] } }) => o.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

async function knative(group: string, version: string, plural: string, name: string): Promise<{ spec?: unknown; status?: { conditions?: { type: string; status: string; message?: string }[]; address?: { url?: string } } }> {
  return (await custom().getNamespacedCustomObject({ group, version, namespace, plural, name })) as never;
}

async function readyObject(group: string, version: string, plural: string, name: string, timeoutMs = 60_000) {
  let last: unknown;
  return waitFor(
    async () => {
      const o = await knative(group, version, plural, name);
      last = o.status?.conditions;
      return ready(o) && o;
    },
    { what: `${plural}/${name} Ready`, timeoutMs, intervalMs: 500 },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; conditions: ${JSON.stringify(last)}`, { cause: err });
  });
}

/** A Trigger on the Broker `default` letting events of `type` through to the receiver's `path`. */
const createTrigger = (name: string, type: string, path: string, extraFilter: Record<string, string> = {}) =>
  custom().createNamespacedCustomObject({
    group: 'eventing.knative.dev',
    version: 'v1',
    namespace,
    plural: 'triggers',
    body: {
      apiVersion: 'eventing.knative.dev/v1',
      kind: 'Trigger',
      metadata: { name },
      spec: { broker: 'default', filter: { attributes: { type, ...extraFilter } }, subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'receiver' }, uri: path } },
    },
  });

interface Received {
  path: string;
  attributes: Record<string, string>;
  data: string;
}

describe('Knative Eventing v0.50.0, installed from its release manifests', () => {
  let receiverIP: string;
  let ingressURL: URL;

  it('runs every Deployment of knative-eventing Available, its pods Running with pod IPs', async () => {
    const apps = cp!.kubeConfig().makeApiClient(AppsV1Api);
    const deployments = (await apps.listNamespacedDeployment({ namespace: KNATIVE_NAMESPACE })).items;
    expect(deployments.map((d) => d.metadata!.name).sort()).toEqual(
      ['eventing-controller', 'eventing-webhook', 'imc-controller', 'imc-dispatcher', 'job-sink', 'mt-broker-controller', 'mt-broker-filter', 'mt-broker-ingress', 'pingsource-mt-adapter'].sort(),
    );
    for (const d of deployments) {
      if (d.spec?.replicas === 0) continue; // pingsource-mt-adapter: scaled up by the controller once a PingSource exists
      expect(d.status?.conditions?.find((c) => c.type === 'Available')?.status, d.metadata!.name).toBe('True');
    }
    const pods = (await core().listNamespacedPod({ namespace: KNATIVE_NAMESPACE })).items;
    expect(pods.length).toBeGreaterThanOrEqual(8);
    for (const p of pods) {
      expect(p.status?.phase, p.metadata!.name).toBe('Running');
      expect(p.status?.podIP, p.metadata!.name).toMatch(/^10\.244\.\d+\.\d+$/);
    }
    // The webhook wrote its CA into its own registrations, as on a real cluster.
    const webhooks = await cp!.kubeConfig().makeApiClient((await import('@kubernetes/client-node')).AdmissionregistrationV1Api).readMutatingWebhookConfiguration({ name: 'webhook.eventing.knative.dev' });
    expect(webhooks.webhooks?.[0]?.clientConfig.caBundle).toBeTruthy();
    console.log(`Knative Eventing installed in ${installMs} ms`);
  });

  it('delivers a CloudEvent POSTed to a Broker to the Trigger whose filter matches, and not the other', async () => {
    const receiver: V1Pod = {
      metadata: { name: 'receiver', namespace, labels: { app: 'receiver' } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'receiver', image: 'neoset.local/event-receiver:1', readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1 } }],
      },
    };
    await core().createNamespacedPod({ namespace, body: receiver });
    await core().createNamespacedService({ namespace, body: { metadata: { name: 'receiver' }, spec: { selector: { app: 'receiver' }, ports: [{ port: 80, targetPort: 8080 }] } } });
    await custom().createNamespacedCustomObject({
      group: 'eventing.knative.dev',
      version: 'v1',
      namespace,
      plural: 'brokers',
      body: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', metadata: { name: 'default', annotations: { 'eventing.knative.dev/broker.class': 'MTChannelBasedBroker' } } },
    });
    await createTrigger('wanted', 'neoset.test.wanted', '/wanted');
    // The API server called Knative's webhook at its pod (by Service): it defaulted the Broker's
    // channel config, and it refuses a Trigger filter attribute Knative does not allow.
    const created = (await knative('eventing.knative.dev', 'v1', 'brokers', 'default')) as { spec?: { config?: { name?: string } } };
    expect(created.spec?.config?.name).toBe('config-br-default-channel');
    const refused = await createTrigger('bad-filter', 'neoset.test.wanted', '/wanted', { 'Not-Valid': 'x' }).then(
      () => 'accepted',
      (err: { body?: string }) => String(err.body),
    );
    expect(refused).toContain('admission webhook');
    expect(refused).toContain('Not-Valid');
    const broker = await readyObject('eventing.knative.dev', 'v1', 'brokers', 'default');
    await readyObject('eventing.knative.dev', 'v1', 'triggers', 'wanted');
    const pod = await waitFor(async () => {
      const p = await core().readNamespacedPod({ name: 'receiver', namespace });
      return p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && p;
    }, { what: 'receiver Ready', timeoutMs: 20_000 });
    receiverIP = pod.status!.podIP!;

    // status.address.url names broker-ingress's Service; the host reaches its ClusterIP (kube-proxy).
    ingressURL = new URL(broker.status!.address!.url!);
    expect(ingressURL.hostname).toBe(`broker-ingress.${KNATIVE_NAMESPACE}.svc.cluster.local`);
    expect(ingressURL.pathname).toBe(`/${namespace}/default`);
    const ingress = await core().readNamespacedService({ name: 'broker-ingress', namespace: KNATIVE_NAMESPACE });
    const post = (id: string, type: string) =>
      fetch(`http://${ingress.spec!.clusterIP}${ingressURL.pathname}`, {
        method: 'POST',
        headers: { 'ce-specversion': '1.0', 'ce-id': id, 'ce-type': type, 'ce-source': 'neoset.test/knative-eventing', 'content-type': 'application/json' },
        body: JSON.stringify({ id }),
        signal: AbortSignal.timeout(5000),
      });
    expect((await post('e-unwanted', 'neoset.test.unwanted')).status).toBe(202);
    expect((await post('e-wanted-1', 'neoset.test.wanted')).status).toBe(202);
    expect((await post('e-wanted-2', 'neoset.test.wanted')).status).toBe(202);
    const events = await waitFor(async () => {
      const r: Received[] = await (await fetch(`http://${receiverIP}:8080/events`, { signal: AbortSignal.timeout(3000) })).json();
      return r.filter((e) => e.attributes.type === 'neoset.test.wanted').length >= 2 && r;
    }, { what: 'both wanted events at the receiver', timeoutMs: 30_000, intervalMs: 250 });
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the unwanted one had its chance too
    const after: Received[] = await (await fetch(`http://${receiverIP}:8080/events`)).json();
    expect(after.map((e) => e.attributes.id).sort()).toEqual(['e-wanted-1', 'e-wanted-2']);
    expect(events[0]).toMatchObject({ path: '/wanted', attributes: { specversion: '1.0', source: 'neoset.test/knative-eventing' } });
    // The Broker's extensions, as the real Broker adds them.
    expect(Object.keys(events[0].attributes)).toContain('knativearrivaltime');
    expect(JSON.parse(events[0].data)).toEqual({ id: events[0].attributes.id });
  });

  it("delivers an ApiServerSource's ConfigMap events through the Broker (the adapter runs as a pod under its ServiceAccount)", async () => {
    await core().createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'configmap-watcher' } } });
    const rbac = cp!.kubeConfig().makeApiClient((await import('@kubernetes/client-node')).RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name: 'configmap-watcher' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }] } });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'configmap-watcher' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmap-watcher' },
        subjects: [{ kind: 'ServiceAccount', name: 'configmap-watcher', namespace }],
      },
    });
    await createTrigger('configmaps', 'dev.knative.apiserver.resource.add', '/configmaps');
    await custom().createNamespacedCustomObject({
      group: 'sources.knative.dev',
      version: 'v1',
      namespace,
      plural: 'apiserversources',
      body: {
        apiVersion: 'sources.knative.dev/v1',
        kind: 'ApiServerSource',
        metadata: { name: 'configmaps' },
        spec: {
          mode: 'Resource',
          serviceAccountName: 'configmap-watcher',
          resources: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
          sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'default' } },
        },
      },
    });
    await readyObject('eventing.knative.dev', 'v1', 'triggers', 'configmaps');
    await readyObject('sources.knative.dev', 'v1', 'apiserversources', 'configmaps', 90_000);
    // The adapter is a Deployment the controller made in our namespace, running the built adapter.
    const adapters = (await core().listNamespacedPod({ namespace })).items.filter((p) => p.metadata?.name?.startsWith('apiserversource-configmaps'));
    expect(adapters.map((p) => [p.status?.phase, p.spec?.serviceAccountName, p.spec?.containers[0].image])).toEqual([
      ['Running', 'configmap-watcher', 'neoset.local/knative-eventing/apiserver_receive_adapter:v0.50.0'],
    ]);

    await core().createNamespacedConfigMap({ namespace, body: { metadata: { name: 'hello' }, data: { greeting: 'from the API server' } } });
    const event = await waitFor(async () => {
      const r: Received[] = await (await fetch(`http://${receiverIP}:8080/events`, { signal: AbortSignal.timeout(3000) })).json();
      return r.find((e) => e.path === '/configmaps' && e.attributes.subject?.endsWith('/configmaps/hello'));
    }, { what: "the ConfigMap's add event at the receiver", timeoutMs: 30_000, intervalMs: 250 });
    expect(event.attributes).toMatchObject({ type: 'dev.knative.apiserver.resource.add', source: expect.stringContaining('https://') });
    expect(JSON.parse(event.data)).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'hello', namespace }, data: { greeting: 'from the API server' } });
  });

  it('scales the PingSource adapter up for a PingSource and marks it Ready', async () => {
    await custom().createNamespacedCustomObject({
      group: 'sources.knative.dev',
      version: 'v1',
      namespace,
      plural: 'pingsources',
      body: {
        apiVersion: 'sources.knative.dev/v1',
        kind: 'PingSource',
        metadata: { name: 'tick' },
        spec: { schedule: '*/1 * * * *', data: '{"tick":true}', sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'default' } } },
      },
    });
    await readyObject('sources.knative.dev', 'v1', 'pingsources', 'tick', 60_000);
    const apps = cp!.kubeConfig().makeApiClient(AppsV1Api);
    await waitFor(async () => {
      const d = await apps.readNamespacedDeployment({ name: 'pingsource-mt-adapter', namespace: KNATIVE_NAMESPACE });
      return (d.status?.availableReplicas ?? 0) >= 1;
    }, { what: 'pingsource-mt-adapter Available with a replica', timeoutMs: 60_000, intervalMs: 500 });
  });
});

describe('after the stack stops', () => {
  it('leaves no process, network namespace or kube-proxy table behind', async () => {
    await services?.stop();
    await kubelet?.stop();
    services = undefined;
    kubelet = undefined;
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    // No Knative component (nor the receiver) outlives its pod.
    const left = hostCommandLines((cmd) => cmd.includes(knativeDir) || cmd.includes('event-receiver.ts'));
    expect(left).toEqual([]);
    expect(await kubeProxyTables()).toEqual([]);
    const netns = existsSync('/run/netns') ? readdirSync('/run/netns').filter((n) => n.startsWith(`neoset-${NODE}`)) : [];
    expect(netns).toEqual([]);
  });
});
