// NeoSets and ControllerRevisions as the plugin reads them from the API server, for its unit tests.
import { NeoSet, type NeoSetStatus } from '../../shared/api/neoset.ts';
import type { ControllerRevision } from '../../shared/core/objects.ts';

export const template = (image: string, extra: Record<string, unknown> = {}) => ({
  metadata: { labels: { app: 'mysql' } },
  spec: { containers: [{ name: 'main', image, readinessProbe: { tcpSocket: { port: 3306 } } }], ...extra },
});

export interface FixtureOptions {
  replicas?: number;
  image?: string;
  generation?: number;
  updateStrategy?: Record<string, unknown>;
  status?: NeoSetStatus;
  annotations?: Record<string, string>;
}

export function neoset(o: FixtureOptions = {}): NeoSet {
  return NeoSet.parse({
    apiVersion: 'neo.io/v1alpha1',
    kind: 'NeoSet',
    metadata: { name: 'mysql', namespace: 'db', uid: 'uid-1', resourceVersion: '42', generation: o.generation ?? 2, creationTimestamp: '2025-01-01T00:00:00Z', annotations: o.annotations },
    spec: { replicas: o.replicas ?? 5, selector: { matchLabels: { app: 'mysql' } }, template: template(o.image ?? 'mysql:8.1'), updateStrategy: o.updateStrategy ?? {} },
    status: o.status,
  });
}

export function revision(n: number, image: string, changeCause?: string): ControllerRevision {
  return {
    metadata: {
      name: `mysql-rev${n}`,
      labels: { 'neoset.neo.io/name': 'mysql' },
      annotations: changeCause === undefined ? undefined : { 'kubernetes.io/change-cause': changeCause },
      ownerReferences: [{ apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'mysql', uid: 'uid-1', controller: true }],
    },
    revision: n,
    data: { spec: { template: template(image) } },
  };
}
