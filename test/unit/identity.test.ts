// Pod identity (SPEC §4.1): the pod NeoSet creates for an ordinal.
import { describe, expect, it } from 'vitest';
import { newPod, parseOrdinal } from '../../shared/core/pods/identity.ts';
import { plan } from './helpers.ts';
import { World } from './world.ts';

describe('a new pod', () => {
  it('carries the ordinal identity, the template, the readiness gate and its claims\' volumes', () => {
    const w = new World({
      replicas: 1,
      serviceName: 'web-headless',
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: {} },
        { metadata: { name: 'logs' }, spec: {} },
      ],
    });
    w.edit((s) => {
      s.template.metadata = { labels: { app: 'web', team: 'a' }, annotations: { 'prometheus.io/scrape': 'true' } };
      s.template.spec.readinessGates = [{ conditionType: 'example.com/LB' }];
      s.template.spec.volumes = [{ name: 'logs', emptyDir: {} }];
    });
    const create = plan(w).actions.find((a) => a.kind === 'createPod');
    const rev = plan(w).status!.updateRevision;
    expect(create).toMatchObject({
      kind: 'createPod',
      pod: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'web-0',
          namespace: 'default',
          labels: {
            app: 'web',
            team: 'a',
            'neoset.neo.io/name': 'web',
            'neoset.neo.io/pod-name': 'web-0',
            'apps.kubernetes.io/pod-index': '0',
            'controller-revision-hash': rev,
          },
          annotations: { 'prometheus.io/scrape': 'true' },
          ownerReferences: [{ apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'web', uid: 'neoset-uid', controller: true, blockOwnerDeletion: true }],
        },
        spec: {
          hostname: 'web-0',
          subdomain: 'web-headless',
          readinessGates: [{ conditionType: 'example.com/LB' }, { conditionType: 'InPlaceUpdateReady' }],
          // the template's own `logs` volume wins; `data` mounts the claim of this ordinal
          volumes: [
            { name: 'logs', emptyDir: {} },
            { name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } },
          ],
        },
      },
    });
  });

  it('never duplicates our readiness gate, and has no subdomain without serviceName', async () => {
    const w = new World({ replicas: 1 });
    const template = { ...w.neoset.spec.template, spec: { ...w.neoset.spec.template.spec, readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] } };
    const pod = newPod(w.neoset, 3, 'web-x', template);
    expect(pod.spec.readinessGates).toEqual([{ conditionType: 'InPlaceUpdateReady' }]);
    expect(pod.spec).not.toHaveProperty('subdomain');
  });
});

describe('ordinals', () => {
  it('are read only from names NeoSet gives', async () => {
    expect(parseOrdinal('web', 'web-0')).toBe(0);
    expect(parseOrdinal('web', 'web-12')).toBe(12);
    expect(parseOrdinal('web', 'web-012')).toBeNull();
    expect(parseOrdinal('web', 'web-x')).toBeNull();
    expect(parseOrdinal('web', 'webby-1')).toBeNull();
    expect(parseOrdinal('web', 'web--1')).toBeNull();
    expect(parseOrdinal('web', 'web-')).toBeNull();
    expect(parseOrdinal('web', 'web1')).toBeNull();
    expect(parseOrdinal('web', 'wex-1')).toBeNull();
    expect(parseOrdinal('web', 'web-999999999')).toBe(999999999);
    expect(parseOrdinal('web', 'web-1000000000')).toBeNull();
    expect(parseOrdinal('web', 'web-1 ')).toBeNull();
  });

  it('pods whose name is not <neoset>-<ordinal> are never acted on', async () => {
    const w = new World({ replicas: 1 });
    await w.settle();
    w.pods.set('web-canary', { metadata: { name: 'web-canary', uid: 'x', resourceVersion: '1', labels: { 'neoset.neo.io/name': 'web' } }, spec: { containers: [] } });
    w.edit((s) => void (s.replicas = 0));
    expect(plan(w).actions.map((a) => a.kind)).toEqual(['deletePod']);
    expect(plan(w).actions[0]).toMatchObject({ pod: { name: 'web-0' } });
  });
});
