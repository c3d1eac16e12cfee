// The simulated kubelet against the real kube-apiserver: binding, status, readiness gates, in-place
// image restarts, crash loops, graceful deletion, and the garbage collector deleting an owned pod.

import { CoreV1Api, PatchStrategy, Watch, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONDITION_INPLACE_READY } from '../../shared/api/names.ts';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { createTestNamespace, kubeConfig, type TestNamespace } from '../cluster/harness.ts';
import { imageIDOf, isCrashLoopImage, normalizeImage } from '../../dev/kubelet/image.ts';
import { startKubelet, type Kubelet, type KubeletOptions } from '../../dev/kubelet/kubelet.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';

let ns: TestNamespace;
let namespace: string;
let kubelet: Kubelet;
const core = () => kubeConfig().makeApiClient(CoreV1Api);
const kubeletLog: string[] = [];

beforeAll(async () => {
  ns = await createTestNamespace('kubelet');
  namespace = ns.name;
  kubelet = await startKubelet(kubeletOptions());
});

const kubeletOptions = (): KubeletOptions => ({
  kubeConfig: kubeConfig(),
  nodeName: `sim-${namespace}`,
  namespace,
  startDelayMs: 100,
  readyDelayMs: 400,
  log: (msg) => kubeletLog.push(msg),
});

afterAll(async () => {
  try {
    // The kubelet must outlive the namespace: it confirms the deletion of the namespace's pods.
    await ns?.cleanup({ wait: true });
    await kubelet?.stop();
  } finally {
    if (process.env.KUBELET_LOG) console.log(kubeletLog.join('\n'));
  }
});

function podSpec(name: string, image: string, extra: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    metadata: { name, namespace },
    spec: { containers: [{ name: 'app', image }], readinessGates: [{ conditionType: CONDITION_INPLACE_READY }], ...extra },
  };
}

const readPod = (name: string) => core().readNamespacedPod({ name, namespace });
const condition = (pod: V1Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type);
const app = (pod: V1Pod) => pod.status?.containerStatuses?.find((cs) => cs.name === 'app');

async function podGone(name: string): Promise<boolean> {
  try {
    await readPod(name);
    return false;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return true;
    throw err;
  }
}

/** Sets the readiness gate condition through pods/status, as NeoSet's readiness function does. */
async function setGate(name: string, status: 'True' | 'False'): Promise<void> {
  await core().patchNamespacedPodStatus(
    {
      name,
      namespace,
      body: { status: { conditions: [{ type: CONDITION_INPLACE_READY, status, lastTransitionTime: new Date().toISOString() }] } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
}

/** Every version of one pod, as a watch delivers them (each status write is one version). */
async function observe(name: string): Promise<{ versions: V1Pod[]; stop(): void }> {
  const versions: V1Pod[] = [];
  const controller = await new Watch(kubeConfig()).watch(
    `/api/v1/namespaces/${namespace}/pods`,
    { fieldSelector: `metadata.name=${name}` },
    (_type, pod: V1Pod) => versions.push(pod),
    () => {},
  );
  return { versions, stop: () => controller.abort() };
}

describe('simulated kubelet', () => {
  it('binds a pod, runs it, and holds Ready back until its readiness gate is True', async () => {
    await core().createNamespacedPod({ namespace, body: podSpec('gated', 'nginx:1.27') });
    const pod = await waitFor(async () => {
      const p = await readPod('gated');
      return condition(p, 'ContainersReady')?.status === 'True' && p;
    }, { what: 'gated ContainersReady' });

    expect(pod.spec?.nodeName).toBe(kubelet.nodeName);
    expect(pod.status?.phase).toBe('Running');
    expect(pod.status?.podIP).toMatch(/^10\.244\.\d+\.\d+$/);
    expect(pod.status?.hostIP).toMatch(/^172\.18\.0\.\d+$/);
    expect(pod.status?.startTime).toBeInstanceOf(Date);
    expect(app(pod)).toMatchObject({
      image: 'docker.io/library/nginx:1.27',
      imageID: imageIDOf('nginx:1.27'),
      restartCount: 0,
      started: true,
      ready: true,
    });
    expect(app(pod)?.imageID).toMatch(/^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
    expect(app(pod)?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(app(pod)?.state?.running?.startedAt).toBeInstanceOf(Date);
    for (const type of ['PodScheduled', 'Initialized']) expect(condition(pod, type)?.status).toBe('True');
    expect(condition(pod, 'Ready')).toMatchObject({ status: 'False', reason: 'ReadinessGatesNotReady' });

    await setGate('gated', 'True');
    const ready = await waitFor(async () => {
      const p = await readPod('gated');
      return condition(p, 'Ready')?.status === 'True' && p;
    }, { what: 'gated Ready' });
    expect(condition(ready, CONDITION_INPLACE_READY)?.status).toBe('True'); // kept by the kubelet's writes
    expect(condition(ready, 'ContainersReady')?.lastTransitionTime).toEqual(condition(pod, 'ContainersReady')?.lastTransitionTime);
    expect(ready.status?.podIP).toBe(pod.status?.podIP);

    await setGate('gated', 'False');
    await waitFor(async () => condition(await readPod('gated'), 'Ready')?.status === 'False', { what: 'gated Ready=False' });
  });

  it('restarts a container in place when its image changes: same pod, same IP, new container', async () => {
    await core().createNamespacedPod({ namespace, body: podSpec('inplace', 'ghcr.io/acme/web:v1') });
    await waitFor(async () => app(await readPod('inplace'))?.ready, { what: 'inplace ready' });
    await setGate('inplace', 'True');
    const before = await waitFor(async () => {
      const p = await readPod('inplace');
      return condition(p, 'Ready')?.status === 'True' && p;
    }, { what: 'inplace Ready' });

    const watched = await observe('inplace');
    try {
      await core().patchNamespacedPod(
        { name: 'inplace', namespace, body: { spec: { containers: [{ name: 'app', image: 'ghcr.io/acme/web:v2' }] } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      const after = await waitFor(async () => {
        const p = await readPod('inplace');
        return app(p)?.image === 'ghcr.io/acme/web:v2' && app(p)?.ready && condition(p, 'Ready')?.status === 'True' && p;
      }, { what: 'inplace ready on v2' });

      expect(after.metadata?.uid).toBe(before.metadata?.uid);
      expect(after.status?.podIP).toBe(before.status?.podIP);
      expect(app(after)?.imageID).toBe(imageIDOf('ghcr.io/acme/web:v2'));
      expect(app(after)?.imageID).not.toBe(app(before)?.imageID);
      expect(app(after)?.containerID).not.toBe(app(before)?.containerID);
      expect(app(after)?.restartCount).toBe(app(before)!.restartCount + 1);
      expect(app(after)?.lastState?.terminated?.containerID).toBe(app(before)?.containerID);

      // In between, the new container ran unready, and the pod was out of ContainersReady / Ready.
      const restarting = watched.versions.find((p) => app(p)?.image === 'ghcr.io/acme/web:v2' && !app(p)?.ready);
      expect(restarting).toBeDefined();
      expect(condition(restarting!, 'ContainersReady')?.status).toBe('False');
      expect(condition(restarting!, 'Ready')?.status).toBe('False');
    } finally {
      watched.stop();
    }
  });

  it('never makes a -crashloop image ready, and keeps counting its restarts', async () => {
    await core().createNamespacedPod({ namespace, body: podSpec('crashing', 'registry.example:5000/app:v3-crashloop') });
    const pod = await waitFor(async () => {
      const p = await readPod('crashing');
      return (app(p)?.restartCount ?? 0) >= 2 && p;
    }, { what: 'crashing restartCount >= 2' });
    expect(pod.status?.phase).toBe('Running');
    expect(app(pod)).toMatchObject({ ready: false, started: false, image: 'registry.example:5000/app:v3-crashloop' });
    expect(app(pod)?.state?.waiting?.reason).toBe('CrashLoopBackOff');
    expect(app(pod)?.lastState?.terminated?.exitCode).toBe(1);
    expect(condition(pod, 'ContainersReady')?.status).toBe('False');
    expect(condition(pod, 'Ready')?.status).toBe('False');
  });

  it('confirms a graceful deletion once the grace period is over', async () => {
    await core().createNamespacedPod({ namespace, body: podSpec('leaving', 'nginx', { terminationGracePeriodSeconds: 30 }) });
    await waitFor(async () => app(await readPod('leaving'))?.ready, { what: 'leaving ready' });
    await core().deleteNamespacedPod({ name: 'leaving', namespace, gracePeriodSeconds: 1 });
    const deleting = await readPod('leaving'); // graceful: still there, marked for deletion
    expect(deleting.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    await waitFor(() => podGone('leaving'), { what: 'leaving deleted', timeoutMs: 10_000 });
  });

  it('resumes after its own restart from what the pods say', async () => {
    await core().createNamespacedPod({ namespace, body: podSpec('survivor', 'nginx:1.27') });
    const before = await waitFor(async () => {
      const p = await readPod('survivor');
      return app(p)?.ready && p;
    }, { what: 'survivor ready' });
    await kubelet.stop();
    await core().patchNamespacedPod(
      { name: 'survivor', namespace, body: { spec: { containers: [{ name: 'app', image: 'nginx:1.28' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    kubelet = await startKubelet(kubeletOptions());
    const after = await waitFor(async () => {
      const p = await readPod('survivor');
      return app(p)?.image === 'docker.io/library/nginx:1.28' && app(p)?.ready && p;
    }, { what: 'survivor ready on 1.28' });
    expect(app(after)?.restartCount).toBe(1);
    expect(after.status?.podIP).toBe(before.status?.podIP);
    expect(after.status?.startTime).toEqual(before.status?.startTime);

    // The restarted kubelet learnt which IPs are taken: a new pod gets a free one.
    await core().createNamespacedPod({ namespace, body: podSpec('newcomer', 'nginx') });
    const newcomer = await waitFor(async () => (await readPod('newcomer')).status?.podIP, { what: 'newcomer podIP' });
    const { items } = await core().listNamespacedPod({ namespace });
    const others = items.filter((p) => p.metadata?.name !== 'newcomer').map((p) => p.status?.podIP);
    expect(others).not.toContain(newcomer);
  });

  it('binds no more pods than the node takes: the rest stay Pending, as unschedulable pods do', async () => {
    const full = await createTestNamespace('kubelet-full');
    const small = await startKubelet({ ...kubeletOptions(), nodeName: `sim-${full.name}`, namespace: full.name, maxPods: 1 });
    try {
      for (const name of ['first', 'second']) await core().createNamespacedPod({ namespace: full.name, body: { ...podSpec(name, 'nginx'), metadata: { name, namespace: full.name } } });
      await waitFor(async () => (await core().listNamespacedPod({ namespace: full.name })).items.some((p) => p.spec?.nodeName), { what: 'one pod bound' });
      await new Promise((r) => setTimeout(r, 1500));
      const { items } = await core().listNamespacedPod({ namespace: full.name });
      expect(items.map((p) => p.spec?.nodeName ?? 'Pending').sort()).toEqual(['Pending', `sim-${full.name}`]);
    } finally {
      await full.cleanup({ wait: true });
      await small.stop();
    }
  });

  it('binds only the namespaces it is told to (binds.only, binds.except), leaving the other pods to other nodes', async () => {
    const other = await createTestNamespace('kubelet-binds');
    const podIn = (ns: string, name: string) => ({ ...podSpec(name, 'nginx'), metadata: { name, namespace: ns } });
    const nodeOf = async (ns: string, name: string) => (await core().readNamespacedPod({ name, namespace: ns })).spec?.nodeName ?? 'Pending';
    // Watches `other` but leaves its unscheduled pods to other nodes.
    const except = await startKubelet({ ...kubeletOptions(), nodeName: `sim-except-${other.name}`, namespace: other.name, binds: { except: [other.name] } });
    let only: Kubelet | undefined;
    try {
      await core().createNamespacedPod({ namespace: other.name, body: podIn(other.name, 'there') });
      await new Promise((r) => setTimeout(r, 1500));
      expect(await nodeOf(other.name, 'there')).toBe('Pending');
      // Watches every namespace, binds only `other`'s pods: this file's own namespace stays its kubelet's.
      only = await startKubelet({ ...kubeletOptions(), nodeName: `sim-only-${other.name}`, namespace: undefined, binds: { only: [other.name] } });
      await core().createNamespacedPod({ namespace, body: podIn(namespace, 'here') });
      await waitFor(async () => (await nodeOf(other.name, 'there')) !== 'Pending' && (await nodeOf(namespace, 'here')) !== 'Pending', { what: 'both pods bound' });
      expect([await nodeOf(other.name, 'there'), await nodeOf(namespace, 'here')]).toEqual([`sim-only-${other.name}`, `sim-${namespace}`]);
    } finally {
      await other.cleanup({ wait: true });
      await only?.stop();
      await except.stop();
    }
  });

  it('resizes in place as kubelet does (SPEC §4.9): resources reported, PodResizeInProgress, RestartContainer, Deferred beside other pods', async () => {
    const resources = (cpu: string) => ({ requests: { cpu, memory: '64Mi' }, limits: { cpu: '6', memory: '128Mi' } });
    const policy = [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }];
    await core().createNamespacedPod({ namespace, body: podSpec('rs', 'nginx:1.0', { containers: [{ name: 'app', image: 'nginx:1.0', resources: resources('1'), resizePolicy: policy }] }) });
    const started = await waitFor(async () => { const p = await readPod('rs'); return app(p)?.state?.running && app(p)?.resources ? p : undefined; }, { what: 'rs running' });
    expect(app(started)?.resources).toEqual({ requests: { cpu: '1', memory: '64Mi' }, limits: { cpu: '6', memory: '128Mi' } });
    const client = createKubeClient(kubeConfig());
    await client.request('PATCH', `/api/v1/namespaces/${namespace}/pods/rs/resize`, { patch: 'strategic', body: { spec: { containers: [{ name: 'app', resources: resources('2') }] } } });
    const resized = await waitFor(async () => { const p = await readPod('rs'); return app(p)?.resources?.requests?.cpu === '2' ? p : undefined; }, { what: 'rs resized' });
    expect(app(resized)?.restartCount).toBe(1); // RestartContainer
    expect(resized.status?.conditions?.some((c) => c.type.startsWith('PodResize'))).toBe(false);
    expect(kubeletLog.some((l) => l.includes('rs'))).toBe(true);
    // 2 cpu used by rs; another pod resized to 7 does not fit in the 8 allocatable: Deferred.
    await core().createNamespacedPod({ namespace, body: podSpec('rt', 'nginx:1.0', { containers: [{ name: 'app', image: 'nginx:1.0', resources: resources('1') }] }) });
    await waitFor(async () => app(await readPod('rt'))?.resources, { what: 'rt running' });
    await client.request('PATCH', `/api/v1/namespaces/${namespace}/pods/rt/resize`, { patch: 'strategic', body: { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '7' }, limits: { cpu: '7' } } }] } } });
    const deferred = await waitFor(async () => condition(await readPod('rt'), 'PodResizePending'), { what: 'rt deferred' });
    expect(deferred).toMatchObject({ status: 'True', reason: 'Deferred', message: "Node didn't have enough resource: cpu, requested: 7000, used: 2000, capacity: 8000" });
    await core().deleteNamespacedPod({ name: 'rs', namespace });
    await waitFor(async () => { const p = await readPod('rt'); return app(p)?.resources?.requests?.cpu === '7' && !condition(p, 'PodResizePending') ? p : undefined; }, { what: 'rt resized once rs is gone', timeoutMs: 20_000 });
  });

  it('lets the garbage collector delete a pod whose owner is deleted', async () => {
    const owner = await core().createNamespacedConfigMap({ namespace, body: { metadata: { name: 'owner' }, data: { a: 'b' } } });
    await core().createNamespacedPod({
      namespace,
      body: {
        ...podSpec('owned', 'nginx'),
        metadata: {
          name: 'owned',
          namespace,
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid!, blockOwnerDeletion: true },
          ],
        },
      },
    });
    await waitFor(async () => app(await readPod('owned'))?.ready, { what: 'owned ready' });
    await core().deleteNamespacedConfigMap({ name: 'owner', namespace, propagationPolicy: 'Background' });
    await waitFor(() => podGone('owned'), { what: 'owned deleted by the garbage collector', timeoutMs: 60_000 });
  });
});

describe('image references', () => {
  it('are normalized as containerd reports them, with a stable made-up digest', () => {
    expect(normalizeImage('nginx')).toBe('docker.io/library/nginx:latest');
    expect(normalizeImage('nginx:v1')).toBe('docker.io/library/nginx:v1');
    expect(normalizeImage('acme/web:v1')).toBe('docker.io/acme/web:v1');
    expect(normalizeImage('index.docker.io/acme/web')).toBe('docker.io/acme/web:latest');
    expect(normalizeImage('localhost:5000/web:v1')).toBe('localhost:5000/web:v1');
    expect(normalizeImage('ghcr.io/acme/web@sha256:abc')).toBe('ghcr.io/acme/web@sha256:abc');
    expect(imageIDOf('nginx:v1')).toBe(imageIDOf('docker.io/library/nginx:v1'));
    expect(imageIDOf('nginx:v1')).not.toBe(imageIDOf('nginx:v2'));
    expect(imageIDOf('ghcr.io/acme/web@sha256:abc')).toBe('ghcr.io/acme/web@sha256:abc');
    expect(isCrashLoopImage('acme/web:v2-crashloop')).toBe(true);
    expect(isCrashLoopImage('acme/web-crashloop:v2')).toBe(false);
  });
});
