// A further kube-controller-manager against a running control plane, with only the loops asked for —
// e.g. `statefulset-controller`, so that a benchmark can run the native StatefulSet side by side with
// NeoSet on the same API server. It has a client certificate of its own (CN
// system:kube-controller-manager, bound by RBAC's bootstrap policy) and, as the first one, runs each
// loop as its kube-system ServiceAccount (`statefulset-controller`).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveBinaries } from './binaries.ts';
import { issueClientCert, issueServingCert, LOOPBACK_HOSTS } from './certs.ts';
import { controllerManagerArgs, filesIn, type ControlPlane } from './control-plane.ts';
import { kubeconfigYaml } from './kubeconfig.ts';
import { freePorts } from './ports.ts';
import { waitForHealthy } from './probe.ts';
import { startProcess, type ManagedProcess } from './processes.ts';

export interface ControllerManagerOptions {
  /** Process and file name, e.g. `kcm-statefulset`. */
  name: string;
  controllers: string[];
}

export async function startControllerManager(cp: ControlPlane, opts: ControllerManagerOptions): Promise<ManagedProcess> {
  const files = filesIn(cp.dir);
  const ca = { certPem: await readFile(files.ca, 'utf8'), keyPem: await readFile(files.caKey, 'utf8') };
  const [[port], binaries, client, serving] = await Promise.all([
    freePorts(1),
    resolveBinaries(),
    issueClientCert(ca, { commonName: 'system:kube-controller-manager' }),
    issueServingCert(ca, LOOPBACK_HOSTS),
  ]);
  const at = (suffix: string) => join(cp.dir, `${opts.name}.${suffix}`);
  await Promise.all([
    writeFile(at('kubeconfig'), kubeconfigYaml({ server: cp.server, caPem: ca.certPem, client, user: 'system:kube-controller-manager' }), { mode: 0o600 }),
    writeFile(at('crt'), serving.certPem, { mode: 0o600 }),
    writeFile(at('key'), serving.keyPem, { mode: 0o600 }),
  ]);
  const args = controllerManagerArgs({ ...files, kcmCert: at('crt'), kcmKey: at('key') }, port, opts.controllers, at('kubeconfig'));
  const child = startProcess(opts.name, binaries.kubeControllerManager, args, at('log'));
  try {
    await waitForHealthy(child, `https://127.0.0.1:${port}/healthz`, { ca: ca.certPem }, 120_000);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return child;
}
