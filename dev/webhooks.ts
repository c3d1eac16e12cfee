// The admission webhooks of knative/admission-webhooks.yaml, registered with the local API server:
// the same rules, failure policy and timeouts, but called by `clientConfig.url` on the local https
// port with the dev CA as caBundle (how envtest registers webhooks, SPEC §8).
import { kubectlApply, type Manifest } from './manifests.ts';

interface Webhook {
  clientConfig: { url?: string; service?: { path?: string }; caBundle?: string };
}

const KINDS = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

export function localWebhooks(manifests: Manifest[], baseUrl: string, caPem: string): Manifest[] {
  const caBundle = Buffer.from(caPem).toString('base64');
  const configs = manifests.filter((m) => KINDS.includes(m.kind));
  if (configs.length === 0) throw new Error('knative/ holds no webhook configuration (expected knative/admission-webhooks.yaml)');
  return configs.map((m) => {
    const { annotations: _certManager, ...metadata } = m.metadata;
    const webhooks = (m.webhooks as Webhook[]).map((w) => ({
      ...w,
      clientConfig: { url: `${baseUrl}${w.clientConfig.service?.path ?? '/'}`, caBundle },
    }));
    return { ...m, metadata, webhooks };
  });
}

export function registerWebhooks(adminKubeconfig: string, webhooks: Manifest[]): Promise<void> {
  return kubectlApply(adminKubeconfig, webhooks, 'registering the admission webhooks');
}
