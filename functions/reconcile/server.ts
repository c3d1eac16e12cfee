// Entry point of the reconcile function: `node functions/reconcile/server.ts` (KUBECONFIG or in-cluster config).
import { createKubeClient, loadKubeConfig } from '../../shared/k8s/client.ts';
import { listen } from '../../shared/http/serve.ts';
import { createApp } from './app.ts';

await listen(createApp({ client: createKubeClient(loadKubeConfig()) }), 'reconcile');
