// The real Knative Serving (v0.50.0, built by build-serving.sh) installed from its own release config
// (dev/cluster/serving.ts), with Traefik v3.7.13 (build-traefik.sh) as its KIngress implementation
// (dev/cluster/traefik.ts), on a serviceNetwork control plane, a process-mode kubelet and the services
// stack: every component a process with a pod IP behind its Services. Then the platform at work: a
// cluster-local Knative Service whose container is a process-mode image (the event receiver) goes
// Ready, answers at its cluster-local URL — the cluster DNS's CNAME to Traefik's private Service,
// kube-proxy, Traefik's private entrypoint, the revision's Service, queue-proxy — scales to zero with
// the short autoscaler windows (SHORT_AUTOSCALER_WINDOWS), and is woken by the next request through
// the activator. Prints the stack's start, the Ready time, the cold start, the warm latency and each
// component's RSS once idle. Nothing is left behind.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { Resolver } from 'node:dns/promises';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveCoreDns, resolveKnativeServing, resolveTraefik } from '../../dev/cluster/binaries.ts';
import { startControlPlane, type ControlPlane } from '../../dev/cluster/control-plane.ts';
import { clusterDNSIP, DEFAULT_ADDRESS_PLAN } from '../../dev/cluster/address-plan.ts';
import { installKnativeServing, SERVING_CONTROLLERS, SERVING_NAMESPACE, servingPrograms, SHORT_AUTOSCALER_WINDOWS } from '../../dev/cluster/serving.ts';
import { kubeProxyTables } from '../../dev/cluster/service-network.ts';
import { startServices, type Services } from '../../dev/cluster/services.ts';
import { installTraefik, TRAEFIK_INGRESS_CLASS, traefikLayout, traefikPrograms } from '../../dev/cluster/traefik.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';
import { descendants } from '../../bench/lib/cpu.ts';
import { containerLogTails } from '../cluster/knative-stack.ts';
import { hostCommandLines } from '../cluster/host-processes.ts';

const NODE = 'kn-serving-node';
const { watched: [namespace] } = traefikLayout(); // Traefik routes the KIngresses of neoset-system only
const KSVC = 'hello';
const HOST = `${KSVC}.${namespace}.svc.cluster.local`;
let cp: ControlPlane | undefined;
let kubelet: Kubelet | undefined;
let services: Services | undefined;
const log: string[] = [];
const pids: number[] = [];
let servingDir = '';
let traefikBinary = '';
let stackMs = 0;
/** The network namespaces there were before the stack: any other left after it would be ours. */
const netnsBefore = new Set(existsSync('/run/netns') ? readdirSync('/run/netns') : []);
const core = () => cp!.kubeConfig().makeApiClient(CoreV1Api);
const custom = () => cp!.kubeConfig().makeApiClient(CustomObjectsApi);

beforeAll(async () => {
  const started = Date.now();
  const [dir, traefik, coredns] = await Promise.all([resolveKnativeServing(), resolveTraefik(), resolveCoreDns()]);
  servingDir = dir;
  traefikBinary = traefik;
  cp = await startControlPlane({ serviceNetwork: true, extraControllers: SERVING_CONTROLLERS, log: (l) => log.push(l) });
  kubelet = await startKubelet({
    kubeConfig: cp.kubeConfig(),
    nodeName: NODE,
    log: (l) => log.push(l),
    processMode: {
      imageTable: [{ image: 'neoset.local/event-receiver:*', entrypoint: ['{node}', '{checkout}/test/fixtures/process-pods/event-receiver.ts'], env: { PORT: '8080' } }],
      programs: { coredns, ...servingPrograms(dir), ...traefikPrograms(traefik) },
      backoffMs: 1000,
      maxBackoffMs: 10_000,
    },
  });
  services = await startServices(cp, { nodeName: kubelet.nodeName, log: (l) => log.push(l) });
  pids.push(services.kubeProxy.pid!);
  const installStarted = Date.now();
  const timed = async (what: string, install: Promise<void>) => {
    await install;
    return `${what} ${Date.now() - installStarted} ms`;
  };
  let installed: string[];
  try {
    installed = await Promise.all([
      timed('Serving', installKnativeServing(cp, { dir, autoscaler: SHORT_AUTOSCALER_WINDOWS, log: (l) => log.push(l), timeoutMs: 300_000 })),
      timed('Traefik', installTraefik(cp, { log: (l) => log.push(l), timeoutMs: 300_000 })),
    ]);
  } catch (err) {
    console.log(log.slice(-60).join('\n'), '\n', containerLogTails());
    throw err;
  }
  stackMs = Date.now() - started;
  console.log(`stack up with Knative Serving and Traefik in ${stackMs} ms (control plane, process-mode kubelet, kube-proxy, CoreDNS, then side by side: ${installed.join(', ')})`);
}, 420_000);

afterAll(async () => {
  if (process.env.KNATIVE_LOG) console.log(log.join('\n'), '\n', containerLogTails());
  await services?.stop();
  await kubelet?.stop();
  await cp?.stop();
}, 60_000);

type Condition = { type: string; status: string; reason?: string; message?: string };
type Conditioned = { status?: { conditions?: Condition[]; url?: string; address?: { url?: string }; privateLoadBalancer?: unknown } };

const serving = (plural: string, name: string, group = 'serving.knative.dev') =>
  custom().getNamespacedCustomObject({ group, version: group === 'serving.knative.dev' ? 'v1' : 'v1alpha1', namespace, plural, name }) as Promise<Conditioned & { metadata: { annotations?: Record<string, string> } }>;

/** The ksvc's pods (the revision's Deployment's), by the label Serving puts on them. */
const ksvcPods = async () => (await core().listNamespacedPod({ namespace, labelSelector: `serving.knative.dev/service=${KSVC}` })).items;

/** What to read when routing fails: the KIngress, Traefik's and the activator's logs. */
async function routingReport(): Promise<string> {
  const ingress = await serving('ingresses', KSVC, 'networking.internal.knative.dev').catch((err: unknown) => ({ error: String(err) }));
  return `KIngress: ${JSON.stringify(ingress, null, 1).slice(0, 3000)}\n${containerLogTails()}`;
}

/** The address the cluster DNS gives `host`, CNAMEs followed (the route's ExternalName Service → Traefik's private Service). */
async function clusterAddress(host: string): Promise<{ ip: string; chain: string[] }> {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([clusterDNSIP(DEFAULT_ADDRESS_PLAN)]);
  const chain = [host];
  for (let hops = 0; hops < 5; hops++) {
    const name = chain.at(-1)!;
    const cname = await resolver.resolveCname(name).catch(() => []);
    if (cname.length === 0) return { ip: (await resolver.resolve4(name))[0], chain };
    chain.push(cname[0]);
  }
  throw new Error(`CNAME chain too long: ${chain.join(' → ')}`);
}

/** GET `path` of the ksvc at its cluster-local URL from the host: its status, body and time from sent to answered. */
async function get(path: string, timeoutMs = 60_000): Promise<{ status: number; body: string; ms: number; via: string[] }> {
  const { ip, chain } = await clusterAddress(HOST);
  const sent = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: ip, port: 80, path, headers: { Host: HOST }, timeout: timeoutMs, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk.slice(0, 4096 - body.length)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: Math.round(performance.now() - sent), via: [...chain, ip] }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET http://${HOST}${path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** VmRSS in MiB of each process below this one (the kubelet's containers, not others' tests') whose command line names `path`. */
function rssOf(path: string): number[] {
  return descendants()
    .filter((p) => p.argv.some((arg) => arg === path || arg.endsWith(path)))
    .flatMap(({ pid }) => {
      try {
        const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
        return [Math.round((kb / 1024) * 10) / 10];
      } catch {
        return []; // gone meanwhile
      }
    });
}

describe('Knative Serving v0.50.0 with Traefik v3.7.13, installed from their releases', () => {
  let readyAt = 0;
  let lastRequestAt = 0;

  it("runs Serving's Deployments and Traefik Available, their pods Running with pod IPs", async () => {
    const apps = cp!.kubeConfig().makeApiClient(AppsV1Api);
    const deployments = (await apps.listNamespacedDeployment({ namespace: SERVING_NAMESPACE })).items;
    expect(deployments.map((d) => d.metadata!.name).sort()).toEqual(['activator', 'autoscaler', 'controller', 'webhook']);
    for (const d of deployments) expect(d.status?.conditions?.find((c) => c.type === 'Available')?.status, d.metadata!.name).toBe('True');
    const pods = [...(await core().listNamespacedPod({ namespace: SERVING_NAMESPACE })).items, ...(await core().listNamespacedPod({ namespace: traefikLayout().namespace })).items];
    expect(pods.length).toBe(5);
    for (const p of pods) {
      expect(p.status?.phase, p.metadata!.name).toBe('Running');
      expect(p.status?.podIP, p.metadata!.name).toMatch(/^10\.244\.\d+\.\d+$/);
    }
  });

  it('makes a cluster-local Knative Service Ready, routed by Traefik, answering at its cluster-local URL', async () => {
    const created = Date.now();
    await custom().createNamespacedCustomObject({
      group: 'serving.knative.dev',
      version: 'v1',
      namespace,
      plural: 'services',
      body: {
        apiVersion: 'serving.knative.dev/v1',
        kind: 'Service',
        metadata: { name: KSVC, labels: { 'networking.knative.dev/visibility': 'cluster-local' } },
        spec: {
          template: {
            spec: {
              timeoutSeconds: 30,
              containers: [{ image: 'neoset.local/event-receiver:1', ports: [{ containerPort: 8080 }], readinessProbe: { httpGet: { path: '/healthz' } } }],
            },
          },
        },
      },
    });
    let last: Condition[] | undefined;
    const ksvc = await waitFor(
      async () => {
        const s = await serving('services', KSVC);
        last = s.status?.conditions;
        return s.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && s;
      },
      { what: `ksvc ${KSVC} Ready`, timeoutMs: 120_000, intervalMs: 250 },
    ).catch(async (err: unknown) => {
      console.log(JSON.stringify(last), '\n', await routingReport());
      throw err;
    });
    readyAt = Date.now();
    console.log(`ksvc ${KSVC} Ready ${readyAt - created} ms after it was created`);
    expect(ksvc.status?.url).toBe(`http://${HOST}`);

    // Serving asked for Traefik's class; Traefik marked the KIngress and named its private Service.
    const ingress = (await serving('ingresses', KSVC, 'networking.internal.knative.dev')) as Conditioned & { metadata: { annotations?: Record<string, string> }; status?: { privateLoadBalancer?: { ingress?: { domainInternal?: string }[] } } };
    expect(ingress.metadata.annotations?.['networking.knative.dev/ingress.class']).toBe(TRAEFIK_INGRESS_CLASS);
    const { privateService, namespace: traefikNamespace } = traefikLayout();
    expect(ingress.status?.privateLoadBalancer?.ingress?.[0]?.domainInternal).toBe(`${privateService}.${traefikNamespace}.svc.cluster.local`);

    // The KIngress is marked Ready when Traefik sends its configuration on, which it applies up to
    // providersThrottleDuration (2 s) later: a 404 meanwhile is Traefik's, not the revision's.
    const notFound: string[] = [];
    const answer = await waitFor(async () => {
      const r = await get('/healthz');
      if (r.status === 404) notFound.push(r.body.trim());
      return r.status !== 404 && r;
    }, { what: `GET http://${HOST}/healthz answered by the revision`, timeoutMs: 15_000, intervalMs: 200 }).catch(async (err: unknown) => {
      console.log(await routingReport());
      throw err;
    });
    lastRequestAt = Date.now();
    console.log(`GET http://${HOST}/healthz: ${answer.status} ${answer.body} in ${answer.ms} ms, ${Date.now() - readyAt} ms after Ready, after ${notFound.length} 404s (${[...new Set(notFound)].map((b) => JSON.stringify(b)).join(', ') || 'none'}) (via ${answer.via.join(' → ')})`);
    expect(answer).toMatchObject({ status: 200, body: 'ok' });
    expect(answer.via[1]).toBe(`${privateService}.${traefikNamespace}.svc.cluster.local`);
  });

  it('scales the idle revision to zero pods, then wakes it through the activator on the next request', async () => {
    const apps = cp!.kubeConfig().makeApiClient(AppsV1Api);
    const zero = await waitFor(async () => {
      const d = (await apps.listNamespacedDeployment({ namespace, labelSelector: `serving.knative.dev/service=${KSVC}` })).items[0];
      return d?.spec?.replicas === 0 && (await ksvcPods()).length === 0 && Date.now();
    }, { what: `${KSVC} at 0 pods`, timeoutMs: 120_000, intervalMs: 250 });
    console.log(`${KSVC} at 0 pods ${zero - lastRequestAt} ms after its last request (stable-window ${SHORT_AUTOSCALER_WINDOWS['stable-window']}, scale-to-zero-grace-period ${SHORT_AUTOSCALER_WINDOWS['scale-to-zero-grace-period']})`);

    // Idle at zero: what each component holds.
    const rss: Record<string, number[]> = Object.fromEntries([
      ...(['controller', 'activator', 'autoscaler', 'webhook'] as const).map((cmd) => [cmd, rssOf(`${servingDir}/${cmd}`)]),
      ['traefik', rssOf(traefikBinary)],
    ]);
    console.log(`RSS at rest, 0 revision pods (MiB): ${Object.entries(rss).map(([name, mib]) => `${name} ${mib.join('+')}`).join(', ')}`);
    for (const [name, mib] of Object.entries(rss)) expect(mib.length, name).toBe(1);

    // At zero the activator is in the path: the SKS proxies, and the revision's public Service (what
    // Traefik sends to) has the activator's pod as its one endpoint (mirrored for kube-proxy).
    const revision = `${KSVC}-00001`;
    const sks = (await custom().getNamespacedCustomObject({ group: 'networking.internal.knative.dev', version: 'v1alpha1', namespace, plural: 'serverlessservices', name: revision })) as { spec?: { mode?: string } };
    expect(sks.spec?.mode).toBe('Proxy');
    const activatorIPs = (await core().listNamespacedPod({ namespace: SERVING_NAMESPACE, labelSelector: 'app=activator' })).items.map((p) => p.status?.podIP);
    const discovery = cp!.kubeConfig().makeApiClient(DiscoveryV1Api);
    const slices = (await discovery.listNamespacedEndpointSlice({ namespace, labelSelector: `kubernetes.io/service-name=${revision}` })).items;
    expect(slices.flatMap((s) => (s.endpoints ?? []).flatMap((e) => e.addresses))).toEqual(activatorIPs);

    const cold = await get('/healthz', 90_000).catch(async (err: unknown) => {
      console.log(await routingReport());
      throw err;
    });
    console.log(`cold start through the activator: GET answered ${cold.status} in ${cold.ms} ms (request sent → answered, from 0 pods)`);
    expect(cold).toMatchObject({ status: 200, body: 'ok' });
    expect((await ksvcPods()).length).toBeGreaterThanOrEqual(1);

    const warm: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await get('/healthz');
      expect(r.status).toBe(200);
      warm.push(r.ms);
    }
    warm.sort((a, b) => a - b);
    // With Serving's default target-burst-capacity (211) one pod's capacity (100) is below it: the
    // activator stays in the path while warm too.
    const warmMode = ((await custom().getNamespacedCustomObject({ group: 'networking.internal.knative.dev', version: 'v1alpha1', namespace, plural: 'serverlessservices', name: revision })) as { spec?: { mode?: string } }).spec?.mode;
    console.log(`warm GET /healthz (20 in a row): median ${warm[10]} ms, max ${warm.at(-1)} ms (SKS mode ${warmMode})`);
    const revisionRss = { 'queue-proxy': rssOf(`${servingDir}/queue`), 'user container (event receiver)': rssOf('test/fixtures/process-pods/event-receiver.ts') };
    console.log(`RSS of the revision's pod, warm (MiB): ${Object.entries(revisionRss).map(([name, mib]) => `${name} ${mib.join('+')}`).join(', ')}`);
    expect(cold.ms).toBeGreaterThan(warm[10]);
  });
});

describe('after the stack stops', () => {
  it('leaves no process, network namespace or kube-proxy table behind', async () => {
    await services?.stop();
    await kubelet?.stop();
    services = undefined;
    kubelet = undefined;
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    const left = hostCommandLines((cmd) => cmd.includes(servingDir) || cmd.includes(traefikBinary) || cmd.includes('event-receiver.ts'));
    expect(left).toEqual([]);
    expect(await kubeProxyTables()).toEqual([]);
    const netns = existsSync('/run/netns') ? readdirSync('/run/netns').filter((n) => !netnsBefore.has(n)) : [];
    expect(netns).toEqual([]);
  });
});

