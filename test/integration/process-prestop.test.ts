// The process-mode kubelet runs a container's preStop hook before it stops the container, as kubelet
// does (dev/kubelet/process/lifecycle-hooks.ts): on a pod's deletion the hook first — waited for at
// most the grace period — then SIGTERM, then SIGKILL at the grace period's end. Knative Serving
// gives every revision's user container preStop `httpGet :8022/wait-for-drain` on queue-proxy: the
// function must not get SIGTERM before queue-proxy has drained. The containers here
// (test/fixtures/process-pods/prestop-server.ts) write what reaches them, and when, to a host file.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, kubeConfig, type TestNamespace } from '../cluster/harness.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { pidAlive as alive } from '../../dev/kubelet/process/state-root.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';

let ns: TestNamespace;
let namespace: string;
let kubelet: Kubelet | undefined;
const core = () => kubeConfig().makeApiClient(CoreV1Api);
const kubeletLog: string[] = [];
const IMAGE = 'neoset.local/prestop-server:1';
const DIR = mkdtempSync(join(tmpdir(), 'neoset-prestop-'));

beforeAll(async () => {
  ns = await createTestNamespace('process-prestop');
  namespace = ns.name;
  kubelet = await startKubelet({
    kubeConfig: kubeConfig(),
    nodeName: `prestop-${namespace}`,
    namespace,
    // Knative's revisions have long grace periods; the default of 2 s would cut every hook here.
    maxGraceSeconds: 10,
    log: (msg) => kubeletLog.push(msg),
    processMode: { imageTable: [{ image: 'neoset.local/prestop-server:*', entrypoint: ['{node}', '{checkout}/test/fixtures/process-pods/prestop-server.ts'] }] },
  });
}, 120_000);

afterAll(async () => {
  try {
    await kubelet?.stop();
    if (!namespace) return;
    const pods = await core().listNamespacedPod({ namespace });
    await Promise.all(pods.items.map((p) => core().deleteNamespacedPod({ name: p.metadata!.name!, namespace, gracePeriodSeconds: 0 }).catch(() => {})));
    await ns?.cleanup();
  } finally {
    rmSync(DIR, { recursive: true, force: true });
    if (process.env.KUBELET_LOG) console.log(kubeletLog.join('\n'));
  }
});

/** A container of the fixture: NAME and PORT as given, its events to the pod's file. */
const fixture = (pod: string, name: string, port: number, more: Partial<V1Container> = {}): V1Container => ({
  name,
  image: IMAGE,
  env: [
    { name: 'NAME', value: name },
    { name: 'PORT', value: String(port) },
    { name: 'EVENTS', value: join(DIR, pod) },
  ],
  ...more,
});

const lines = (pod: string) => (existsSync(join(DIR, pod)) ? readFileSync(join(DIR, pod), 'utf8').split('\n').filter(Boolean).map((line) => line.split(' ')) : []);

/** The pod's events: `{ 'user sigterm': at, … }` (the first of each). */
function events(pod: string): Record<string, number> {
  const seen: Record<string, number> = {};
  for (const [name, what, at] of lines(pod)) seen[`${name} ${what}`] ??= Number(at);
  return seen;
}

/** The pid of a container's program (as it wrote it when listening). */
const pidOf = (pod: string, container: string): number => Number(lines(pod).find(([name, what]) => name === container && what === 'listening')?.[3]);

const netnsPids = (pod: V1Pod): number[] => {
  const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.split(' ')[0])
    .find((n) => n.endsWith(pod.metadata!.uid!.replace(/-/g, '').slice(0, 12)));
  return netns ? execFileSync('ip', ['netns', 'pids', netns], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number) : [];
};

/** Creates the pod, waits until every container listens; deletes it and says when, and when it was gone. */
async function runAndDelete(body: V1Pod, onDeleting?: (deletedAt: number) => Promise<void>): Promise<{ deletedAt: number; goneAt: number; pids: number[] }> {
  const name = body.metadata!.name!;
  await core().createNamespacedPod({ namespace, body: { ...body, metadata: { ...body.metadata, namespace } } });
  const containers = body.spec!.containers.map((c) => c.name);
  await waitFor(() => containers.every((c) => events(name)[`${c} listening`]), { what: `${name} listening`, timeoutMs: 30_000 });
  const pod = await core().readNamespacedPod({ name, namespace });
  const pids = netnsPids(pod);
  expect(pids.length).toBeGreaterThan(0);
  const deletedAt = Date.now();
  await core().deleteNamespacedPod({ name, namespace });
  const watching = onDeleting?.(deletedAt);
  await waitFor(
    async () => {
      try {
        await core().readNamespacedPod({ name, namespace });
        return false;
      } catch {
        return true;
      }
    },
    { what: `${name} deleted`, timeoutMs: 30_000, intervalMs: 100 },
  );
  const goneAt = Date.now();
  await watching;
  return { deletedAt, goneAt, pids };
}

describe('process-mode kubelet: postStart', () => {
  const container = (name: string) => core().readNamespacedPod({ name, namespace }).then((p) => p.status?.containerStatuses?.[0]);

  it('runs postStart after the start and reports the container running (and probes it) only once it has returned', async () => {
    const hook = ['sh', '-c', 'sleep 3; echo "user poststart $(date +%s%3N)" >> "$EVENTS"'];
    await core().createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'post', namespace },
        spec: { terminationGracePeriodSeconds: 1, containers: [fixture('post', 'user', 8080, { lifecycle: { postStart: { exec: { command: hook } } }, readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 } })] },
      },
    });
    await waitFor(() => events('post')['user listening'], { what: 'post listening', timeoutMs: 30_000, intervalMs: 100 });
    const during = await container('post');
    expect(events('post')['user poststart']).toBeUndefined();
    expect(during?.state?.waiting?.reason).toBe('ContainerCreating');
    expect(during?.ready).toBe(false);
    const after = await waitFor(async () => {
      const cs = await container('post');
      return cs?.ready && cs;
    }, { what: 'post Ready', timeoutMs: 20_000 });
    expect(after.state?.running).toBeDefined();
    expect(events('post')['user poststart']).toBeDefined();
    await core().deleteNamespacedPod({ name: 'post', namespace, gracePeriodSeconds: 0 });
  });

  it('kills a container whose postStart fails, and restarts it per its restartPolicy', async () => {
    await core().createNamespacedPod({
      namespace,
      body: { metadata: { name: 'post-fail', namespace }, spec: { terminationGracePeriodSeconds: 1, containers: [fixture('post-fail', 'user', 8080, { lifecycle: { postStart: { exec: { command: ['sh', '-c', 'exit 7'] } } } })] } },
    });
    const cs = await waitFor(async () => {
      const c = await container('post-fail');
      return (c?.restartCount ?? 0) >= 1 && c;
    }, { what: 'post-fail restarted', timeoutMs: 30_000 });
    expect(cs.lastState?.terminated).toBeDefined();
    expect(kubeletLog.some((line) => line.includes('post-fail user: FailedPostStartHook: exec ["sh","-c","exit 7"] exited with 7'))).toBe(true);
    await core().deleteNamespacedPod({ name: 'post-fail', namespace, gracePeriodSeconds: 0 });
  });
});

describe('process-mode kubelet: preStop', () => {
  it("runs a pod's preStop httpGet on the pod's IP and sends SIGTERM only once it has returned (Knative's wait-for-drain)", async () => {
    // The user container's hook asks the other container (queue-proxy's place) to wait 3 s.
    const { deletedAt, goneAt } = await runAndDelete({
      metadata: { name: 'drain' },
      spec: {
        terminationGracePeriodSeconds: 8,
        containers: [
          fixture('drain', 'user', 8080, { lifecycle: { preStop: { httpGet: { port: 8022, path: '/wait?ms=3000' } } } }),
          fixture('drain', 'queue', 8022),
        ],
      },
    });
    const seen = events('drain');
    console.log(`[process-prestop] drain, ms after the delete: ${JSON.stringify(Object.fromEntries(Object.entries(seen).map(([k, at]) => [k, at - deletedAt])))}; gone after ${goneAt - deletedAt} ms`);
    expect(seen['queue wait-start'], 'the preStop hook never reached the pod').toBeDefined();
    expect(seen['queue wait-end']).toBeGreaterThanOrEqual(seen['queue wait-start'] + 2990); // a timer may fire a millisecond early by Date.now()
    expect(seen['user sigterm'], 'the user container got no SIGTERM').toBeDefined();
    expect(seen['user sigterm'], 'SIGTERM before the preStop hook returned').toBeGreaterThanOrEqual(seen['queue wait-end']);
    expect(seen['user sigterm'] - deletedAt).toBeGreaterThanOrEqual(3000);
    // The container without a hook gets SIGTERM at once, as kubelet stops a pod's containers side by side.
    expect(seen['queue sigterm'] - deletedAt).toBeLessThan(2500);
    expect(goneAt - deletedAt).toBeLessThan(8000 + 3000);
  });

  it("runs a preStop exec in the container's namespaces and environment before SIGTERM", async () => {
    const hook = ['sh', '-c', 'echo "user exec-hook-$(hostname) $(date +%s%3N)" >> "$EVENTS"; sleep 2; echo "user exec-done $(date +%s%3N)" >> "$EVENTS"'];
    const { deletedAt } = await runAndDelete({
      metadata: { name: 'exec' },
      spec: { terminationGracePeriodSeconds: 8, containers: [fixture('exec', 'user', 8080, { lifecycle: { preStop: { exec: { command: hook } } } })] },
    });
    const seen = events('exec');
    console.log(`[process-prestop] exec, ms after the delete: ${JSON.stringify(Object.fromEntries(Object.entries(seen).map(([k, at]) => [k, at - deletedAt])))}`);
    expect(seen['user exec-hook-exec'], 'the hook did not run with the pod as its hostname and $EVENTS from the container').toBeDefined();
    expect(seen['user sigterm']).toBeGreaterThanOrEqual(seen['user exec-done']);
  });

  it('kills at the grace period a container whose preStop hook outlasts it, without SIGTERM before', async () => {
    let userAliveMidway: boolean | undefined;
    const result = await runAndDelete(
      {
        metadata: { name: 'overrun' },
        spec: {
          terminationGracePeriodSeconds: 3,
          containers: [
            fixture('overrun', 'user', 8080, { lifecycle: { preStop: { httpGet: { port: 8022, path: '/wait?ms=60000' } } } }),
            fixture('overrun', 'queue', 8022),
          ],
        },
      },
      async (deletedAt) => {
        await new Promise((r) => setTimeout(r, Math.max(0, deletedAt + 2000 - Date.now())));
        userAliveMidway = alive(pidOf('overrun', 'user'));
      },
    );
    const seen = events('overrun');
    console.log(`[process-prestop] overrun, ms after the delete: ${JSON.stringify(Object.fromEntries(Object.entries(seen).map(([k, at]) => [k, at - result.deletedAt])))}; gone after ${result.goneAt - result.deletedAt} ms`);
    expect(seen['queue wait-start']).toBeDefined();
    expect(seen['user sigterm'], 'SIGTERM while the preStop hook ran').toBeUndefined();
    expect(pidOf('overrun', 'user')).toBeGreaterThan(0);
    expect(userAliveMidway, 'killed before its grace period ended').toBe(true);
    expect(result.goneAt - result.deletedAt).toBeGreaterThanOrEqual(2900);
    expect(result.goneAt - result.deletedAt).toBeLessThan(3000 + 4000);
    expect(result.pids.filter(alive)).toEqual([]);
  });
});
