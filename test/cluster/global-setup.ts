// vitest globalSetup of the `integration` project: one control plane for the whole run, with the
// NeoSet CRD installed. Test files reach it through harness.ts (inject('kubeconfigPath')).
import type { TestProject } from 'vitest/node';
import { startControlPlane } from '../../dev/cluster/control-plane.ts';
import { installCrds } from '../../dev/cluster/crd.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig of the integration run's control plane. */
    kubeconfigPath: string;
    /** The control plane's audit log (control-plane.ts). */
    auditLogPath: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const controlPlane = await startControlPlane();
  try {
    await installCrds(controlPlane.kubeConfig());
  } catch (error) {
    await controlPlane.stop();
    throw error;
  }
  console.log(
    `kube-apiserver ${controlPlane.version} (etcd ${controlPlane.etcdVersion}) at ${controlPlane.server}, ` +
      `NeoSet CRD installed, ready in ${Date.now() - started} ms (kubeconfig ${controlPlane.kubeconfigPath})`,
  );
  project.provide('kubeconfigPath', controlPlane.kubeconfigPath);
  project.provide('auditLogPath', controlPlane.auditLogPath);
  return () => controlPlane.stop();
}
