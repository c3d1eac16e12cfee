// The admission server as the API server calls it in an integration test, in one call: a serving
// certificate from a test CA, the server from its real entry point as a child process
// (admission-process.ts), knative/admission-webhooks.yaml's configurations scoped to the test's
// namespace (webhooks.ts), and a wait until the API server calls them (it picks configurations up
// asynchronously): `refused` is a server-side dry run that the webhooks must refuse.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createCa, issueServingCert } from '../../dev/cluster/certs.ts';
import { CASE_ENV } from '../unit/admission-cases.ts';
import { startAdmissionProcess } from './admission-process.ts';
import { kubectl } from './harness.ts';
import { testWebhookConfigurations } from './webhooks.ts';

export interface TestAdmission {
  /** Every line the server logged. */
  logLines: string[];
  stop(): Promise<void>;
}

export async function startTestAdmission(opts: {
  name: string;
  namespace: string;
  /** Until this answers true, the webhooks are not active yet (e.g. a dry run refused with a field path). */
  active: () => Promise<boolean>;
  env?: NodeJS.ProcessEnv;
}): Promise<TestAdmission> {
  const configName = `neoset-${opts.name}-test-${opts.namespace}`;
  const dir = await mkdtemp(path.join(tmpdir(), `neoset-${opts.name}-`));
  const logLines: string[] = [];
  let server: ChildProcess | undefined;
  const stop = async () => {
    await kubectl(['delete', 'mutatingwebhookconfiguration,validatingwebhookconfiguration', configName, '--ignore-not-found']);
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const ca = await createCa(`neoset-${opts.name}-test-ca`);
    const serving = await issueServingCert(ca, ['127.0.0.1']);
    await writeFile(path.join(dir, 'tls.crt'), serving.certPem);
    await writeFile(path.join(dir, 'tls.key'), serving.keyPem, { mode: 0o600 });
    const started = await startAdmissionProcess({ ...CASE_ENV, ...opts.env, TLS_CERT_FILE: path.join(dir, 'tls.crt'), TLS_KEY_FILE: path.join(dir, 'tls.key') }, logLines);
    server = started.child;
    const configs = await testWebhookConfigurations({ name: configName, baseUrl: `https://127.0.0.1:${started.port}`, caPem: ca.certPem, namespace: opts.namespace });
    const registered = await kubectl(['apply', '-f', '-'], { input: configs });
    if (registered.code !== 0) throw new Error(`registering the webhooks: ${registered.stderr}`);
    const deadline = Date.now() + 30_000;
    while (!(await opts.active())) {
      if (Date.now() > deadline) throw new Error('webhooks not active after 30 s');
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { logLines, stop };
}
