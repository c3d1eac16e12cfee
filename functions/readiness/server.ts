// Entry point of the readiness function: `node functions/readiness/server.ts` (KUBECONFIG or in-cluster config).
import { createKubeClient, loadKubeConfig } from '../../shared/k8s/client.ts';
import { listen } from '../../shared/http/serve.ts';
import { createApp } from './app.ts';

await listen(createApp({ client: createKubeClient(loadKubeConfig()) }), 'readiness');
