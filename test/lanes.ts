// The second lane of vitest.config.ts (`integration-services`), by file, for the config and for
// npm test's runner (test/run.ts), which starts the control-plane-only files while the services
// stack's builds run on a first run.
//   - SERVICE_FILES take the machine's one service network (kube-proxy's nftables tables, the API
//     server's interface: dev/cluster/service-network.ts) — Services and DNS, Knative Eventing and
//     Serving, `npm run dev`, process-mode kubelets — each with control planes of their own;
//     (EVENTING_FILES need Eventing's builds, SERVING_FILES Serving's, Traefik's and kn's too);
//   - BALANCE_FILES are of the first lane's kind, run here for the lanes' balance.
/** Service-network files on Knative Eventing, CoreDNS and kube-proxy only (no Serving, Traefik or kn). */
export const EVENTING_FILES = ['knative-contract', 'knative-eventing', 'knative-neoset', 'kubectl-logs', 'prometheus-knative', 'process-pods', 'process-prestop', 'services-dns'].map((name) => `test/integration/${name}.test.ts`);

/** Service-network files that also need Knative Serving, Traefik or kn (npm run dev's default layout is Serving's). */
export const SERVING_FILES = ['dev', 'dev-stop', 'dev-host', 'knative-e2e', 'knative-serving', 'notifications'].map((name) => `test/integration/${name}.test.ts`);

export const SERVICE_FILES = [...EVENTING_FILES, ...SERVING_FILES];

/**
 * Files of the first kind that run in the second lane, on its own control plane (test/cluster/
 * global-setup.ts runs once per lane), so that the two lanes take about as long: with the service
 * files alone the second lane was done in 768 s and the first took 1,226 s (CI, 2 cores); on
 * 2026-12-07, with issue 34's tests, 1,702 s against 2,297 s, so brake, memory-bounded, ticks and
 * token-pins (253 s of the first lane) run here too.
 */
export const BALANCE_FILES = ['forged-readiness-events', 'one-clock', 'scaling-timing', 'brake', 'memory-bounded', 'ticks', 'token-pins'].map((name) => `test/integration/${name}.test.ts`);
