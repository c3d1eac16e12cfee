// knative/eventing-only/ says what knative/ says, without Knative Serving: every object of knative/
// but the Knative Services is there unchanged (save the Triggers' and Broker's references, which name
// plain Services, and the per-attempt timeouts that stand for Serving's timeoutSeconds), and each
// Knative Service is a Deployment + ClusterIP Service with the same image, env, ServiceAccount,
// probes' path, resources and securityContext. The oidc component's audiences and senders agree with
// one another and with the names Knative gives the Triggers' OIDC ServiceAccounts.
import { describe, expect, it } from 'vitest';
import { eventingOnlyManifests } from '../../dev/cluster/neoset-on-knative.ts';
import { kustomize, type Manifest } from '../../dev/manifests.ts';

type Obj = Manifest & { spec?: any };
const serving = kustomize() as Obj[];
const eventingOnly = eventingOnlyManifests() as Obj[];
const withOidc = eventingOnlyManifests({ oidc: true }) as Obj[];
const key = (m: Manifest) => `${m.apiVersion}/${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`;
const isKsvc = (m: Manifest) => m.apiVersion === 'serving.knative.dev/v1' && m.kind === 'Service';
const find = (all: Obj[], kind: string, name: string) => all.find((m) => m.kind === kind && m.metadata.name === name && m.apiVersion !== 'serving.knative.dev/v1')!;
const envOf = (c: { env?: { name: string; value?: string }[] }) => Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? JSON.stringify((e as { valueFrom?: unknown }).valueFrom)]));

/** The Trigger or Broker as knative/ has it, with what eventing-only changes undone. */
function asServing(m: Obj): Obj {
  const copy = structuredClone(m);
  const unref = (ref?: { apiVersion: string; kind: string }) => ref && ref.kind === 'Service' && (ref.apiVersion = 'serving.knative.dev/v1');
  unref(copy.spec?.subscriber?.ref);
  unref(copy.spec?.delivery?.deadLetterSink?.ref);
  if (m.kind === 'Trigger') delete copy.spec.delivery.timeout;
  return copy;
}

describe('knative/eventing-only/', () => {
  it('holds every object of knative/ but the Knative Services, unchanged but for the references to them', () => {
    const byKey = new Map(eventingOnly.map((m) => [key(m), m]));
    const kept = serving.filter((m) => !isKsvc(m));
    expect(kept.length).toBeGreaterThan(20);
    for (const m of kept) {
      const there = byKey.get(key(m));
      expect(there, key(m)).toBeDefined();
      expect(['Trigger', 'Broker'].includes(m.kind) ? asServing(there!) : there, key(m)).toEqual(m);
    }
    expect(eventingOnly.filter((m) => m.apiVersion.startsWith('serving.knative.dev'))).toEqual([]);
    // What is new: a Deployment and a Service for each Knative Service, nothing else.
    const added = eventingOnly.filter((m) => !serving.some((s) => key(s) === key(m))).map(key).sort();
    expect(added).toEqual(
      ['neoset-dead-letter', 'neoset-readiness', 'neoset-reconcile'].flatMap((n) => [`apps/v1/Deployment/neoset-system/${n}`, `v1/Service/neoset-system/${n}`]).sort(),
    );
  });

  it("points every Trigger and dead-letter sink at a plain Service that exists, and bounds each attempt by Serving's timeoutSeconds", () => {
    for (const t of eventingOnly.filter((m) => m.kind === 'Trigger')) {
      const { subscriber, delivery } = t.spec;
      expect(subscriber.ref.apiVersion, t.metadata.name).toBe('v1');
      expect(find(eventingOnly, 'Service', subscriber.ref.name), subscriber.ref.name).toBeDefined();
      expect(delivery.deadLetterSink.ref).toEqual({ apiVersion: 'v1', kind: 'Service', name: 'neoset-dead-letter' });
      const ksvc = serving.find((m) => isKsvc(m) && m.metadata.name === subscriber.ref.name) as Obj;
      expect(delivery.timeout, t.metadata.name).toBe(`PT${ksvc.spec.template.spec.timeoutSeconds}S`);
    }
    expect(find(eventingOnly, 'Broker', 'neoset').spec.delivery.deadLetterSink.ref.apiVersion).toBe('v1');
  });

  it('runs each Knative Service as a Deployment with its image, env, ServiceAccount, probes, resources and securityContext, behind a Service on port 80', () => {
    for (const name of ['neoset-reconcile', 'neoset-readiness', 'neoset-dead-letter']) {
      const ksvc = serving.find((m) => isKsvc(m) && m.metadata.name === name) as Obj;
      const deployment = find(eventingOnly, 'Deployment', name);
      const service = find(eventingOnly, 'Service', name);
      const [want] = ksvc.spec.template.spec.containers;
      const [got] = deployment.spec.template.spec.containers;
      expect(got.image, name).toBe(want.image);
      expect({ ...envOf(got), PORT: undefined }, name).toEqual({ ...envOf(want), PORT: undefined });
      expect(deployment.spec.template.spec.serviceAccountName, name).toBe(ksvc.spec.template.spec.serviceAccountName);
      expect([got.resources, got.securityContext?.readOnlyRootFilesystem, got.securityContext?.capabilities], name).toEqual([want.resources, want.securityContext.readOnlyRootFilesystem, want.securityContext.capabilities]);
      expect(got.readinessProbe?.httpGet?.path ?? '', name).toBe(want.readinessProbe?.httpGet?.path ?? '');
      expect(deployment.spec.template.metadata.labels, name).toEqual(ksvc.metadata.labels && { 'app.kubernetes.io/part-of': 'neoset', 'app.kubernetes.io/component': ksvc.metadata.labels['app.kubernetes.io/component'] });
      expect(deployment.spec.template.spec.terminationGracePeriodSeconds, name).toBe(ksvc.spec.template.spec.timeoutSeconds);
      // min-scale 1 stays 1; what scaled to zero keeps one instance (a Deployment cannot scale to zero on demand).
      expect(deployment.spec.replicas, name).toBe(Math.max(1, Number(ksvc.spec.template.metadata.annotations['autoscaling.knative.dev/min-scale'])));
      expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
      expect(service.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http' }]);
      expect(got.ports).toContainEqual({ name: 'http', containerPort: 8080 });
    }
  });

  it("with the oidc component: the Triggers' audiences are the functions' NEOSET_OIDC_AUDIENCE, the senders the Triggers' OIDC ServiceAccounts, an EventPolicy on the Broker", () => {
    for (const fn of ['reconcile', 'readiness']) {
      const env = envOf(find(withOidc, 'Deployment', `neoset-${fn}`).spec.template.spec.containers[0]);
      const triggers = withOidc.filter((m) => m.kind === 'Trigger' && m.spec.subscriber.ref.name === `neoset-${fn}`);
      expect(triggers.length).toBeGreaterThan(0);
      expect(env.NEOSET_OIDC).toBe('required');
      for (const t of triggers) expect(t.spec.subscriber.audience, t.metadata.name).toBe(env.NEOSET_OIDC_AUDIENCE);
      // Knative's name for a Trigger's OIDC ServiceAccount (pkg/auth GetOIDCServiceAccountNameForResource; all short of kmeta.ChildName's 63).
      const senders = triggers.map((t) => `system:serviceaccount:neoset-system:${t.metadata.name}-oidc-eventing.knative.dev-trigger`);
      for (const s of senders) expect(s.split(':').at(-1)!.length).toBeLessThanOrEqual(63);
      expect(env.NEOSET_OIDC_SUBJECTS.split(',').sort()).toEqual(senders.sort());
    }
    const policy = find(withOidc, 'EventPolicy', 'neoset-broker');
    expect(policy.spec.to).toEqual([{ ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'neoset' } }]);
    const sources = withOidc.filter((m) => ['ApiServerSource', 'PingSource'].includes(m.kind) && m.spec.sink.ref.name === 'neoset');
    // …and the fast tick, which reconcile creates (NEOSET_FAST_TICK, SPEC §2.4): in no manifest.
    const fastTick = envOf(find(withOidc, 'Deployment', 'neoset-reconcile').spec.template.spec.containers[0]).NEOSET_FAST_TICK;
    expect(fastTick).toBe('neoset-rollout-tick');
    // (by its OIDC ServiceAccount, Knative's name for it: a ref to a missing source fails the whole policy)
    const from = policy.spec.from.map((f: { ref?: { kind: string; name: string }; sub?: string }) => (f.ref ? `${f.ref.kind}/${f.ref.name}` : f.sub));
    expect(from.sort()).toEqual([...sources.map((s) => `${s.kind}/${s.metadata.name}`), `system:serviceaccount:neoset-system:${fastTick}-oidc-sources.knative.dev-pingsource`].sort());
    // Without the component nothing of it.
    expect(eventingOnly.some((m) => m.kind === 'EventPolicy' || m.spec?.subscriber?.audience)).toBe(false);
  });
});
