// Entry point of the admission function: `node functions/admission/server.ts`.
//   PORT (8080), HOST (all interfaces), TLS_CERT_FILE + TLS_KEY_FILE (https; plain http when unset),
//   NEOSET_MAX_REPLICAS / NEOSET_MAX_CPU / NEOSET_MAX_MEMORY (README "Admission"), KUBECONFIG or the
//   in-cluster service account (for the dry-run Pod create), LOG_LEVEL.
import pino from 'pino';
import { ConfigError, limitsFromEnv } from '../../shared/admission/limits.ts';
import { createKubeClient, loadKubeConfig } from '../../shared/k8s/client.ts';
import { createApp } from './app.ts';
import { apiDryRunPod } from './dry-run.ts';
import { startServer, type TlsFiles } from './serve.ts';

const logger = pino({ base: { fn: 'admission' }, level: process.env.LOG_LEVEL ?? 'info', timestamp: pino.stdTimeFunctions.isoTime });

function tlsFromEnv(env: NodeJS.ProcessEnv): TlsFiles | null {
  const certFile = env.TLS_CERT_FILE?.trim();
  const keyFile = env.TLS_KEY_FILE?.trim();
  if (!certFile && !keyFile) return null;
  if (!certFile || !keyFile) throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together (or neither, for plain http)');
  return { certFile, keyFile };
}

function portFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.PORT?.trim() || '8080';
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) throw new ConfigError(`PORT=${JSON.stringify(raw)} is not a TCP port`);
  return port;
}

try {
  const limits = limitsFromEnv(process.env);
  const tlsFiles = tlsFromEnv(process.env);
  const app = createApp({ dryRunPod: apiDryRunPod(createKubeClient(loadKubeConfig())), limits, logger });
  const running = await startServer({ app, port: portFromEnv(process.env), hostname: process.env.HOST || undefined, tls: tlsFiles, logger });
  logger.info({ maxReplicas: limits.maxReplicas, maxCpu: limits.maxCpu?.text ?? null, maxMemory: limits.maxMemory?.text ?? null }, 'admission limits');
  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping');
    void running.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
} catch (err) {
  logger.fatal({ err: err instanceof ConfigError ? err.message : err }, 'admission cannot start');
  process.exit(err instanceof ConfigError ? 2 : 1);
}
