// What integration test files use to reach the control plane started by global-setup.ts.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { readIfExists, waitForDefaultServiceAccount, waitForDeletion } from '../../dev/cluster/wait.ts';

export function kubeconfigPath(): string {
  return inject('kubeconfigPath');
}

/** The API server's audit log: one JSON line per write to pods, revisions and NeoSets, in the order they landed. */
export function auditLogPath(): string {
  return inject('auditLogPath');
}

/** A new admin KubeConfig for client-node. */
export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath());
  return kc;
}

export interface TestNamespace {
  name: string;
  /** Deletes the namespace; with `wait`, until the namespace controller has emptied and removed it. */
  cleanup(opts?: { wait?: boolean }): Promise<void>;
}

/** A namespace with a unique name and its `default` ServiceAccount in place, so pods can be created. */
export async function createTestNamespace(prefix: string): Promise<TestNamespace> {
  const core = kubeConfig().makeApiClient(CoreV1Api);
  const base = prefix.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 50) || 'test';
  const name = `${base}-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name, labels: { 'neoset.neo.io/test': base } } } });
  await waitForDefaultServiceAccount(kubeConfig(), name);
  return {
    name,
    async cleanup({ wait = false } = {}) {
      await readIfExists(() => core.deleteNamespace({ name }));
      if (wait) await waitForDeletion(`namespace ${name}`, () => core.readNamespace({ name }), { timeoutMs: 60_000 });
    },
  };
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command, capturing its output. Never throws for a non-zero exit: check `code`. */
export function run(command: string, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** Runs the real kubectl against the test cluster. Never throws for a non-zero exit: check `code`. */
export function kubectl(args: string[], opts: { input?: string } = {}): Promise<KubectlResult> {
  return run('kubectl', ['--kubeconfig', kubeconfigPath(), ...args], opts);
}
