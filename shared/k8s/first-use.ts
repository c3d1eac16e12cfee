// The functions' client: KUBECONFIG or the in-cluster service account, loaded on first use (client-node
// comes with kubeconfig.ts, imported only then). Apart from client.ts, which kubeconfig.ts imports:
// so no import cycle (test/unit/layers.test.ts).
import { deferredKubeClient } from './client.ts';

export const kubeClientOnFirstUse = () => deferredKubeClient(async () => (await import('./kubeconfig.ts')).kubeClientFromEnvironment());
