// The objects the rollout benchmark runs: the same pod template (one container with a readiness
// probe, as the seeds' mysql) as bare pods, as a NeoSet and as a StatefulSet, Parallel, with
// maxUnavailable k; and the waits around them.
import { API_VERSION, KIND, PLURAL } from '../../shared/api/names.ts';
import type { KubeClient } from '../../shared/k8s/client.ts';

export const APP_IMAGE = (version: number) => `nginx:1.${version}`;

const container = (image: string) => ({ name: 'main', image, readinessProbe: { tcpSocket: { port: 80 } } });
const template = (app: string, image: string) => ({ metadata: { labels: { app } }, spec: { containers: [container(image)] } });

export const neosetPath = (ns: string, name = '') => `/apis/${API_VERSION}/namespaces/${ns}/${PLURAL}${name ? `/${name}` : ''}`;
export const statefulSetPath = (ns: string, name = '') => `/apis/apps/v1/namespaces/${ns}/statefulsets${name ? `/${name}` : ''}`;
export const podsPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/pods${name ? `/${name}` : ''}`;

/** What a NeoSet and a StatefulSet spec share: N pods of one template, Parallel. */
const podSet = (name: string, replicas: number, image: string) => ({
  replicas,
  selector: { matchLabels: { app: name } },
  serviceName: name,
  podManagementPolicy: 'Parallel',
  template: template(name, image),
});

export function neoset(name: string, replicas: number, k: number, image: string) {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name },
    spec: { ...podSet(name, replicas, image), updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: k } },
  };
}

export function statefulSet(name: string, replicas: number, k: number, image: string) {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: { ...podSet(name, replicas, image), updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: k } } },
  };
}

export const barePod = (name: string, image: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'bare' } }, spec: { containers: [container(image)] } });

/** The JSON patch that changes the first container's image (of a pod, or of a workload's template). */
export const imagePatch = (path: string, image: string) => [{ op: 'replace', path, value: image }];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

interface Listed {
  items: { metadata: { deletionTimestamp?: string }; status?: { conditions?: { type: string; status: string }[] } }[];
}

export async function readyPods(client: KubeClient, ns: string, selector: string): Promise<number> {
  const list = await client.request<Listed>('GET', podsPath(ns), { query: { labelSelector: selector } });
  return list.items.filter((p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

export async function createNamespace(client: KubeClient, name: string): Promise<void> {
  await client.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  // Pods need the namespace's default ServiceAccount (ServiceAccount admission).
  await until(`the default ServiceAccount of ${name}`, 60_000, async () =>
    client.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`).then(
      () => true,
      () => false,
    ),
  );
}

export async function deleteNamespace(client: KubeClient, name: string): Promise<void> {
  await client.request('DELETE', `/api/v1/namespaces/${name}`).catch(() => {});
  await until(`namespace ${name} to go`, 300_000, async () =>
    client.request('GET', `/api/v1/namespaces/${name}`).then(
      () => false,
      () => true,
    ),
  );
}
