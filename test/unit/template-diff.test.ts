// The template-change paths follow the API server's field paths (containers by index), as admission reports them.
import { describe, expect, it } from 'vitest';
import type { PodTemplateSpec } from '../../shared/api/neoset.ts';
import { templateChange } from '../../shared/core/revisions/template-diff.ts';

const base: PodTemplateSpec = {
  metadata: { labels: { app: 'web' }, annotations: { a: '1' } },
  spec: { containers: [{ name: 'app', image: 'nginx:v1' }, { name: 'sidecar', image: 'envoy:1' }] },
};
const edit = (change: (t: PodTemplateSpec) => void) => {
  const t = structuredClone(base);
  change(t);
  return t;
};

describe('templateChange: can a pod move in place?', () => {
  it('images of any container, and template labels/annotations, change in place', () => {
    const to = edit((t) => {
      t.spec.containers[0].image = 'nginx:v2';
      t.spec.containers[1].image = 'envoy:2';
      t.metadata = { labels: { app: 'web', x: 'y' } };
    });
    expect(templateChange(base, to)).toEqual({ inPlace: true, differences: [] });
  });

  it('a default spelled out on one side only is the same pod (SPEC §4.2 canonical form): an image change with it is in place', () => {
    const to = edit((t) => {
      t.spec.containers[0].image = 'nginx:v2';
      Object.assign(t.spec.containers[0], { terminationMessagePath: '/dev/termination-log', readinessProbe: { httpGet: { path: '/', port: 80, scheme: 'HTTP' }, periodSeconds: 10 } });
      Object.assign(t.spec, { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' });
    });
    const from = edit((t) => Object.assign(t.spec.containers[0], { readinessProbe: { httpGet: { port: 80 } } }));
    expect(templateChange(from, to)).toEqual({ inPlace: true, differences: [] });
    // A non-default value is a change as before.
    const other = edit((t) => Object.assign(t.spec, { restartPolicy: 'Never' }));
    expect(templateChange(base, other)).toEqual({ inPlace: false, differences: ['spec.restartPolicy'] });
  });

  it('a pull policy written alike on both sides stays the pod\'s when the new tag defaults another (nginx:v1 -> nginx:latest)', () => {
    const from = edit((t) => Object.assign(t.spec.containers[0], { imagePullPolicy: 'IfNotPresent' }));
    const to = edit((t) => Object.assign(t.spec.containers[0], { image: 'nginx:latest', imagePullPolicy: 'IfNotPresent' }));
    expect(templateChange(from, to)).toEqual({ inPlace: true, differences: [] });
  });

  it('anything else needs a new pod, and says what differs', () => {
    const to = edit((t) => {
      t.spec.containers[0].env = [{ name: 'A', value: '1' }];
      t.spec.nodeSelector = { disk: 'ssd' };
    });
    expect(templateChange(base, to)).toEqual({ inPlace: false, differences: ['spec.containers[0].env', 'spec.nodeSelector'] });
  });

  it('a container added, removed or renamed is not in place', () => {
    expect(templateChange(base, edit((t) => t.spec.containers.pop())).inPlace).toBe(false);
    expect(templateChange(base, edit((t) => (t.spec.containers[1].name = 'proxy'))).differences).toEqual(['spec.containers[1].name']);
  });
});
