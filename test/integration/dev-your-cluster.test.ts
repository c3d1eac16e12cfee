// Bring your own cluster (issue #15): `npm run dev -- --kubeconfig PATH --context NAME` runs the
// functions and the event bridge against a cluster the user already has — here the control plane of
// `npm run cluster:up` (with its simulated kubelet standing in for real nodes) — with no control plane
// and no kubelet of its own; the README walkthrough runs against it; and after Ctrl-C the webhook
// registration is gone, so the cluster does not go on refusing NeoSet writes.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imagePatch, kubectlOn, readmeWalkthrough } from '../e2e/readme-walkthrough.ts';
import { pressCtrlC, processGroup, startDev, untilOutput, type Dev } from '../e2e/terminal.ts';

const REPO_ROOT = new URL('../..', import.meta.url).pathname;
const WEBHOOKS = ['validatingwebhookconfiguration/neoset-admission', 'mutatingwebhookconfiguration/neoset-admission'];

describe('npm run dev -- --kubeconfig (cluster:up standing in for your cluster)', () => {
  const home = mkdtempSync(join(tmpdir(), 'neoset-your-cluster-'));
  const env = { ...process.env, NEOSET_CLUSTER_HOME: home };
  /** The user's kubeconfig: the cluster under the context `yours`, and another context current. */
  const yourKubeconfig = join(home, 'your-kubeconfig');
  const yours = () => kubectlOn(yourKubeconfig);
  let dev: Dev;

  beforeAll(() => {
    const up = spawnSync('npm', ['run', 'cluster:up'], { cwd: REPO_ROOT, env, encoding: 'utf8' });
    expect(up.status, up.stderr).toBe(0);
    copyFileSync(join(home, 'kubeconfig'), yourKubeconfig);
    const k = yours();
    k(['config', 'rename-context', k(['config', 'current-context']).trim(), 'yours']);
    k(['config', 'set-cluster', 'nowhere', '--server', 'https://127.0.0.1:1']);
    k(['config', 'set-context', 'elsewhere', '--cluster', 'nowhere', '--user', 'nobody']);
    k(['config', 'use-context', 'elsewhere']);
  }, 300_000);

  afterAll(() => {
    if (dev && dev.child.exitCode === null) process.kill(-dev.child.pid!, 'SIGKILL');
    spawnSync('npm', ['run', 'cluster:down'], { cwd: REPO_ROOT, env });
    rmSync(home, { recursive: true, force: true });
    if (dev) rmSync(dev.dir, { recursive: true, force: true });
  });

  it('runs the functions and the event bridge only: no control plane, no simulated kubelet', async () => {
    dev = startDev(['--kubeconfig', yourKubeconfig, '--context', 'yours']);
    await untilOutput(dev, 'NeoSet dev stack ready');
    expect(dev.output()).toMatch(/your cluster: kube-apiserver v1\.\d+\.\d+ at https:\/\/127\.0\.0\.1:\d+ \(no local control plane, no simulated kubelet\)/);
    expect(dev.output()).not.toContain('control plane:');
    expect(dev.output()).not.toContain('simulated kubelet:');
    // npm, dev/main.ts and the three functions; no etcd, no kube-*.
    expect(processGroup(dev.child.pid!).map((p) => p.name).filter((name) => /etcd|kube/.test(name))).toEqual([]);
    expect(processGroup(dev.child.pid!)).toHaveLength(5);
    for (const webhook of WEBHOOKS) expect(yours()(['--context', 'yours', 'get', webhook, '-o', 'name'])).toBe(`${webhook.replace('configuration/', 'configuration.admissionregistration.k8s.io/')}\n`);
  }, 240_000);

  it('the README walkthrough runs against it', async () => {
    const { before, after } = await readmeWalkthrough(join(dev.dir, 'kubeconfig'));
    expect(after.map((p) => p.spec.containers[0].image)).toEqual(Array(5).fill('mysql:8.1'));
    expect(Object.fromEntries(after.map((p) => [p.metadata.name, p.metadata.uid]))).toEqual(Object.fromEntries(before.map((p) => [p.metadata.name, p.metadata.uid])));
  }, 240_000);

  it('Ctrl-C: everything of it gone, exit 0; the webhook registration removed, your cluster running and taking NeoSet writes', async () => {
    const { code, ms, left } = await pressCtrlC(dev);
    console.log(`[your-cluster] Ctrl-C: gone ${ms} ms after SIGINT, exit ${code}`);
    expect(left, dev.output()).toEqual([]);
    expect(code, dev.output()).toBe(0);
    const k = yours();
    for (const webhook of WEBHOOKS) expect(k(['--context', 'yours', 'get', webhook, '--ignore-not-found', '-o', 'name'])).toBe('');
    // No webhook left to call: the write goes through (with one left behind, failurePolicy Fail refuses it).
    k(['--context', 'yours', 'patch', 'neo', 'mysql', '--type', 'json', '-p', imagePatch('mysql:8.2')]);
    expect(k(['--context', 'yours', 'get', 'neo', 'mysql', '-o', 'jsonpath={.spec.template.spec.containers[0].image}'])).toBe('mysql:8.2');
  }, 60_000);
});
