// API requests counted by the API server itself, from its /metrics.
//
// `apiserver_request_total` has no label for the client (verb, resource, code, … only), so it alone
// cannot tell the NeoSet functions' requests from the kubelet's or the benchmark's own. API Priority
// and Fairness can: FlowSchemas matching the functions' ServiceAccounts (neoset-reconcile,
// neoset-readiness, neoset-admission) — one for reads (get/list/watch), one for writes — make the
// API server count their requests in `apiserver_flowcontrol_dispatched_requests_total{flow_schema}`,
// per identity, in the same request path that feeds apiserver_request_total. The same is done for
// the native StatefulSet controller's ServiceAccount (kube-system/statefulset-controller). The
// FlowSchemas use the priority levels those identities get anyway (workload-low for ServiceAccounts,
// workload-high for kube-system's), so nothing is throttled differently.
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeClient } from '../../shared/k8s/client.ts';

export const READ_VERBS = ['get', 'list', 'watch'];
export const WRITE_VERBS = ['create', 'update', 'patch', 'delete', 'deletecollection'];

export interface Identity {
  /** FlowSchema name prefix: `<name>-reads`, `<name>-writes`. */
  name: string;
  serviceAccounts: { namespace: string; name: string }[];
  priorityLevel: string;
}

export const NEOSET_FUNCTIONS: Identity = {
  name: 'bench-neoset-functions',
  serviceAccounts: ['neoset-reconcile', 'neoset-readiness', 'neoset-admission'].map((name) => ({ namespace: 'neoset-system', name })),
  priorityLevel: 'workload-low',
};

export const STATEFULSET_CONTROLLER: Identity = {
  name: 'bench-statefulset-controller',
  serviceAccounts: [{ namespace: 'kube-system', name: 'statefulset-controller' }],
  priorityLevel: 'workload-high',
};

function flowSchema(id: Identity, kind: 'reads' | 'writes') {
  return {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: `${id.name}-${kind}` },
    spec: {
      // Before the suggested kube-system-service-accounts (900) and service-accounts (9000).
      matchingPrecedence: 850,
      priorityLevelConfiguration: { name: id.priorityLevel },
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: id.serviceAccounts.map((sa) => ({ kind: 'ServiceAccount', serviceAccount: sa })),
          resourceRules: [{ verbs: kind === 'reads' ? READ_VERBS : WRITE_VERBS, apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
        },
      ],
    },
  };
}

export async function installFlowSchemas(admin: KubeClient, ids: Identity[]): Promise<void> {
  for (const id of ids) {
    for (const kind of ['reads', 'writes'] as const) {
      await admin.request('POST', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas', { body: flowSchema(id, kind) });
    }
  }
}

/** One scrape: every sample of the metrics we read, by its full series text. */
export type Scrape = Map<string, number>;

export async function scrape(kc: KubeConfig): Promise<Scrape> {
  const url = new URL('/metrics', kc.getCurrentCluster()!.server);
  const options: https.RequestOptions = { method: 'GET' };
  await kc.applyToHTTPSOptions(options);
  const text = await new Promise<string>((resolve, reject) => {
    const req = https.request(url, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET /metrics: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
  const samples: Scrape = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') && !line.startsWith('apiserver_flowcontrol_dispatched_requests_total{')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

const label = (series: string, name: string) => new RegExp(`[{,]${name}="([^"]*)"`).exec(series)?.[1];

export interface Requests {
  reads: number;
  writes: number;
}

/** Requests of one identity between two scrapes (its FlowSchemas' dispatched counts). */
export function requestsOf(id: Identity, before: Scrape, after: Scrape): Requests {
  const count = (kind: string) => {
    let sum = 0;
    for (const [series, value] of after) {
      if (series.startsWith('apiserver_flowcontrol_dispatched_requests_total{') && label(series, 'flow_schema') === `${id.name}-${kind}`) {
        sum += value - (before.get(series) ?? 0);
      }
    }
    return sum;
  };
  return { reads: count('reads'), writes: count('writes') };
}

/** Requests of every client between two scrapes, from apiserver_request_total (watches included). */
export function allRequests(before: Scrape, after: Scrape): Requests {
  const r: Requests = { reads: 0, writes: 0 };
  for (const [series, value] of after) {
    if (!series.startsWith('apiserver_request_total{')) continue;
    const verb = (label(series, 'verb') ?? '').toLowerCase();
    const delta = value - (before.get(series) ?? 0);
    if (['get', 'list', 'watch', 'watchlist'].includes(verb)) r.reads += delta;
    else if (verb !== 'connect') r.writes += delta;
  }
  return r;
}
