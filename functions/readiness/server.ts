// Entry point of the readiness function: `node functions/readiness/server.ts` (KUBECONFIG or in-cluster config).
//   PORT (8080), HOST (all interfaces), TLS_CERT_FILE + TLS_KEY_FILE (optional https), LOG_LEVEL.
import { createLogger } from '../../shared/http/logger.ts';
import { runFunction } from '../../shared/http/main.ts';
import { kubeClientOnFirstUse } from '../../shared/k8s/client.ts';
import { createApp } from './app.ts';

const logger = createLogger('readiness');
// client-node is loaded after the server listens, not before (deferredKubeClient).
const client = kubeClientOnFirstUse();
await runFunction('readiness', logger, () => createApp({ client, logger }), client.load);
