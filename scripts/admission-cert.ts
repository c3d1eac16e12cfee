// `npm run admission:cert`: the admission webhook's TLS without cert-manager. Makes a CA and a serving
// certificate for neoset-admission.neoset-system.svc, stores them as the Secret neoset-admission-tls
// (tls.crt, tls.key, ca.crt) that knative/admission.yaml mounts, and sets the CA as caBundle of both
// webhook configurations. Run it after `kubectl apply -k knative/` (against the current kubectl
// context, or KUBECONFIG); run it again to rotate: the admission server reloads the new files.
//   --days N   certificate validity (default 365)
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { createCa, issueServingCert } from '../dev/cluster/certs.ts';

const NAMESPACE = 'neoset-system';
const SERVICE = 'neoset-admission';
const WEBHOOKS = [
  ['mutatingwebhookconfiguration', 'neoset-admission'],
  ['validatingwebhookconfiguration', 'neoset-admission'],
] as const;

function kubectl(args: string[], input?: string): string {
  const r = spawnSync('kubectl', args, { input, encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(`kubectl ${args.join(' ')} failed:\n${r.stderr || r.error?.message}\n`);
    process.exit(1);
  }
  return r.stdout;
}

const { values } = parseArgs({ options: { days: { type: 'string', default: '365' } } });
const days = Number(values.days);
if (!Number.isInteger(days) || days < 1) {
  process.stderr.write(`--days must be a positive integer, got ${values.days}\n`);
  process.exit(2);
}

const hosts = [`${SERVICE}.${NAMESPACE}.svc`, `${SERVICE}.${NAMESPACE}.svc.cluster.local`, `${SERVICE}.${NAMESPACE}`, SERVICE];
const ca = await createCa('neoset-admission-ca', days + 1);
const serving = await issueServingCert(ca, hosts, days);
const b64 = (pem: string) => Buffer.from(pem).toString('base64');

process.stdout.write(
  kubectl(['apply', '-f', '-'], stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: 'neoset-admission-tls', namespace: NAMESPACE, labels: { 'app.kubernetes.io/part-of': 'neoset' } },
    data: { 'tls.crt': b64(serving.certPem), 'tls.key': b64(serving.keyPem), 'ca.crt': b64(ca.certPem) },
  })),
);
for (const [kind, name] of WEBHOOKS) {
  // Every webhook of the configuration gets the CA (a JSON patch per index).
  const count = Number(kubectl(['get', kind, name, '-o', 'jsonpath={.webhooks[*].name}']).split(' ').filter(Boolean).length);
  const patch = Array.from({ length: count }, (_, i) => ({ op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: b64(ca.certPem) }));
  process.stdout.write(kubectl(['patch', kind, name, '--type=json', '-p', JSON.stringify(patch)]));
}
process.stdout.write(`certificate for ${hosts[0]} valid ${days} days; the admission pods pick it up from the Secret\n`);
