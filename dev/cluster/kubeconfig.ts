// kubeconfig files with embedded credentials, usable by kubectl and client-node alike.
import { stringify } from 'yaml';
import type { CertKeyPair } from './certs.ts';

export interface KubeconfigOptions {
  server: string;
  caPem: string;
  client: CertKeyPair;
  user: string;
  cluster?: string;
}

const base64 = (pem: string) => Buffer.from(pem).toString('base64');

export function kubeconfigYaml({ server, caPem, client, user, cluster = 'neoset' }: KubeconfigOptions): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server, 'certificate-authority-data': base64(caPem) } }],
    users: [
      {
        name: user,
        user: { 'client-certificate-data': base64(client.certPem), 'client-key-data': base64(client.keyPem) },
      },
    ],
    contexts: [{ name: cluster, context: { cluster, user } }],
    'current-context': cluster,
  });
}
