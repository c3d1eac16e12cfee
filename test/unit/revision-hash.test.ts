// The revision hash is pinned (SPEC §4.2 [v0.3], issue 22 §2): a release that changes the hash of an
// unchanged template makes a new revision of it and rolls every pod (kubernetes/kubernetes#134773).
// The expected names below were computed by the previous release's templateHash (028831f, v0.2);
// a change of the hash input — a field added to the canonical form, another serialization — fails
// here first. Then: the canonical form (key order, defaults spelled out or not), and what deciding
// does with a template that equals a stored one only semantically.
import { describe, expect, it } from 'vitest';
import { LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import type { PodTemplateSpec } from '../../shared/api/neoset.ts';
import { decide } from '../../shared/core/decide.ts';
import { canonicalJson } from '../../shared/core/json.ts';
import { fnv32a, safeEncode, templateHash } from '../../shared/core/revisions/hash.ts';
import { canonicalTemplate, defaultPullPolicy, sameTemplate } from '../../shared/core/revisions/semantic.ts';
import { settled, steps } from './helpers.ts';

const TEMPLATES = {
  minimal: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
  mysql: {
    metadata: { labels: { app: 'mysql', tier: 'db' }, annotations: { 'example.com/owner': 'team-db' } },
    spec: {
      containers: [
        {
          name: 'mysql',
          image: 'mysql:8.0',
          ports: [{ name: 'mysql', containerPort: 3306 }],
          env: [
            { name: 'MYSQL_ALLOW_EMPTY_PASSWORD', value: '1' },
            { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          ],
          readinessProbe: { tcpSocket: { port: 3306 } },
          resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } },
          volumeMounts: [
            { name: 'data', mountPath: '/var/lib/mysql' },
            { name: 'conf', mountPath: '/etc/mysql/conf.d' },
          ],
        },
      ],
      volumes: [{ name: 'conf', configMap: { name: 'mysql-conf' } }],
    },
  },
  sidecars: {
    metadata: { labels: { app: 'web' } },
    spec: {
      initContainers: [{ name: 'init', image: 'busybox:1.36', command: ['sh', '-c', 'true'] }],
      containers: [
        { name: 'web', image: 'nginx:1.27', readinessProbe: { httpGet: { path: '/healthz', port: 80 } } },
        { name: 'log', image: `ghcr.io/example/log-shipper@sha256:${'a'.repeat(64)}` },
      ],
      terminationGracePeriodSeconds: 60,
      nodeSelector: { 'kubernetes.io/os': 'linux' },
    },
  },
  // The template of the compatibility fixtures (test/fixtures/compat/v0.2).
  fixture: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'mysql', image: 'mysql:8.0', readinessProbe: { tcpSocket: { port: 3306 } } }] } },
} satisfies Record<string, PodTemplateSpec>;

/** templateHash(template, collisionCount 0, 1, 7) as v0.2 (028831f) computed it. */
const PINNED: Record<keyof typeof TEMPLATES, [string, string, string]> = {
  minimal: ['69c5784fd6', '7f5b85cff5', '4584f67677'],
  mysql: ['5479c77cb5', '7fd9b6848d', '78bb595954'],
  sidecars: ['47bd56c975', '775d45cd5d', '5c57648984'],
  fixture: ['74f47694b4', '4584878cc7', '5c8968d495'],
};

/** The mysql template as the API server and `kubectl get -o yaml` spell it: every default written out. */
const mysqlSpelledOut = () => {
  const t = structuredClone(TEMPLATES.mysql) as any;
  t.metadata.creationTimestamp = null;
  Object.assign(t.spec, { restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', securityContext: {}, enableServiceLinks: true });
  const c = t.spec.containers[0];
  Object.assign(c, { imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
  c.ports[0].protocol = 'TCP';
  c.env[1].valueFrom.fieldRef.apiVersion = 'v1';
  Object.assign(c.readinessProbe, { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
  t.spec.volumes[0].configMap.defaultMode = 0o644;
  return t as PodTemplateSpec;
};

/** The same value with the keys of every object in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversed(v)]));
}

describe('the revision hash is pinned', () => {
  for (const [name, template] of Object.entries(TEMPLATES) as [keyof typeof TEMPLATES, PodTemplateSpec][]) {
    it(`${name}: the names v0.2 gave it, for collisionCount 0, 1 and 7`, () => {
      expect([0, 1, 7].map((c) => templateHash(template, c))).toEqual(PINNED[name]);
    });
  }

  it('the hash function itself: FNV-32a and the safe alphabet (k8s.io/apimachinery)', () => {
    expect(fnv32a(new TextEncoder().encode(''))).toBe(0x811c9dc5);
    expect(fnv32a(new TextEncoder().encode('a'))).toBe(0xe40c292c);
    expect(safeEncode(0)).toBe('4444444444');
    expect(safeEncode(4294967295)).toBe('86f8fbc6f9');
  });
});

describe('the canonical form', () => {
  it('key order is irrelevant, at every depth', () => {
    for (const t of Object.values(TEMPLATES)) expect(templateHash(reversed(t), 0)).toBe(templateHash(t, 0));
  });

  it('a template with every default the API server fills spelled out hashes as the one without', () => {
    expect(templateHash(mysqlSpelledOut(), 0)).toBe(PINNED.mysql[0]);
    expect(canonicalJson(canonicalTemplate(mysqlSpelledOut()))).toBe(canonicalJson(TEMPLATES.mysql));
    const probe = structuredClone(TEMPLATES.sidecars) as any;
    Object.assign(probe.spec.containers[0].readinessProbe.httpGet, { scheme: 'HTTP' });
    expect(templateHash(probe, 0)).toBe(PINNED.sidecars[0]);
  });

  it('a value that is not the default is kept: the templates differ', () => {
    const variants: ((t: any) => void)[] = [
      (t) => (t.spec.containers[0].imagePullPolicy = 'Always'),
      (t) => (t.spec.containers[0].readinessProbe.periodSeconds = 5),
      (t) => (t.spec.containers[0].ports[0].protocol = 'UDP'),
      (t) => (t.spec.volumes[0].configMap.defaultMode = 0o600),
      (t) => (t.spec.terminationGracePeriodSeconds = 31),
      (t) => (t.spec.securityContext = { runAsUser: 999 }),
      (t) => (t.spec.containers[0].env[1].valueFrom.fieldRef.apiVersion = 'v2'),
      (t) => (t.metadata.creationTimestamp = '2025-01-01T00:00:00Z'),
    ];
    for (const change of variants) {
      const t = structuredClone(TEMPLATES.mysql);
      change(t);
      expect(sameTemplate(t, TEMPLATES.mysql), String(change)).toBe(false);
      expect(templateHash(t, 0)).not.toBe(PINNED.mysql[0]);
    }
  });

  it("an emptyDir's {} is the volume source, not an empty default: kept", () => {
    const a = { spec: { containers: [{ name: 'a', image: 'x:1' }], volumes: [{ name: 'v', emptyDir: {} }] } };
    const b = { spec: { containers: [{ name: 'a', image: 'x:1' }], volumes: [{ name: 'v' }] } };
    expect(sameTemplate(a, b)).toBe(false);
  });

  it('imagePullPolicy defaults as the API server does: Always for :latest or no tag, else IfNotPresent', () => {
    expect(['nginx', 'nginx:latest', 'registry:5000/nginx', 'nginx:1.27', 'registry:5000/nginx:1', `nginx@sha256:${'a'.repeat(64)}`].map(defaultPullPolicy)).toEqual([
      'Always',
      'Always',
      'Always',
      'IfNotPresent',
      'IfNotPresent',
      'IfNotPresent',
    ]);
    const on = (image: string, policy?: string) => ({ spec: { containers: [{ name: 'a', image, ...(policy ? { imagePullPolicy: policy } : {}) }] } });
    expect(sameTemplate(on('nginx', 'Always'), on('nginx'))).toBe(true);
    expect(sameTemplate(on('nginx', 'IfNotPresent'), on('nginx'))).toBe(false);
    expect(sameTemplate(on('nginx:1.27', 'IfNotPresent'), on('nginx:1.27'))).toBe(true);
  });
});

describe('deciding with a template equal only semantically', () => {
  it('a template read back with its defaults spelled out is the same revision: no new revision, no pod write', async () => {
    const w = await settled({ replicas: 3 });
    const before = w.neoset.status!.updateRevision;
    const pods = [...w.pods.values()].map((p) => `${p.metadata.uid}/${p.metadata.labels?.[LABEL_REVISION_HASH]}`);
    w.edit((s) => {
      const c = s.template.spec.containers[0] as Record<string, unknown>;
      Object.assign(c, { imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
      Object.assign(s.template.spec, { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' });
    });
    const p = decide(w.snapshot(), new Date(w.now));
    expect(steps(p)).toEqual([]);
    expect(p.status).toMatchObject({ updateRevision: before, currentRevision: before, updatedReplicas: 3 });
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    expect([...w.pods.values()].map((p) => `${p.metadata.uid}/${p.metadata.labels?.[LABEL_REVISION_HASH]}`)).toEqual(pods);
    expect(w.revisions.size).toBe(1);
  });

  it('pods on a revision a previous release made of the same template (a default spelled out) are on update: no pod write, the revision kept', async () => {
    const w = await settled({ replicas: 3, revisionHistoryLimit: 0 });
    const r1 = w.revisions.values().next().value!;
    // v0.2 compared templates byte for byte: the spelled-out template became revision 2, named by
    // the hash of its raw JSON, and the status names it; the pods still carry revision 1's label.
    const spelled = structuredClone(w.neoset.spec.template) as any;
    spelled.spec.containers[0].terminationMessagePath = '/dev/termination-log';
    const r2name = `web-${safeEncode(fnv32a(new TextEncoder().encode(canonicalJson(spelled))))}`;
    const r2 = structuredClone(r1);
    r2.metadata = { ...r2.metadata, name: r2name, uid: 'r2-uid', labels: { ...r2.metadata.labels, [LABEL_REVISION_HASH]: r2name.slice(4) } };
    delete r2.metadata.resourceVersion;
    r2.data = { spec: { template: spelled } };
    r2.revision = 2;
    w.revisions.set(r2name, r2);
    w.edit((s) => (s.template = spelled));
    w.mutateNeoSet((n) => (n.status = { ...n.status!, updateRevision: r2name }));
    // Every pod already runs revision 2's template: the rollout is complete without touching one.
    const p = decide(w.snapshot(), new Date(w.now));
    expect(steps(p)).toEqual(['recordEvent:RolloutCompleted']);
    expect(p.status).toMatchObject({ updateRevision: r2name, currentRevision: r2name, updatedReplicas: 3, phase: 'Completed' });
    expect(await w.settle()).toBeGreaterThanOrEqual(0);
    expect([...w.pods.values()].map((pod) => pod.metadata.labels?.[LABEL_REVISION_HASH])).toEqual([r1.metadata.name, r1.metadata.name, r1.metadata.name]);
    expect([...w.revisions.keys()].sort()).toEqual([r1.metadata.name, r2name].sort());
  });
});
