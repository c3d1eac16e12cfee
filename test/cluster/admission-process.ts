// The admission server as integration tests run it: a child process from its real entry point
// (functions/admission/server.ts), configured by environment variables as in production, on a free
// port of 127.0.0.1, with the test cluster's kubeconfig for its dry-runs and reads.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { kubeconfigPath } from './harness.ts';

const SERVER_ENTRY = new URL('../../functions/admission/server.ts', import.meta.url).pathname;

/**
 * The CA of the client certificate the test cluster's API server presents to webhooks
 * (dev/cluster/control-plane.ts): as TLS_CLIENT_CA_FILE, admission takes the API server's reviews as
 * the API server's, and tells them what it read of their namespace (SPEC §2.5).
 */
export const webhookClientCaFile = (): string => join(dirname(kubeconfigPath()), 'pki', 'webhook-client-ca.crt');

export interface AdmissionProcess {
  child: ChildProcess;
  port: number;
}

/**
 * Starts it and resolves with its port once it logs "listening"; every log line goes to `logLines`.
 * `entry`: another function's server.ts (e.g. a previous release's, test/compat/previous-functions.ts).
 */
export function startAdmissionProcess(env: NodeJS.ProcessEnv, logLines: string[], entry = SERVER_ENTRY): Promise<AdmissionProcess> {
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', KUBECONFIG: kubeconfigPath(), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        logLines.push(line);
        const entry = JSON.parse(line);
        if (entry.msg === 'listening') resolve({ child, port: entry.port });
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => logLines.push(chunk));
    child.once('exit', (code) => reject(new Error(`admission server exited with ${code}:\n${logLines.join('\n')}`)));
  });
}
