// Entry point of the reconcile function: `node functions/reconcile/server.ts` (KUBECONFIG or in-cluster config).
//   PORT (8080), HOST (all interfaces), METRICS_PORT (GET /metrics over plain http, the NeoSets' series
//   included; unset: none — the event port's /metrics names no NeoSet), TLS_CERT_FILE + TLS_KEY_FILE
//   (optional https), LOG_LEVEL,
//   NEOSET_ANALYSIS_ADDRESSES (the Prometheus addresses canary analyses may query; README "Automated canary"),
//   NEOSET_RESYNC_SOURCE (the resync PingSource, as its ticks name it), NEOSET_FAST_TICK (the fast tick's name beside it;
//   unset: none — README "Cold start"),
//   NEOSET_OIDC (off | required), NEOSET_OIDC_AUDIENCE, NEOSET_OIDC_SUBJECTS (Knative OIDC tokens; README "Who may call NeoSet").
import { analysisAddressesFromEnv } from '../../shared/core/canary/addresses.ts';
import { guardEvents } from '../../shared/http/event-app.ts';
import { createLogger } from '../../shared/http/logger.ts';
import { runFunction } from '../../shared/http/main.ts';
import { oidcFromEnv } from '../../shared/http/oidc.ts';
import { kubeClientOnFirstUse } from '../../shared/k8s/first-use.ts';
import { createApp, createMetricsApp } from './app.ts';

const logger = createLogger('reconcile');
// client-node is loaded after the server listens, not before (deferredKubeClient).
const client = kubeClientOnFirstUse();
await runFunction('reconcile', logger, () => {
  const analysisAddresses = analysisAddressesFromEnv(process.env);
  logger.info({ analysisAddresses }, 'analysis addresses');
  // The NeoSets' series on METRICS_PORT only (SPEC §2.5); the event port's /metrics names none.
  return { app: guardEvents(createApp({ client, logger, analysisAddresses }), oidcFromEnv(process.env), client, logger), metrics: createMetricsApp(client) };
}, client.load);
