// Latency of POST /validate: 1,000 sequential AdmissionReviews (after 100 warm-up ones) over HTTP on
// loopback to the real admission server (shared/http/serve.ts, started in this process),
// one keep-alive connection, each a CREATE of a valid NeoSet — the full path: parse, rules, warnings,
// dry-run, answer. The dry-run is a stub answering at once (this measures the function, not the API
// server); with BENCH_DRY_RUN=api it is the real one against $KUBECONFIG's API server.
//   node bench/admission.ts            (REQUESTS=1000 to change the count)
import http from 'node:http';
import pino from 'pino';
import { createApp, type DryRunPod } from '../functions/admission/app.ts';
import { apiDryRunPod } from '../functions/admission/dry-run.ts';
import { startServer } from '../shared/http/serve.ts';
import { DEFAULT_LIMITS } from '../shared/admission/limits.ts';
import { createKubeClient } from '../shared/k8s/client.ts';
import { loadKubeConfig } from '../shared/k8s/kubeconfig.ts';

const REQUESTS = Number(process.env.REQUESTS ?? 1000);
const WARMUP = 100;
const realDryRun = process.env.BENCH_DRY_RUN === 'api';

const stub: DryRunPod = async () => ({ ok: true });
const dryRunPod = realDryRun ? apiDryRunPod(createKubeClient(loadKubeConfig())) : stub;
const logger = pino({ level: 'silent' });
const server = await startServer({ app: createApp({ dryRunPod, limits: DEFAULT_LIMITS, logger }), port: 0, hostname: '127.0.0.1', logger });
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function body(i: number): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `bench-${i}`,
      kind: { group: 'neo.io', version: 'v1alpha1', kind: 'NeoSet' },
      resource: { group: 'neo.io', version: 'v1alpha1', resource: 'neosets' },
      name: 'web',
      namespace: process.env.BENCH_NAMESPACE ?? 'default',
      operation: 'CREATE',
      userInfo: { username: 'bench' },
      object: {
        apiVersion: 'neo.io/v1alpha1',
        kind: 'NeoSet',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          replicas: 5,
          selector: { matchLabels: { app: 'web' } },
          serviceName: 'web',
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              containers: [
                { name: 'app', image: 'nginx:1.27', readinessProbe: { httpGet: { path: '/', port: 80 } }, resources: { limits: { cpu: '500m', memory: '256Mi' } } },
                { name: 'sidecar', image: 'envoy:1.30', readinessProbe: { tcpSocket: { port: 9901 } } },
              ],
            },
          },
          updateStrategy: { partition: 2, maxUnavailable: '20%' },
        },
      },
      dryRun: false,
    },
  });
}

function post(payload: string): Promise<{ status: number; allowed: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: server.port, path: '/validate', method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, allowed: JSON.parse(text).response?.allowed === true }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

for (let i = 0; i < WARMUP; i++) await post(body(-i - 1));
const latencies: number[] = [];
let refused = 0;
for (let i = 0; i < REQUESTS; i++) {
  const payload = body(i);
  const started = process.hrtime.bigint();
  const { status, allowed } = await post(payload);
  latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
  if (status !== 200 || !allowed) refused++;
}
agent.destroy();
await server.close(1000);

const sorted = [...latencies].sort((a, b) => a - b);
const ms = (v: number) => `${v.toFixed(3)} ms`;
console.log(
  `POST /validate × ${REQUESTS} (http, loopback, keep-alive, sequential; dry-run: ${realDryRun ? 'real API server' : 'stub'}; node ${process.version})\n` +
    `  p50 ${ms(quantile(sorted, 0.5))}  p90 ${ms(quantile(sorted, 0.9))}  p99 ${ms(quantile(sorted, 0.99))}  max ${ms(sorted[sorted.length - 1])}  ` +
    `mean ${ms(latencies.reduce((a, b) => a + b, 0) / latencies.length)}  body ${Buffer.byteLength(body(0))} bytes  not allowed: ${refused}`,
);
if (refused > 0) process.exitCode = 1;
