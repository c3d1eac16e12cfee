// Entry point of the admission function: `node functions/admission/server.ts`.
//   PORT (8080), HOST (all interfaces), TLS_CERT_FILE + TLS_KEY_FILE (https; plain http when unset),
//   METRICS_PORT (GET /metrics over plain http on its own port, for Prometheus, the NeoSet state gauges
//   included; unset: none),
//   NEOSET_HEADERS_TIMEOUT_MS / NEOSET_REQUEST_TIMEOUT_MS (how long a review may take to arrive: 5 s / 10 s;
//   shared/http/serve.ts),
//   NEOSET_MAX_REPLICAS / NEOSET_MAX_CPU / NEOSET_MAX_MEMORY (README "Admission"), NEOSET_ANALYSIS_ADDRESSES
//   (the Prometheus addresses canary analyses may name; README "Automated canary"), KUBECONFIG or the
//   in-cluster service account (for the dry-run Pod create, and the pods and revisions the
//   data-format rule reads), LOG_LEVEL.
import { limitsFromEnv } from '../../shared/admission/limits.ts';
import { createLogger } from '../../shared/http/logger.ts';
import { loadOrExit, runFunction } from '../../shared/http/main.ts';
import { kubeClientOnFirstUse } from '../../shared/k8s/first-use.ts';
import { metricsPortApp } from '../../shared/metrics/metrics-port.ts';
import { createApp } from './app.ts';
import { apiDryRunPod } from './dry-run.ts';
import { apiReadFormatsRan } from './data-format.ts';

const logger = createLogger('admission');
const client = kubeClientOnFirstUse();
// Loaded before the server listens, unlike the event functions': loading client-node holds the event
// loop for about a second here (several under load), and the API server gives a webhook call 5 s
// (failurePolicy Fail) — a review arriving meanwhile waited behind it (512 ms idle, 1 s after
// listening; 'context deadline exceeded' in three CI runs). The readiness probe waits instead.
await loadOrExit('admission', logger, client.load);
await runFunction('admission', logger, () => {
  const limits = limitsFromEnv(process.env);
  logger.info({ maxReplicas: limits.maxReplicas, maxCpu: limits.maxCpu?.text ?? null, maxMemory: limits.maxMemory?.text ?? null, analysisAddresses: limits.analysisAddresses }, 'admission limits');
  // METRICS_PORT: its own series and the NeoSet state gauges (SPEC §4.8), which reconcile serves only
  // while warm: admission keeps one pod (SPEC §2.4).
  return { app: createApp({ dryRunPod: apiDryRunPod(client), readFormatsRan: apiReadFormatsRan(client), limits, logger }), metrics: metricsPortApp({ client }) };
});
