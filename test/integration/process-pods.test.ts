// Process mode of the simulated kubelet on the real control plane: pods whose image is in the image
// table run as real processes in network namespaces wired by the real CNI plugins (bridge, host-local,
// loopback): pod IPs the host and other pods reach, env and volumes as kubelet resolves them, real
// probes, restarts with restartCount and lastState, and nothing left once pods or the kubelet stop.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, kubeConfig, type TestNamespace } from '../cluster/harness.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { CHECKOUT } from '../../dev/kubelet/process/image-table.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';

let ns: TestNamespace;
let namespace: string;
let kubelet: Kubelet | undefined;
let subnet: string;
let staleSleeper: number;
const core = () => kubeConfig().makeApiClient(CoreV1Api);
const kubeletLog: string[] = [];
const ECHO = 'neoset.local/echo-server:1';
/** The one directory hostPath volumes may name (the dev stack gives its own --dir). */
const HOST_DIR = mkdtempSync(join(tmpdir(), 'neoset-process-pods-host-'));

const netnsList = () => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
const index = () => subnet.split('.')[2];
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// What a crashed run leaves: a namespace with a process in it, a bridge, a state directory whose
// owner is gone. Index 250: no test cluster has that many nodes.
function leaveStaleNode(): number {
  // spawnSync: an earlier run that failed may have left them already (which is the point).
  spawnSync('ip', ['netns', 'add', 'neoset-250-0123456789ab']);
  spawnSync('ip', ['link', 'add', 'neoset250', 'type', 'bridge']);
  mkdirSync('/run/neoset/neoset250', { recursive: true });
  writeFileSync('/run/neoset/neoset250/owner', '999999999\n');
  const sleeper = spawn('ip', ['netns', 'exec', 'neoset-250-0123456789ab', 'sleep', '600'], { detached: true, stdio: 'ignore' });
  sleeper.unref();
  return sleeper.pid!;
}

beforeAll(async () => {
  staleSleeper = leaveStaleNode();
  ns = await createTestNamespace('process-pods');
  namespace = ns.name;
  kubelet = await startKubelet({
    kubeConfig: kubeConfig(),
    nodeName: `proc-${namespace}`,
    namespace,
    startDelayMs: 100,
    readyDelayMs: 200,
    log: (msg) => kubeletLog.push(msg),
    processMode: {
      // A user's entry, as NEOSET_IMAGE_TABLE would add it.
      imageTable: [
        { image: 'neoset.local/echo-server:*', entrypoint: ['{node}', '{checkout}/test/fixtures/process-pods/echo-server.ts'], env: { PORT: '8080' } },
        // Listens within a fraction of a second (the readiness timing case).
        { image: 'neoset.local/python-http:*', entrypoint: ['/usr/bin/python3', '-m', 'http.server', '8080'], workingDir: '/tmp' },
      ],
      backoffMs: 500,
      hostPathRoot: HOST_DIR,
    },
  });
  const node = await core().readNode({ name: kubelet.nodeName });
  subnet = node.spec!.podCIDR!.replace(/\.0\/24$/, '');
  await core().createNamespacedConfigMap({ namespace, body: { metadata: { name: 'cfg' }, data: { greeting: 'hello' } } });
  await core().createNamespacedSecret({ namespace, body: { metadata: { name: 'sec' }, stringData: { password: 's3cret' } } });
}, 120_000);

afterAll(async () => {
  try {
    await kubelet?.stop();
    if (!namespace) return;
    // Nothing confirms deletions once the kubelet is stopped: the pods go at once.
    const pods = await core().listNamespacedPod({ namespace });
    await Promise.all(pods.items.map((p) => core().deleteNamespacedPod({ name: p.metadata!.name!, namespace, gracePeriodSeconds: 0 }).catch(() => {})));
    await ns?.cleanup();
  } finally {
    rmSync(HOST_DIR, { recursive: true, force: true });
    if (process.env.KUBELET_LOG) console.log(kubeletLog.join('\n'));
  }
});

function echoPod(name: string, container: Partial<V1Container> = {}, spec: Partial<V1Pod['spec']> = {}): V1Pod {
  return { metadata: { name, namespace }, spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'app', image: ECHO, ...container }], ...spec } };
}

const readPod = (name: string) => core().readNamespacedPod({ name, namespace });
const ready = (pod: V1Pod) => pod.status?.conditions?.find((c) => c.type === 'Ready')?.status;
const running = (name: string) =>
  waitFor(async () => {
    const p = await readPod(name);
    return p.status?.containerStatuses?.[0]?.state?.running && p.status.podIP ? p : undefined;
  }, { what: `${name} running`, timeoutMs: 20_000 });
const get = async (ip: string, path: string, init?: RequestInit) => {
  const r = await fetch(`http://${ip}:8080${path}`, { ...init, signal: AbortSignal.timeout(3000) });
  return { status: r.status, text: await r.text() };
};

describe('process-mode kubelet', () => {
  let a: V1Pod;

  it('removed at its start what a crashed run had left (only names it gives)', () => {
    expect(netnsList()).not.toContain('neoset-250-');
    expect(execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })).not.toContain(': neoset250:');
    expect(existsSync('/run/neoset/neoset250')).toBe(false);
    expect(alive(staleSleeper)).toBe(false);
  });

  it('runs an image-table pod as a process with its own IP, env, volumes and probes', async () => {
    const pod = echoPod('a', {
      env: [
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'SA', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
        { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'greeting' } } },
        { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'sec', key: 'password' } } },
        { name: 'COMPOSED', value: '$(GREETING)-$(POD_NAME)' },
        // The program's PATH is the pod's (the kubelet's own programs never look in it).
        { name: 'PATH', value: '/opt/neoset-test/bin:/usr/bin:/bin' },
      ],
      volumeMounts: [{ name: 'cfg', mountPath: '/etc/neoset-test/cfg', readOnly: true }],
      readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 1, failureThreshold: 1 },
      livenessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
    });
    pod.spec!.volumes = [{ name: 'cfg', configMap: { name: 'cfg' } }];
    await core().createNamespacedPod({ namespace, body: pod });
    a = await running('a');
    const ip = a.status!.podIP!;
    expect(ip.startsWith(`${subnet}.`)).toBe(true);
    expect(netnsList()).toContain(`neoset-${index()}-${a.metadata!.uid!.replace(/-/g, '').slice(0, 12)}`);

    // The host reaches the pod through the node's bridge.
    expect(await waitFor(() => get(ip, '/healthz').catch(() => undefined), { what: 'a /healthz' })).toEqual({ status: 200, text: 'ok' });
    const env = JSON.parse((await get(ip, '/env')).text) as Record<string, string>;
    expect(env).toMatchObject({
      POD_NAME: 'a',
      POD_NAMESPACE: namespace,
      POD_IP: ip,
      NODE_NAME: kubelet!.nodeName,
      SA: 'default',
      GREETING: 'hello',
      PASSWORD: 's3cret',
      COMPOSED: 'hello-a',
      PORT: '8080',
      HOSTNAME: 'a',
      PATH: '/opt/neoset-test/bin:/usr/bin:/bin',
    });
    expect(env.KUBECONFIG).toBeUndefined(); // the host's environment is not the container's
    expect((await get(ip, '/file?path=/etc/neoset-test/cfg/greeting')).text).toBe('hello');
    expect((await get(ip, '/hostname')).text).toBe('a');
    const resolv = (await get(ip, '/file?path=/etc/resolv.conf')).text;
    expect(resolv).toContain(`search ${namespace}.svc.cluster.local svc.cluster.local cluster.local`);
    expect(resolv).toContain('nameserver 10.96.0.10');
    expect(resolv).toContain('options ndots:5');
    // The ServiceAccount admission plugin's projected volume, where client libraries look for it.
    const token = await get(ip, '/file?path=/var/run/secrets/kubernetes.io/serviceaccount/token');
    expect(token.text.split('.')).toHaveLength(3);
    expect((await get(ip, '/file?path=/var/run/secrets/kubernetes.io/serviceaccount/namespace')).text).toBe(namespace);

    // The readiness probe fails until the server says otherwise: not Ready, then Ready.
    await new Promise((r) => setTimeout(r, 2500));
    expect(ready(await readPod('a'))).toBe('False');
    expect((await get(ip, '/ready', { method: 'POST' })).text).toBe('true');
    await waitFor(async () => ready(await readPod('a')) === 'True', { what: 'a Ready', timeoutMs: 10_000 });
  });

  it('lets a second pod reach the first by its IP (its exec readiness probe asks the first)', async () => {
    const check = `fetch('http://${a.status!.podIP}:8080/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
    await core().createNamespacedPod({
      namespace,
      body: echoPod('b', { readinessProbe: { exec: { command: ['node', '-e', check] }, periodSeconds: 1, timeoutSeconds: 10 } }),
    });
    const b = await waitFor(async () => {
      const p = await readPod('b');
      return ready(p) === 'True' && p;
    }, { what: 'b Ready by its exec probe', timeoutMs: 20_000 });
    expect(b.status!.podIP).not.toBe(a.status!.podIP);
    const answer = await waitFor(() => get(b.status!.podIP!, `/fetch?url=http://${a.status!.podIP}:8080/healthz`).catch(() => undefined), { what: 'b → a' });
    expect(answer).toEqual({ status: 200, text: '200 ok' });
  });

  it('restarts a container that exits, with restartCount and lastState.terminated', async () => {
    await core().createNamespacedPod({ namespace, body: echoPod('crash', { args: ['--exit-after', '300', '3'] }) });
    const pod = await waitFor(async () => {
      const p = await readPod('crash');
      const cs = p.status?.containerStatuses?.[0];
      return (cs?.restartCount ?? 0) >= 2 && cs?.lastState?.terminated ? p : undefined;
    }, { what: 'crash restarted twice', timeoutMs: 20_000 });
    const cs = pod.status!.containerStatuses![0];
    expect(cs.lastState?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(pod.status?.phase).toBe('Running');
  });

  it('keeps simulating images that are not in the table', async () => {
    await core().createNamespacedPod({ namespace, body: { metadata: { name: 'sim', namespace }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } } });
    const sim = await waitFor(async () => {
      const p = await readPod('sim');
      return ready(p) === 'True' && p;
    }, { what: 'sim Ready' });
    expect(sim.status?.podIP?.startsWith(`${subnet}.`)).toBe(true);
    expect(netnsList()).not.toContain(sim.metadata!.uid!.replace(/-/g, '').slice(0, 12));
  });

  it('is Ready about a second after it listens, not a readiness period later (kubelet probes at its first pod sync)', async () => {
    // periodSeconds 10: the probe at the start fails (nothing listens yet); kubelet's pod sync after
    // the PLEG relist (1 s) runs it once more, as Knative's adapters rely on (Ready in ~2 s, not 11).
    const created = Date.now();
    await core().createNamespacedPod({
      namespace,
      body: { metadata: { name: 'quick', namespace }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'http', image: 'neoset.local/python-http:1', readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 10 } }] } },
    });
    await waitFor(async () => ready(await readPod('quick')) === 'True', { what: 'quick Ready', timeoutMs: 20_000, intervalMs: 100 });
    const ms = Date.now() - created;
    console.log(`[process-pods] a pod listening at once, periodSeconds 10: Ready ${ms} ms after its creation`);
    expect(ms).toBeLessThan(6000);
    await core().deleteNamespacedPod({ name: 'quick', namespace, gracePeriodSeconds: 0 });
  });

  // Process-mode pods run as root on the host's file system (issue 34): whoever may create a pod in
  // the dev cluster must not be given the host's paths or a root shell by it.
  const waitingReason = (name: string) =>
    waitFor(async () => {
      const cs = (await readPod(name)).status?.containerStatuses?.[0];
      return cs?.state?.waiting?.reason === 'CreateContainerConfigError' || cs?.state?.running ? cs : undefined;
    }, { what: `${name} running or refused`, timeoutMs: 20_000 });

  it("bind-mounts a hostPath under the stack's directory only, symlinks resolved", async () => {
    mkdirSync(join(HOST_DIR, 'data'));
    writeFileSync(join(HOST_DIR, 'data', 'greeting'), 'from the stack dir');
    symlinkSync('/etc', join(HOST_DIR, 'etc-link'));
    const withHostPath = (name: string, path: string) => {
      const pod = echoPod(name, { volumeMounts: [{ name: 'host', mountPath: '/mnt/neoset-host' }] });
      pod.spec!.volumes = [{ name: 'host', hostPath: { path } }];
      return core().createNamespacedPod({ namespace, body: pod });
    };
    await withHostPath('host-in', join(HOST_DIR, 'data'));
    await withHostPath('host-etc', '/etc');
    await withHostPath('host-link', join(HOST_DIR, 'etc-link'));
    const inside = await running('host-in');
    expect((await waitFor(() => get(inside.status!.podIP!, '/file?path=/mnt/neoset-host/greeting').catch(() => undefined), { what: 'host-in' })).text).toBe('from the stack dir');
    for (const name of ['host-etc', 'host-link']) {
      const cs = await waitingReason(name);
      console.log(`[process-pods] ${name}: ${JSON.stringify(cs.state)}`);
      expect(cs.state?.waiting?.reason, `${name} ran with the host's /etc mounted`).toBe('CreateContainerConfigError');
      expect(cs.state?.waiting?.message).toContain(`is outside ${HOST_DIR}`);
    }
    await Promise.all(['host-in', 'host-etc', 'host-link'].map((name) => core().deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 })));
  });

  it("never runs a pod's command for NeoSet's image (it would run as root on the host)", async () => {
    const owned = join(HOST_DIR, 'owned');
    await core().createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'neoset-cmd', namespace },
        spec: {
          terminationGracePeriodSeconds: 0,
          containers: [{ name: 'fn', image: 'ghcr.io/neoset/neoset:0.1.0', env: [{ name: 'NEOSET_FUNCTION', value: 'reconcile' }], command: ['sh', '-c', `id > ${owned}; sleep 600`] }],
        },
      },
    });
    const cs = await waitingReason('neoset-cmd');
    console.log(`[process-pods] neoset-cmd: ${JSON.stringify(cs.state)}`);
    expect(cs.state?.waiting?.reason, 'the command ran').toBe('CreateContainerConfigError');
    expect(cs.state?.waiting?.message).toContain('a command is not run');
    expect(existsSync(owned)).toBe(false);
    await core().deleteNamespacedPod({ name: 'neoset-cmd', namespace, gracePeriodSeconds: 0 });
  });

  it("refuses a volume mounted over the code NeoSet's image runs, and that code never runs", async () => {
    // A ConfigMap over functions/reconcile/server.ts of the checkout, as written and through a
    // symlink: the kubelet would run it as root on the host, in place of the function.
    symlinkSync(join(CHECKOUT, 'functions'), join(HOST_DIR, 'functions-link'));
    const marker = (name: string) => join(HOST_DIR, `ran-${name}`);
    const code = `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(join(HOST_DIR, 'ran-'))} + process.env.HOSTNAME, 'uid ' + process.getuid());\nsetInterval(() => {}, 60_000);\n`;
    await core().createNamespacedConfigMap({ namespace, body: { metadata: { name: 'not-reconcile' }, data: { 'server.ts': code } } });
    const targets = { 'mount-code': join(CHECKOUT, 'functions', 'reconcile', 'server.ts'), 'mount-link': join(HOST_DIR, 'functions-link', 'reconcile', 'server.ts') };
    for (const [name, mountPath] of Object.entries(targets)) {
      await core().createNamespacedPod({
        namespace,
        body: {
          metadata: { name, namespace },
          spec: {
            terminationGracePeriodSeconds: 0,
            containers: [{ name: 'fn', image: 'ghcr.io/neoset/neoset:0.1.0', env: [{ name: 'NEOSET_FUNCTION', value: 'reconcile' }], volumeMounts: [{ name: 'code', mountPath, subPath: 'server.ts' }] }],
            volumes: [{ name: 'code', configMap: { name: 'not-reconcile' } }],
          },
        },
      });
    }
    for (const name of Object.keys(targets)) {
      const cs = await waitFor(async () => {
        const state = (await readPod(name)).status?.containerStatuses?.[0]?.state;
        return state?.waiting?.reason === 'CreateContainerConfigError' || existsSync(marker(name)) ? (state ?? {}) : undefined;
      }, { what: `${name} refused, or its ConfigMap's code run`, timeoutMs: 30_000 });
      console.log(`[process-pods] ${name}: ${JSON.stringify(cs)}`);
      const ran = existsSync(marker(name)) ? `the ConfigMap's server.ts ran (${readFileSync(marker(name), 'utf8')})` : 'not refused';
      expect(cs.waiting?.reason, ran).toBe('CreateContainerConfigError');
      expect(cs.waiting?.message).toContain(`is a file the image's command line names ${CHECKOUT}/functions/reconcile/server.ts`);
    }
    // The host's file is untouched, and the refused code never ran.
    await new Promise((r) => setTimeout(r, 2000));
    expect(Object.keys(targets).filter((name) => existsSync(marker(name)))).toEqual([]);
    expect(readFileSync(targets['mount-code'], 'utf8')).not.toContain('process.getuid');
    await Promise.all(Object.keys(targets).map((name) => core().deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 })));
  });

  it("runs no code of a pod's choosing for NeoSet's image: exec probes and hooks, the kubelet's tools by PATH, workingDir, HOME", async () => {
    // A tenant's kit, as another pod's ConfigMap volume puts it on the host (/run/neoset/…/volumes/kit):
    // programs named as the kubelet's tools, a functions/reconcile/server.ts, a $HOME/.node_modules.
    const marker = (what: string) => join(HOST_DIR, `ran-${what}`);
    const mark = (what: string) => `#!/bin/sh\necho "uid $(/usr/bin/id -u)" > ${marker(what)}\n`;
    const tools = ['ip', 'unshare', 'sh', 'mount', 'mkdir', 'dirname', 'hostname', 'nsenter', 'env'];
    const js = (what: string) => `require('node:fs').writeFileSync(${JSON.stringify(marker(what))}, 'uid ' + process.getuid());\n`;
    await core().createNamespacedConfigMap({
      namespace,
      body: {
        metadata: { name: 'kit' },
        data: {
          ...Object.fromEntries(tools.map((tool) => [tool, mark(`path-${tool}`)])),
          'server.ts': `${js('workdir')}setInterval(() => {}, 60_000);\n`,
          'bufferutil.js': `${js('home')}module.exports = { mask() {}, unmask() {} };\n`,
        },
      },
    });
    const carrier = echoPod('carrier', { volumeMounts: [{ name: 'kit', mountPath: '/etc/kit' }] });
    carrier.spec!.volumes = [
      {
        name: 'kit',
        configMap: {
          name: 'kit',
          items: [
            ...tools.map((tool) => ({ key: tool, path: tool, mode: 0o755 })),
            { key: 'server.ts', path: 'functions/reconcile/server.ts' },
            { key: 'bufferutil.js', path: '.node_modules/bufferutil/index.js' },
          ],
        },
      },
    ];
    await core().createNamespacedPod({ namespace, body: carrier });
    const kit = join('/run/neoset', `neoset${index()}`, 'pods', (await running('carrier')).metadata!.uid!, 'volumes', 'kit');
    expect(existsSync(join(kit, 'ip'))).toBe(true);

    const sh = (what: string) => ['sh', '-c', mark(what).split('\n')[1]];
    const neoset = (name: string, container: Partial<V1Container>): V1Pod => ({
      metadata: { name, namespace },
      spec: {
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'fn', image: 'ghcr.io/neoset/neoset:0.1.0', ...container, env: [{ name: 'NEOSET_FUNCTION', value: 'reconcile' }, ...(container.env ?? [])] }],
      },
    });
    const cases: Record<string, { pod: V1Pod; refused?: string; markers: string[] }> = {
      'probe-exec': { pod: neoset('probe-exec', { readinessProbe: { exec: { command: sh('probe-exec') }, periodSeconds: 1 } }), refused: 'an exec readinessProbe is not run', markers: ['probe-exec'] },
      'liveness-exec': { pod: neoset('liveness-exec', { livenessProbe: { exec: { command: sh('liveness-exec') }, periodSeconds: 1 } }), refused: 'an exec livenessProbe is not run', markers: ['liveness-exec'] },
      'hook-exec': { pod: neoset('hook-exec', { lifecycle: { postStart: { exec: { command: sh('hook-exec') } } } }), refused: 'an exec postStart hook is not run', markers: ['hook-exec'] },
      // PATH is the program's: the pod runs, and none of the kubelet's tools is looked up in it.
      'path-tools': { pod: neoset('path-tools', { env: [{ name: 'PATH', value: kit }] }), markers: tools.map((tool) => `path-${tool}`) },
      workdir: { pod: neoset('workdir', { workingDir: kit }), refused: `workingDir ${kit} is not the image's`, markers: ['workdir'] },
      home: { pod: neoset('home', { env: [{ name: 'HOME', value: kit }] }), refused: 'HOME is not honoured', markers: ['home'] },
    };
    for (const { pod } of Object.values(cases)) await core().createNamespacedPod({ namespace, body: pod });
    const ran = (name: string) => cases[name].markers.filter((m) => existsSync(marker(m))).map((m) => `${m}: ${readFileSync(marker(m), 'utf8').trim()}`);
    for (const [name, { refused }] of Object.entries(cases)) {
      const state = await waitFor(async () => {
        const s = (await readPod(name)).status?.containerStatuses?.[0]?.state;
        return s?.waiting?.reason === 'CreateContainerConfigError' || s?.running || ran(name).length > 0 ? (s ?? {}) : undefined;
      }, { what: `${name} refused, running, or its code run`, timeoutMs: 30_000 });
      // A probe or hook runs a moment after the start: give it time to.
      await new Promise((r) => setTimeout(r, 3000));
      console.log(`[process-pods] ${name}: ${JSON.stringify(state)} ran: ${JSON.stringify(ran(name))}`);
      // Soft: every case is tried and reported.
      expect.soft(ran(name), `${name}: the pod's code ran on the host`).toEqual([]);
      if (refused) {
        expect.soft(state.waiting?.reason, `${name} not refused`).toBe('CreateContainerConfigError');
        expect.soft(state.waiting?.message, name).toContain(refused);
      } else expect.soft((await readPod(name)).status?.containerStatuses?.[0]?.state?.running, `${name} not running`).toBeDefined();
    }
    await Promise.all(['carrier', ...Object.keys(cases)].map((name) => core().deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 })));
  });

  it('removes the processes and the network namespace of a deleted pod', async () => {
    const netns = `neoset-${index()}-${a.metadata!.uid!.replace(/-/g, '').slice(0, 12)}`;
    const pids = execFileSync('ip', ['netns', 'pids', netns], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
    expect(pids.length).toBeGreaterThan(0);
    await core().deleteNamespacedPod({ name: 'a', namespace });
    await waitFor(async () => {
      try {
        await readPod('a');
        return false;
      } catch {
        return true;
      }
    }, { what: 'a deleted', timeoutMs: 15_000 });
    expect(netnsList()).not.toContain(netns);
    expect(pids.filter(alive)).toEqual([]);
  });

  it('leaves no process, namespace, bridge or file behind when the kubelet stops', async () => {
    const before = netnsList().split('\n').filter((n) => n.startsWith(`neoset-${index()}-`));
    expect(before.length).toBeGreaterThanOrEqual(2); // b and crash
    const pids = before.flatMap((n) => execFileSync('ip', ['netns', 'pids', n.split(' ')[0]], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number));
    await kubelet!.stop();
    kubelet = undefined;
    expect(netnsList()).not.toContain(`neoset-${index()}-`);
    expect(execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })).not.toMatch(new RegExp(`: neoset${index()}:`));
    expect(existsSync(`/run/neoset/neoset${index()}`)).toBe(false);
    expect(pids.filter(alive)).toEqual([]);
  });
});
