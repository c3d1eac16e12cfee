// REST paths of the resources NeoSet reads and writes.
import { API_VERSION, PLURAL } from '../api/names.ts';

const core = (ns: string, plural: string, name?: string) =>
  `/api/v1/namespaces/${encodeURIComponent(ns)}/${plural}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;

export const paths = {
  neosets: (ns?: string) => (ns === undefined ? `/apis/${API_VERSION}/${PLURAL}` : `/apis/${API_VERSION}/namespaces/${encodeURIComponent(ns)}/${PLURAL}`),
  neoset: (ns: string, name: string) => `${paths.neosets(ns)}/${encodeURIComponent(name)}`,
  neosetStatus: (ns: string, name: string) => `${paths.neoset(ns, name)}/status`,
  // Without a namespace: the collection across all namespaces (the dashboard's --all-namespaces).
  pods: (ns?: string) => (ns === undefined ? '/api/v1/pods' : core(ns, 'pods')),
  pod: (ns: string, name: string) => core(ns, 'pods', name),
  podStatus: (ns: string, name: string) => `${core(ns, 'pods', name)}/status`,
  podResize: (ns: string, name: string) => `${core(ns, 'pods', name)}/resize`,
  pvcs: (ns: string) => core(ns, 'persistentvolumeclaims'),
  pvc: (ns: string, name: string) => core(ns, 'persistentvolumeclaims', name),
  events: (ns?: string) => (ns === undefined ? '/api/v1/events' : core(ns, 'events')),
  revisions: (ns?: string) => (ns === undefined ? '/apis/apps/v1/controllerrevisions' : `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/controllerrevisions`),
  revision: (ns: string, name: string) => `${paths.revisions(ns)}/${encodeURIComponent(name)}`,
  tokenReviews: '/apis/authentication.k8s.io/v1/tokenreviews',
};
