// knative/func/*/func.yaml (issue 14): valid against func's own schema (knative/func
// schema/func_yaml-schema.json, copied into test/fixtures/func/), and carrying the settings of the
// Knative Service in knative/<function>.yaml that func can express — the cluster-local label above all,
// since func rewrites the Service's labels on every deploy.
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = new URL('../..', import.meta.url).pathname;
const SCHEMA = JSON.parse(readFileSync(`${REPO_ROOT}test/fixtures/func/func_yaml-schema.json`, 'utf8'));

/** The schema says draft-04; nothing in it differs under Ajv's default draft, once the markers go. */
function withoutDraftMarkers(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutDraftMarkers);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).filter(([k]) => k !== '$schema').map(([k, v]) => [k, withoutDraftMarkers(v)]));
}

/** func's `{{ configMap:<name>:<key> }}` is a container env valueFrom (func_yaml.md "envs"). */
function asContainerEnv(env: { name: string; value: string }): unknown {
  const ref = /^\{\{\s*configMap:([-.a-z0-9]+):([-._a-zA-Z0-9]+)\s*\}\}$/.exec(env.value);
  return ref ? { name: env.name, valueFrom: { configMapKeyRef: { name: ref[1], key: ref[2] } } } : env;
}

/** func has no way to say `optional: true`; its func.yaml says so and how to create the ConfigMap first. */
function withoutOptional(env: { name: string; valueFrom?: { configMapKeyRef?: Record<string, unknown> } }): unknown {
  const ref = env.valueFrom?.configMapKeyRef;
  if (!ref) return env;
  const { optional: _optional, ...rest } = ref;
  return { ...env, valueFrom: { configMapKeyRef: rest } };
}

const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(withoutDraftMarkers(SCHEMA) as object);

describe.each(['reconcile', 'readiness'])('knative/func/%s/func.yaml', (fn) => {
  const text = readFileSync(`${REPO_ROOT}knative/func/${fn}/func.yaml`, 'utf8');
  // The yaml library reads `created` as a string; func's schema wants one (RFC 3339).
  const func = parse(text, { schema: 'core' });
  const [service] = parseAllDocuments(readFileSync(`${REPO_ROOT}knative/${fn}.yaml`, 'utf8')).map((d) => d.toJS());
  const { metadata, spec } = service.spec.template;
  const [container] = spec.containers;

  it("is valid against func's schema (no unknown field: func would ignore it)", () => {
    const ok = validate(func);
    expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([]);
    expect(ok).toBe(true);
  });

  it('deploys the prebuilt image without a build or a push, and says so', () => {
    expect(func.image).toBe(container.image);
    expect(text).toContain(`func deploy --path knative/func/${fn} --build=false --push=false`);
  });

  it('keeps the Service cluster-local and labelled as knative/ does', () => {
    const labels = Object.fromEntries(func.deploy.labels.map((l: { key: string; value: string }) => [l.key, l.value]));
    expect(labels).toEqual(service.metadata.labels);
    expect(labels['networking.knative.dev/visibility']).toBe('cluster-local');
  });

  it('has the same scale bounds, concurrency, resources, ServiceAccount, environment and probes', () => {
    const a = metadata.annotations;
    expect(func.deploy.options.scale).toEqual({
      min: Number(a['autoscaling.knative.dev/min-scale']),
      max: Number(a['autoscaling.knative.dev/max-scale']),
      metric: a['autoscaling.knative.dev/metric'],
      target: Number(a['autoscaling.knative.dev/target']),
    });
    expect(func.deploy.options.resources).toEqual({ requests: container.resources.requests, limits: { ...container.resources.limits, concurrency: spec.containerConcurrency } });
    expect(func.deploy.serviceAccountName).toBe(spec.serviceAccountName);
    expect(func.run.envs.map(asContainerEnv)).toEqual(container.env.map(withoutOptional));
    expect(func.deploy.healthEndpoints).toEqual({ liveness: container.livenessProbe.httpGet.path, readiness: container.readinessProbe.httpGet.path });
    for (const key of ['prometheus.io/scrape', 'prometheus.io/port', 'prometheus.io/path']) expect(func.deploy.annotations[key]).toBe(a[key]);
    // timeoutSeconds has no func.yaml field: the file gives the command that sets it, with the value.
    expect(text).toContain(`"timeoutSeconds":${spec.timeoutSeconds}`);
  });
});
