// knative/eventing.yaml on the real Knative (test/cluster/knative-stack.ts), every Trigger's subscriber
// and dead-letter sink turned to one receiver pod (the path names the Trigger: /neoset-reconcile-pods),
// so that what the real ApiServerSources, PingSource, Broker and Triggers deliver to the functions can
// be read back as it arrived. The sources, filters and delivery policies are knative/'s, unchanged.
// Then the API changes whose events examples/events/ holds and the contract test compares.
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { identityManifests, kubectlApply, kustomize, SYSTEM_NAMESPACE, type Manifest } from '../../dev/manifests.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';
import { LABEL_NEOSET_NAME } from '../../shared/api/names.ts';
import { run } from './harness.ts';
import { readyObject, startReceiver, type KnativeStack, type ReceivedEvent } from './knative-stack.ts';

export const RECEIVER = 'receiver';
/** knative/eventing.yaml's dead-letter sink's name: here a second Service of the receiver (path /dead-letter). */
export const DEAD_LETTER = 'neoset-dead-letter';
const EVENTING_KINDS = ['Broker', 'ApiServerSource', 'PingSource', 'Trigger'];
const REPO_ROOT = new URL('../..', import.meta.url).pathname;
export const MYSQL_EXAMPLE = `${REPO_ROOT}examples/mysql.yaml`;

type Destination = { ref?: { apiVersion: string; kind: string; name: string }; uri?: string };
const toReceiver = (path: string, service = RECEIVER): Destination => ({ ref: { apiVersion: 'v1', kind: 'Service', name: service }, uri: path });

/**
 * knative/eventing.yaml's Broker, sources and Triggers, with the Knative Services they name replaced by
 * the receiver; `uriOf` gives a Trigger's subscriber URI (default its name as the path); the PingSource
 * every minute.
 */
export function eventingToReceiver(all: Manifest[] = kustomize(), uriOf: (trigger: string) => string = (t) => `/${t}`): Manifest[] {
  return all
    .filter((m) => EVENTING_KINDS.includes(m.kind))
    .map((m) => {
      const o = structuredClone(m) as Manifest & { spec: { subscriber?: Destination; delivery?: { deadLetterSink?: Destination } } };
      if (o.kind === 'Trigger') o.spec.subscriber = toReceiver(uriOf(o.metadata.name));
      if (o.spec.delivery?.deadLetterSink) o.spec.delivery.deadLetterSink = toReceiver('/dead-letter', DEAD_LETTER);
      // The slow resync tick (every 10 minutes, SPEC §2.4) ticks every minute here, as the fast tick
      // does: the tests see a tick within a minute.
      if (o.kind === 'PingSource') (o.spec as { schedule?: string }).schedule = '* * * * *';
      return o;
    });
}

/**
 * A Trigger of the Broker `neoset` whose subscriber (the receiver, ?fail=always) answers every NeoSet
 * event 503 and which retries nothing: each one goes to the dead-letter sink at once.
 */
export function failingTrigger(): Manifest {
  return {
    apiVersion: 'eventing.knative.dev/v1',
    kind: 'Trigger',
    metadata: { name: 'neoset-failing', namespace: SYSTEM_NAMESPACE },
    spec: {
      broker: 'neoset',
      filter: { attributes: { kind: 'NeoSet' } },
      subscriber: toReceiver('/neoset-failing?fail=always'),
      delivery: { retry: 0, deadLetterSink: toReceiver('/dead-letter', DEAD_LETTER) },
    },
  };
}

/** Applies `triggers` and waits until each is Ready. */
export async function addTriggers(stack: KnativeStack, triggers: Manifest[]): Promise<void> {
  await kubectlApply(stack.cp.kubeconfigPath, triggers, 'Triggers');
  for (const t of triggers) await readyObject(stack.cp, { group: 'eventing.knative.dev', version: 'v1', plural: 'triggers', namespace: SYSTEM_NAMESPACE, name: t.metadata.name });
}

export interface NeoSetEventing {
  /** What the receiver got so far, oldest first. */
  events(): Promise<ReceivedEvent[]>;
}

/** Applies knative/'s identities and eventing (to the receiver) and waits until every object is Ready. */
export async function installNeoSetEventing(stack: KnativeStack, opts: { uriOf?: (trigger: string) => string } = {}): Promise<NeoSetEventing> {
  const { cp } = stack;
  const all = kustomize();
  await kubectlApply(cp.kubeconfigPath, identityManifests(all), "knative/'s identities");
  const receiver = await startReceiver(cp, SYSTEM_NAMESPACE, RECEIVER);
  await cp.kubeConfig().makeApiClient(CoreV1Api).createNamespacedService({
    namespace: SYSTEM_NAMESPACE,
    body: { metadata: { name: DEAD_LETTER }, spec: { selector: { app: RECEIVER }, ports: [{ port: 80, targetPort: 8080 }] } },
  });
  const eventing = eventingToReceiver(all, opts.uriOf);
  await kubectlApply(cp.kubeconfigPath, eventing, 'knative/eventing.yaml (to the receiver)');
  for (const m of eventing) {
    const [group, version] = m.apiVersion.split('/');
    await readyObject(cp, { group, version, plural: `${m.kind.toLowerCase()}s`, namespace: SYSTEM_NAMESPACE, name: m.metadata.name }, 120_000);
  }
  // Ready says the adapters' Deployments exist; their watches are open only once they are Available.
  const apps = cp.kubeConfig().makeApiClient(AppsV1Api);
  await waitFor(async () => {
    const deployments = (await apps.listNamespacedDeployment({ namespace: SYSTEM_NAMESPACE })).items.filter((d) => d.metadata?.name?.startsWith('apiserversource-'));
    return deployments.length === 2 && deployments.every((d) => d.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True'));
  }, { what: 'both ApiServerSource adapters Available', timeoutMs: 90_000, intervalMs: 500 });
  return { events: receiver.events };
}

/** The pod a NeoSet `mysql` would have made at ordinal 4 (its labels and owner), on the simulated kubelet. */
function mysqlPod(namespace: string, neoset: { uid: string }) {
  return {
    metadata: {
      name: 'mysql-4',
      namespace,
      labels: { app: 'mysql', 'apps.kubernetes.io/pod-index': '4', [LABEL_NEOSET_NAME]: 'mysql', 'neoset.neo.io/pod-name': 'mysql-4' },
      ownerReferences: [{ apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'mysql', uid: neoset.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      hostname: 'mysql-4',
      subdomain: 'mysql',
      terminationGracePeriodSeconds: 0,
      readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
      containers: [{ name: 'mysql', image: 'mysql:8.0', ports: [{ name: 'mysql', containerPort: 3306 }], readinessProbe: { tcpSocket: { port: 3306 }, periodSeconds: 5 } }],
    },
  };
}

export const IN_PLACE_ANNOTATION = 'neoset.neo.io/inplace-update-state';

/**
 * The walkthrough's API changes, each waited for at `seen` (e.g. the receiver) before the next:
 * `kubectl apply` of examples/mysql.yaml's NeoSet, its image change, a labelled pod mysql-4 and its
 * in-place update (annotation and image), the pod's deletion, the NeoSet's deletion.
 * `seen(type, kind, name, test?)` resolves once an event of that type for that object has arrived.
 */
export async function runWalkthroughChanges(
  stack: KnativeStack,
  namespace: string,
  seen: (type: string, kind: string, name: string, test?: (data: { metadata?: { annotations?: Record<string, string> } }) => boolean) => Promise<void>,
): Promise<void> {
  const k = async (args: string[], input?: string) => {
    const r = await run('kubectl', ['--kubeconfig', stack.cp.kubeconfigPath, '-n', namespace, ...args], { input });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const neosetOnly = readFileSync(MYSQL_EXAMPLE, 'utf8').split(/^---$/m).find((doc) => /^kind: NeoSet$/m.test(doc))!;
  await k(['apply', '-f', '-'], neosetOnly);
  await seen('add', 'NeoSet', 'mysql');
  await k(['patch', 'neo', 'mysql', '--type', 'json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'mysql:8.1' }])]);
  await seen('update', 'NeoSet', 'mysql');
  const neoset = JSON.parse(await k(['get', 'neo', 'mysql', '-o', 'json'])) as { metadata: { uid: string } };
  const core = stack.cp.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedPod({ namespace, body: mysqlPod(namespace, neoset.metadata) });
  await seen('add', 'Pod', 'mysql-4');
  await waitFor(async () => (await core.readNamespacedPod({ name: 'mysql-4', namespace })).status?.phase === 'Running', { what: 'mysql-4 Running', timeoutMs: 30_000 });
  // What reconcile writes to start an in-place update (SPEC §4): the state annotation, then the image.
  const state = { revision: 'mysql-6c6d777f46', phase: 'Updating', generation: 2, targetImages: { mysql: 'mysql:8.1' } };
  await k(['annotate', 'pod', 'mysql-4', `${IN_PLACE_ANNOTATION}=${JSON.stringify(state)}`]);
  await k(['patch', 'pod', 'mysql-4', '--type', 'json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/containers/0/image', value: 'mysql:8.1' }])]);
  await seen('update', 'Pod', 'mysql-4', (data) => IN_PLACE_ANNOTATION in (data.metadata?.annotations ?? {}));
  await k(['delete', 'pod', 'mysql-4', '--wait=true']);
  await seen('delete', 'Pod', 'mysql-4');
  await k(['delete', 'neo', 'mysql', '--wait=true']);
  await seen('delete', 'NeoSet', 'mysql');
}
