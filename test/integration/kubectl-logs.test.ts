// `kubectl logs` of process-mode pods on the real API server: kube-apiserver calls the simulated
// kubelet's HTTPS port (dev/kubelet/log-server.ts) at the Node's ExternalIP and daemonEndpoints port
// with its --kubelet-client-certificate; the kubelet authenticates that certificate against the
// cluster's client CA and authorizes it by SubjectAccessReview (nodes/proxy), then serves the
// container's log file: the current start, --previous, --tail, --limit-bytes, -f until the container
// ends. A caller without the API server's certificate is refused.

import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { dirname, join } from 'node:path';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueClientCert, type CertKeyPair } from '../../dev/cluster/certs.ts';
import { KUBELET_CLIENT_USER } from '../../dev/cluster/control-plane.ts';
import { startKubelet, type Kubelet } from '../../dev/kubelet/kubelet.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';
import { createTestNamespace, kubeconfigPath, kubeConfig, kubectl, type TestNamespace } from '../cluster/harness.ts';

let ns: TestNamespace;
let namespace: string;
let kubelet: Kubelet | undefined;
let port: number;
const core = () => kubeConfig().makeApiClient(CoreV1Api);
const kubeletLog: string[] = [];
const SHELL = 'neoset.local/shell:1';

/** The control plane's own files (control-plane.ts filesIn): the API server's kubelet client certificate and the cluster CA. */
const pki = (name: string) => readFileSync(join(dirname(kubeconfigPath()), 'pki', name), 'utf8');
const apiserverClient = (): CertKeyPair => ({ certPem: pki('apiserver-kubelet-client.crt'), keyPem: pki('apiserver-kubelet-client.key') });

/** A GET to the kubelet's port as anyone may send it: with the given client certificate or none. */
function kubeletGet(path: string, client?: CertKeyPair): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'GET', rejectUnauthorized: false, cert: client?.certPem, key: client?.keyPem, timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject).on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

function shellPod(name: string, script: string, restartPolicy = 'Always'): V1Pod {
  return {
    metadata: { name, namespace },
    spec: { restartPolicy, terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: SHELL, command: ['/bin/sh', '-c', script] }] },
  };
}

const readPod = (name: string) => core().readNamespacedPod({ name, namespace });
const lines = (text: string) => text.split('\n').filter(Boolean);

beforeAll(async () => {
  ns = await createTestNamespace('kubectl-logs');
  namespace = ns.name;
  kubelet = await startKubelet({
    kubeConfig: kubeConfig(),
    nodeName: `logs-${namespace}`,
    namespace,
    startDelayMs: 100,
    readyDelayMs: 200,
    log: (msg) => kubeletLog.push(msg),
    processMode: { imageTable: [{ image: 'neoset.local/shell:*', entrypoint: ['/bin/sh'] }], backoffMs: 500, maxBackoffMs: 1000 },
  });
  const node = await core().readNode({ name: kubelet.nodeName });
  port = node.status!.daemonEndpoints!.kubeletEndpoint!.Port;
}, 120_000);

afterAll(async () => {
  await kubelet?.stop();
  if (process.env.KUBELET_LOG) console.log(kubeletLog.join('\n'));
  if (!namespace) return;
  // With the kubelet gone nothing confirms a graceful deletion: the pods go at once.
  await core().deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(() => {});
  await ns.cleanup();
});

describe('kubectl logs of process-mode pods', () => {
  it('reports where the API server reaches the kubelet, leaving what pods see as it was', async () => {
    const node = await core().readNode({ name: kubelet!.nodeName });
    expect(node.status?.addresses).toEqual(
      expect.arrayContaining([
        { type: 'ExternalIP', address: '127.0.0.1' },
        expect.objectContaining({ type: 'InternalIP', address: expect.stringMatching(/^172\.18\.0\.\d+$/) }),
      ]),
    );
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(10250);
  });

  it('serves the current start, --previous after a restart, --tail and --limit-bytes', async () => {
    // Each start writes its own first line, then five more, and exits after 8 s (restarted at once).
    await core().createNamespacedPod({ namespace, body: shellPod('counter', 'echo "start `date +%s%N`"; for i in 1 2 3 4 5; do echo "line $i"; done; sleep 8; exit 1') });
    const first = await waitFor(async () => {
      const r = await kubectl(['logs', '-n', namespace, 'counter']);
      return r.code === 0 && lines(r.stdout).length === 6 ? r.stdout : undefined;
    }, { what: 'counter logs', timeoutMs: 20_000 });
    expect(lines(first).slice(1)).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
    const none = await kubectl(['logs', '-n', namespace, 'counter', '--previous']);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('previous terminated container "app" in pod "counter" not found');

    // After the restart (the second start running): the current log is the second start's, --previous the first's.
    await waitFor(async () => {
      const cs = (await readPod('counter')).status?.containerStatuses?.[0];
      return cs?.restartCount === 1 && cs.state?.running !== undefined;
    }, { what: 'counter restarted', timeoutMs: 20_000 });
    const [current, previous, tail, limited] = await Promise.all([
      kubectl(['logs', '-n', namespace, 'counter']),
      kubectl(['logs', '-n', namespace, 'counter', '--previous']),
      kubectl(['logs', '-n', namespace, 'counter', '--tail=2']),
      kubectl(['logs', '-n', namespace, 'counter', '--limit-bytes=7']),
    ]);
    expect(previous.stdout).toBe(first);
    expect(lines(current.stdout)[0]).toMatch(/^start \d+$/);
    expect(lines(current.stdout)[0]).not.toBe(lines(first)[0]);
    expect(lines(current.stdout).slice(1)).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
    expect(tail.stdout).toBe('line 4\nline 5\n');
    expect(limited.stdout).toBe('start 1');
    expect((await kubectl(['logs', '-n', namespace, 'counter', '--tail=0'])).stdout).toBe('');
  }, 60_000);

  it('follows (-f) until the container ends', async () => {
    await core().createNamespacedPod({ namespace, body: shellPod('follow', 'echo one; sleep 2; echo two; sleep 2; echo three', 'Never') });
    await waitFor(async () => (await readPod('follow')).status?.containerStatuses?.[0]?.state?.running !== undefined, { what: 'follow running', timeoutMs: 20_000 });
    const started = Date.now();
    const followed = await kubectl(['logs', '-n', namespace, 'follow', '-f']);
    const elapsed = Date.now() - started;
    expect(followed.code).toBe(0);
    expect(followed.stdout).toBe('one\ntwo\nthree\n');
    // It ended by itself once the container had exited (about 4 s after its start), not at once.
    expect(elapsed).toBeGreaterThan(2000);
    expect(elapsed).toBeLessThan(15_000);
    expect((await readPod('follow')).status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
  }, 60_000);

  it('answers 404 for a container or pod it does not run, 400 for names that are not DNS names', async () => {
    // kube-apiserver itself refuses a container not in the pod's spec, before calling the kubelet.
    const viaApi = await kubectl(['logs', '-n', namespace, 'counter', '-c', 'nope']);
    expect(viaApi.code).not.toBe(0);
    expect(viaApi.stderr).toContain('container nope is not valid for pod counter');
    // The kubelet, called as the API server calls it.
    const client = apiserverClient();
    expect(await kubeletGet(`/containerLogs/${namespace}/counter/nope`, client)).toEqual({ status: 404, body: 'container "nope" not found in pod "counter"\n' });
    expect(await kubeletGet(`/containerLogs/${namespace}/ghost/app`, client)).toEqual({ status: 404, body: 'pod "ghost" does not exist\n' });
    expect(await kubeletGet(`/containerLogs/other-ns/counter/app`, client)).toMatchObject({ status: 404 });
    expect(await kubeletGet(`/containerLogs/${namespace}/..%2F..%2Fetc/passwd`, client)).toMatchObject({ status: 400, body: 'pod: not a DNS subdomain\n' });
    // Dot segments are resolved as in any URL: /containerLogs/<ns>/ is no log's path.
    expect(await kubeletGet(`/containerLogs/${namespace}/counter/..`, client)).toMatchObject({ status: 404 });
    expect(await kubeletGet(`/containerLogs/${namespace}/counter/%2e%2e/%2e%2e/%2e%2e/etc/passwd`, client)).toMatchObject({ status: 404 });
    expect(await kubeletGet(`/containerLogs/${namespace}/counter/app?tailLines=-1`, client)).toMatchObject({ status: 400 });
    expect(await kubeletGet(`/containerLogs/${namespace}/counter/app?limitBytes=99999999999999999999`, client)).toMatchObject({ status: 400 });
    expect(await kubeletGet(`/containerLogs/${namespace}/counter/app?tailLines=1&tailLines=2`, client)).toMatchObject({ status: 400 });
    expect(await kubeletGet(`/containerLogs/${namespace}/counter/app?tailLines=1`, client)).toEqual({ status: 200, body: 'line 5\n' });
  });

  it('refuses a caller without the API server\'s client certificate', async () => {
    const path = `/containerLogs/${namespace}/counter/app`;
    // No certificate at all.
    expect(await kubeletGet(path)).toEqual({ status: 401, body: 'Unauthorized\n' });
    // The API server's user name, from a CA the cluster does not trust.
    const stranger = await createCa('not-the-cluster-ca');
    expect(await kubeletGet(path, await issueClientCert(stranger, { commonName: KUBELET_CLIENT_USER }))).toEqual({ status: 401, body: 'Unauthorized\n' });
    // A user of the cluster's CA who may not proxy to nodes.
    const user = await issueClientCert({ certPem: pki('ca.crt'), keyPem: pki('ca.key') }, { commonName: 'mallory', organizations: ['developers'] });
    const denied = await kubeletGet(path, user);
    expect(denied.status).toBe(403);
    expect(denied.body).toContain('Forbidden (user=mallory, verb=get, resource=nodes, subresource=proxy)');
    // Nothing of the log leaked in any of those answers; the API server's certificate is let in.
    expect((await kubeletGet(path, apiserverClient())).status).toBe(200);
  });

  it('answers an empty log for a simulated pod of the node', async () => {
    await core().createNamespacedPod({ namespace, body: { metadata: { name: 'sim', namespace }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } } });
    await waitFor(async () => (await readPod('sim')).status?.phase === 'Running', { what: 'sim Running', timeoutMs: 20_000 });
    expect(await kubectl(['logs', '-n', namespace, 'sim'])).toMatchObject({ code: 0, stdout: '' });
  });
});
