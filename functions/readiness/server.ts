// Entry point of the readiness function: `node functions/readiness/server.ts` (KUBECONFIG or in-cluster config).
//   PORT (8080), HOST (all interfaces), METRICS_PORT (GET /metrics over plain http, the per-NeoSet series
//   included; unset: none), TLS_CERT_FILE + TLS_KEY_FILE (optional https), LOG_LEVEL,
//   NEOSET_OIDC (off | required), NEOSET_OIDC_AUDIENCE, NEOSET_OIDC_SUBJECTS (Knative OIDC tokens; README "Who may call NeoSet").
import { guardEvents } from '../../shared/http/event-app.ts';
import { createLogger } from '../../shared/http/logger.ts';
import { runFunction } from '../../shared/http/main.ts';
import { metricsPortApp } from '../../shared/metrics/metrics-port.ts';
import { oidcFromEnv } from '../../shared/http/oidc.ts';
import { kubeClientOnFirstUse } from '../../shared/k8s/first-use.ts';
import { createApp } from './app.ts';

const logger = createLogger('readiness');
// client-node is loaded after the server listens, not before (deferredKubeClient).
const client = kubeClientOnFirstUse();
// The in-place update durations it observes are per NeoSet: on METRICS_PORT only (SPEC §2.5).
await runFunction('readiness', logger, () => ({ app: guardEvents(createApp({ client, logger }), oidcFromEnv(process.env), client, logger), metrics: metricsPortApp() }), client.load);
