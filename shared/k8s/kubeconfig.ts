// Where the API server is and how to authenticate to it: client-node's KubeConfig. Its own module so
// that what imports client.ts alone does not load client-node (see deferredKubeClient).
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient, type KubeClient } from './client.ts';

/** Loads KUBECONFIG (or ~/.kube/config), or the in-cluster service account when run in a pod. */
export function loadKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}

/** A client of the API server of loadKubeConfig(). */
export const kubeClientFromEnvironment = (): KubeClient => createKubeClient(loadKubeConfig());
