// The webhook configurations of knative/admission-webhooks.yaml, as integration tests register them:
// the manifest's own rules, matchConditions, failurePolicy and timeouts, but called by url (a test's
// admission server on 127.0.0.1, or a port nobody listens on) and scoped to one test namespace.
import { readFile } from 'node:fs/promises';
import { parseAllDocuments, stringify } from 'yaml';

const MANIFEST = new URL('../../knative/admission-webhooks.yaml', import.meta.url).pathname;

export interface TestWebhooks {
  /** metadata.name of both configurations. */
  name: string;
  /** Base URL, e.g. https://127.0.0.1:8443; each webhook's service path is appended. */
  baseUrl: string;
  caPem: string;
  namespace: string;
}

export async function testWebhookConfigurations(opts: TestWebhooks): Promise<string> {
  const docs = parseAllDocuments(await readFile(MANIFEST, 'utf8')).map((d) => d.toJS());
  return docs
    .filter((doc) => doc.kind === 'MutatingWebhookConfiguration' || doc.kind === 'ValidatingWebhookConfiguration')
    .map((doc) => {
      doc.metadata = { name: opts.name };
      for (const webhook of doc.webhooks) {
        webhook.clientConfig = { url: `${opts.baseUrl}${webhook.clientConfig.service.path}`, caBundle: Buffer.from(opts.caPem).toString('base64') };
        webhook.namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': opts.namespace } };
      }
      return stringify(doc);
    })
    .join('---\n');
}
