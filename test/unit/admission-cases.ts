// Shared by the unit tests of the admission app and the integration test against the real API server:
// a valid NeoSet and a table of invalid ones, each with the field its refusal must name.
import type { JsonPatchAdd } from '../../shared/admission/defaults.ts';

/** The caps both test suites run admission with (NEOSET_* environment variables), and the one Prometheus address analyses may name. */
export const CASE_ENV = { NEOSET_MAX_REPLICAS: '1000', NEOSET_MAX_CPU: '2', NEOSET_MAX_MEMORY: '4Gi', NEOSET_ANALYSIS_ADDRESSES: 'http://prometheus:9090' };

/** SPEC §3's updateStrategy defaults, written out (not derived from the schema, which they check). */
export const DEFAULT_UPDATE_STRATEGY = {
  type: 'InPlaceIfPossible',
  partition: 0,
  maxUnavailable: 1,
  pause: false,
  inPlaceUpdateStrategy: { readiness: 'Probe', gracePeriodSeconds: 0, timeoutSeconds: 600 },
};

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function validNeoSet(name = 'web', namespace?: string): Json {
  return {
    apiVersion: 'neo.io/v1alpha1',
    kind: 'NeoSet',
    metadata: { name, ...(namespace ? { namespace } : {}) },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      serviceName: name,
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'nginx:1.27',
              readinessProbe: { httpGet: { path: '/', port: 80 } },
              resources: { limits: { cpu: '500m', memory: '256Mi' } },
            },
          ],
        },
      },
    },
  };
}

export interface InvalidCase {
  name: string;
  change: (n: Json) => void;
  /** The field path the refusal must name. */
  field: string;
  /** Also expected in the message (the limit, or the API server's words). */
  mentions?: string;
  /**
   * Who refuses: our rules, the CRD schema / zod parse, or the API server through the dry-run Pod;
   * `both`: our rules, and on the API server the CRD's own CEL first (the bounds the brake's writes
   * need without admission, SPEC §2.5: shared/api/neoset.ts budget()).
   */
  by: 'rules' | 'schema' | 'dry-run' | 'both';
}

const container = (n: Json) => n.spec.template.spec.containers[0];

export const INVALID_CASES: InvalidCase[] = [
  { name: 'replicas over the quota', by: 'rules', field: 'spec.replicas', mentions: 'quota of 1000', change: (n) => (n.spec.replicas = 1001) },
  { name: 'negative replicas', by: 'schema', field: 'spec.replicas', change: (n) => (n.spec.replicas = -1) },
  { name: 'cpu limit over the cap', by: 'rules', field: 'spec.template.spec.containers[0].resources.limits.cpu', mentions: 'cap of 2', change: (n) => (container(n).resources.limits.cpu = '2500m') },
  { name: 'memory limit over the cap', by: 'rules', field: 'spec.template.spec.containers[0].resources.limits.memory', mentions: 'cap of 4Gi', change: (n) => (container(n).resources.limits.memory = '5G') },
  {
    name: 'init container cpu over the cap',
    by: 'rules',
    field: 'spec.template.spec.initContainers[0].resources.limits.cpu',
    mentions: 'cap of 2',
    change: (n) => (n.spec.template.spec.initContainers = [{ name: 'init', image: 'busybox:1.36', resources: { limits: { cpu: 3 } } }]),
  },
  { name: 'selector does not select the template labels', by: 'rules', field: 'spec.selector', mentions: 'app=other', change: (n) => (n.spec.selector = { matchLabels: { app: 'other' } }) },
  {
    name: 'selector expression excludes the template labels',
    by: 'rules',
    field: 'spec.selector',
    mentions: 'NotIn',
    change: (n) => (n.spec.selector = { matchLabels: n.spec.selector.matchLabels, matchExpressions: [{ key: 'app', operator: 'NotIn', values: [n.metadata.name] }] }),
  },
  { name: 'empty selector', by: 'rules', field: 'spec.selector', mentions: 'empty selector', change: (n) => (n.spec.selector = {}) },
  {
    name: 'In expression without values',
    by: 'rules',
    field: 'spec.selector.matchExpressions[0].values',
    change: (n) => (n.spec.selector.matchExpressions = [{ key: 'app', operator: 'In', values: [] }]),
  },
  {
    name: 'container without readinessProbe under readiness Probe',
    by: 'rules',
    field: 'spec.template.spec.containers[1].readinessProbe',
    mentions: 'readiness is Probe',
    change: (n) => n.spec.template.spec.containers.push({ name: 'sidecar', image: 'busybox:1.36' }),
  },
  { name: 'maxUnavailable 0', by: 'both', field: 'spec.updateStrategy.maxUnavailable', mentions: 'at least 1', change: (n) => (n.spec.updateStrategy = { maxUnavailable: 0 }) },
  { name: 'maxUnavailable negative', by: 'both', field: 'spec.updateStrategy.maxUnavailable', mentions: 'at least 1', change: (n) => (n.spec.updateStrategy = { maxUnavailable: -2 }) },
  { name: 'maxUnavailable 0%', by: 'both', field: 'spec.updateStrategy.maxUnavailable', mentions: 'at least 1%', change: (n) => (n.spec.updateStrategy = { maxUnavailable: '0%' }) },
  { name: 'maxUnavailable over 100%', by: 'both', field: 'spec.updateStrategy.maxUnavailable', mentions: 'over 100%', change: (n) => (n.spec.updateStrategy = { maxUnavailable: '150%' }) },
  { name: 'maxUnavailable not a percentage', by: 'both', field: 'spec.updateStrategy.maxUnavailable', mentions: 'percentage', change: (n) => (n.spec.updateStrategy = { maxUnavailable: 'half' }) },
  { name: 'name too long for the revision label', by: 'rules', field: 'metadata.name', mentions: 'limit of 52', change: (n) => (n.metadata.name = `${'n'.repeat(53)}`) },
  { name: 'name that is not a DNS label', by: 'rules', field: 'metadata.name', mentions: 'DNS label', change: (n) => (n.metadata.name = 'web.v2') },
  { name: 'unknown readiness mode', by: 'schema', field: 'spec.updateStrategy.inPlaceUpdateStrategy.readiness', change: (n) => (n.spec.updateStrategy = { inPlaceUpdateStrategy: { readiness: 'Maybe' } }) },
  { name: 'canary without steps', by: 'rules', field: 'spec.updateStrategy.canary.steps', mentions: 'at least one step', change: (n) => (n.spec.updateStrategy = { canary: { steps: [] } }) },
  { name: 'canary step with partition and pause', by: 'rules', field: 'spec.updateStrategy.canary.steps[0]', mentions: 'exactly one', change: (n) => (n.spec.updateStrategy = { canary: { steps: [{ partition: 1, pause: {} }] } }) },
  { name: 'canary partition over 100%', by: 'rules', field: 'spec.updateStrategy.canary.steps[1].partition', mentions: 'over 100%', change: (n) => (n.spec.updateStrategy = { canary: { steps: [{ pause: {} }, { partition: '150%' }] } }) },
  { name: 'canary partition negative', by: 'rules', field: 'spec.updateStrategy.canary.steps[0].partition', mentions: '>= 0', change: (n) => (n.spec.updateStrategy = { canary: { steps: [{ partition: -1 }] } }) },
  { name: 'canary pause duration unreadable', by: 'rules', field: 'spec.updateStrategy.canary.steps[0].pause.duration', mentions: '10 minutes', change: (n) => (n.spec.updateStrategy = { canary: { steps: [{ pause: { duration: '10 minutes' } }] } }) },
  {
    name: 'canary successCondition unreadable',
    by: 'rules',
    field: 'spec.updateStrategy.canary.analysis.prometheus.successCondition',
    mentions: 'result <op> <number>',
    change: (n) => (n.spec.updateStrategy = { canary: { steps: [{ partition: 0 }], analysis: { prometheus: { address: 'http://prometheus:9090', query: 'up', successCondition: 'result[0] >= 0.95' } } } }),
  },
  {
    name: 'canary Prometheus address not a URL',
    by: 'rules',
    field: 'spec.updateStrategy.canary.analysis.prometheus.address',
    mentions: 'http(s) URL',
    change: (n) => (n.spec.updateStrategy = { canary: { steps: [{ partition: 0 }], analysis: { prometheus: { address: 'prometheus:9090/x y', query: 'up', successCondition: 'result < 1' } } } }),
  },
  {
    // SPEC §2.3: reconcile would fetch it from inside neoset-system; the install names the addresses.
    name: 'canary Prometheus address the install does not allow',
    by: 'rules',
    field: 'spec.updateStrategy.canary.analysis.prometheus.address',
    mentions: 'allowed (NEOSET_ANALYSIS_ADDRESSES): http://prometheus:9090',
    change: (n) => (n.spec.updateStrategy = { canary: { steps: [{ partition: 0 }], analysis: { prometheus: { address: 'http://10.0.0.1:8080', query: 'up', successCondition: 'result < 1' } } } }),
  },
  // §4.12 update priority and the scale budget.
  {
    name: 'priorityStrategy with both weightPriority and orderPriority',
    by: 'rules',
    field: 'spec.updateStrategy.priorityStrategy',
    mentions: 'only one of weightPriority and orderPriority',
    change: (n) => (n.spec.updateStrategy = { priorityStrategy: { weightPriority: [{ weight: 10, matchSelector: { matchLabels: { role: 'replica' } } }], orderPriority: [{ orderedKey: 'rank' }] } }),
  },
  {
    name: 'priority weight 0',
    by: 'schema',
    field: 'spec.updateStrategy.priorityStrategy.weightPriority[0].weight',
    change: (n) => (n.spec.updateStrategy = { priorityStrategy: { weightPriority: [{ weight: 0, matchSelector: { matchLabels: { role: 'replica' } } }] } }),
  },
  {
    name: 'priority weight term with an empty selector',
    by: 'rules',
    field: 'spec.updateStrategy.priorityStrategy.weightPriority[1].matchSelector',
    mentions: 'empty selector',
    change: (n) => (n.spec.updateStrategy = { priorityStrategy: { weightPriority: [{ weight: 10, matchSelector: { matchLabels: { role: 'replica' } } }, { weight: 5, matchSelector: {} }] } }),
  },
  {
    name: 'priority orderedKey twice',
    by: 'rules',
    field: 'spec.updateStrategy.priorityStrategy.orderPriority[1].orderedKey',
    mentions: "already orderPriority[0]'s key",
    change: (n) => (n.spec.updateStrategy = { priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }, { orderedKey: 'rank' }] } }),
  },
  { name: 'scale budget under OrderedReady', by: 'rules', field: 'spec.scaleStrategy.maxUnavailable', mentions: 'Parallel', change: (n) => (n.spec.scaleStrategy = { maxUnavailable: 3 }) },
  {
    name: 'scale budget 0%',
    by: 'both',
    field: 'spec.scaleStrategy.maxUnavailable',
    mentions: 'at least 1%',
    change: (n) => ((n.spec.podManagementPolicy = 'Parallel'), (n.spec.scaleStrategy = { maxUnavailable: '0%' })),
  },
  // §4.12 start and reserved ordinals.
  { name: 'reserved range backwards', by: 'rules', field: 'spec.reserveOrdinals[1]', mentions: 'a <= b', change: (n) => (n.spec.reserveOrdinals = [1, '5-3']) },
  { name: 'reserved ordinal not a number', by: 'rules', field: 'spec.reserveOrdinals[0]', mentions: 'range "a-b"', change: (n) => (n.spec.reserveOrdinals = ['db-3']) },
  { name: 'start past the last ordinal', by: 'schema', field: 'spec.ordinals.start', change: (n) => (n.spec.ordinals = { start: 1_000_000_000 }) },
  { name: 'pods past the last ordinal', by: 'rules', field: 'spec.ordinals.start', mentions: 'over the limit of 999999999', change: (n) => (n.spec.ordinals = { start: 999_999_999 }) },
  {
    name: 'data format that is not a non-negative integer',
    by: 'rules',
    field: 'spec.template.metadata.annotations[neo.io/data-format]',
    mentions: 'non-negative integer',
    change: (n) => (n.spec.template.metadata.annotations = { 'neo.io/data-format': '03' }),
  },
  {
    name: 'data format downgrade acknowledgement that names no downgrade',
    by: 'rules',
    field: 'metadata.annotations[neoset.neo.io/data-format-downgrade]',
    mentions: 'FROM->TO',
    change: (n) => (n.metadata.annotations = { 'neoset.neo.io/data-format-downgrade': '2->3' }),
  },
  { name: 'container name the API server refuses', by: 'dry-run', field: 'spec.containers[0].name', mentions: 'Bad_Name', change: (n) => (container(n).name = 'Bad_Name') },
  {
    name: 'volumeMount of a volume that does not exist',
    by: 'dry-run',
    field: 'spec.containers[0].volumeMounts[0].name',
    mentions: 'Not found',
    change: (n) => (container(n).volumeMounts = [{ name: 'nowhere', mountPath: '/data' }]),
  },
  { name: 'misspelled Pod field', by: 'dry-run', field: 'spec.containers[0].imagePullPolicyy', mentions: 'unknown field', change: (n) => (container(n).imagePullPolicyy = 'Always') },
];

/** Applies `add` operations (all /mutate produces) to a copy of `doc`. */
export function applyAdds(doc: unknown, ops: JsonPatchAdd[]): any {
  const out = structuredClone(doc) as any;
  for (const op of ops) {
    const keys = op.path.split('/').slice(1).map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
    let at = out;
    for (const k of keys.slice(0, -1)) at = at[k];
    at[keys[keys.length - 1]] = op.value;
  }
  return out;
}
