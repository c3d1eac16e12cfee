// Fuzzing the admission app (SPEC §5: never a 5xx, never a crash, for any input). Bodies: generated
// NeoSet reviews (valid and invalid), the same with a value of the wrong type (or removed) at a random
// path, truncated, arbitrary JSON, arbitrary text, and very large ones. Fixed seed; FUZZ_RUNS (default
// 10,000) sets the number — `npm run fuzz` runs 200,000.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { post, review, testApp } from './admission-review.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_504);
const app = testApp();

const quantity = fc.oneof(
  fc.constantFrom('500m', '2', '2001m', '4Gi', '5G', '1e3', '0.5', '-1', '1Ki', '1.5Ei', 'abc', '', '1e999'),
  fc.integer({ min: -10, max: 10_000 }),
  fc.string({ maxLength: 12 }),
);

const container = fc.record(
  {
    name: fc.oneof(fc.constantFrom('app', 'sidecar', 'Bad_Name', ''), fc.string({ maxLength: 10 })),
    image: fc.constantFrom('nginx:1.27', 'nginx', 'nginx:latest', 'r.io/a/b@sha256:00', ''),
    readinessProbe: fc.constant({ httpGet: { path: '/', port: 80 } }),
    resources: fc.record({ limits: fc.record({ cpu: quantity, memory: quantity }, { requiredKeys: [] }) }, { requiredKeys: [] }),
    env: fc.array(fc.record({ name: fc.string({ maxLength: 5 }), value: fc.string({ maxLength: 5 }) }), { maxLength: 2 }),
  },
  { requiredKeys: ['name', 'image'] },
);

const labels = fc.dictionary(fc.constantFrom('app', 'tier', 'a.b/c', ''), fc.constantFrom('web', 'db', ''), { maxKeys: 3 });

const neoset = fc.record({
  apiVersion: fc.constant('neo.io/v1alpha1'),
  kind: fc.constant('NeoSet'),
  metadata: fc.record({ name: fc.oneof(fc.constantFrom('web', 'db-1', 'x'.repeat(60), 'a.b'), fc.string({ maxLength: 8 })) }),
  spec: fc.record(
    {
      replicas: fc.oneof(fc.integer({ min: -2, max: 2000 }), fc.constant(1e300)),
      selector: fc.record(
        {
          matchLabels: labels,
          matchExpressions: fc.array(
            fc.record({ key: fc.constantFrom('app', 'tier'), operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist', 'Maybe'), values: fc.array(fc.constantFrom('web', 'db'), { maxLength: 2 }) }),
            { maxLength: 2 },
          ),
        },
        { requiredKeys: [] },
      ),
      serviceName: fc.constantFrom('web', 'other', ''),
      template: fc.record({ metadata: fc.record({ labels }), spec: fc.record({ containers: fc.array(container, { minLength: 0, maxLength: 3 }) }) }),
      volumeClaimTemplates: fc.array(fc.record({ metadata: fc.record({ name: fc.constantFrom('data', 'logs') }), spec: fc.constant({}) }), { maxLength: 2 }),
      podManagementPolicy: fc.constantFrom('OrderedReady', 'Parallel', 'Sometimes'),
      minReadySeconds: fc.integer({ min: -1, max: 1000 }),
      revisionHistoryLimit: fc.integer({ min: -1, max: 20 }),
      updateStrategy: fc.record(
        {
          type: fc.constantFrom('InPlaceIfPossible', 'InPlaceOnly', 'ReCreate', 'OnDelete', 'Sideways'),
          partition: fc.integer({ min: -1, max: 20 }),
          maxUnavailable: fc.oneof(fc.integer({ min: -3, max: 10 }), fc.constantFrom('0%', '1%', '50%', '100%', '101%', '-5%', 'half', '5', '')),
          pause: fc.boolean(),
          inPlaceUpdateStrategy: fc.record(
            { readiness: fc.constantFrom('Probe', 'Ready', 'Never'), gracePeriodSeconds: fc.integer({ min: -1, max: 100 }), timeoutSeconds: fc.integer({ min: 0, max: 1000 }) },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['selector', 'template'] },
  ),
});

const operation = fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'PATCH');
const reviewBody = fc.tuple(operation, neoset, neoset, fc.boolean()).map(([op, obj, old, scale]) =>
  scale
    ? review(op, { apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: obj.spec.replicas } }, { spec: { replicas: 3 } }, { kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, subResource: 'scale' })
    : review(op, obj, op === 'UPDATE' ? old : undefined),
);

/** Every [path, holder] pair in a JSON value, to replace or remove one of them. */
function slots(value: unknown): [Record<string, unknown> | unknown[], string | number][] {
  const out: [Record<string, unknown> | unknown[], string | number][] = [];
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) v.forEach((child, i) => (out.push([v, i]), stack.push(child)));
    else if (v && typeof v === 'object') for (const [k, child] of Object.entries(v)) out.push([v as Record<string, unknown>, k]), stack.push(child);
  }
  return out;
}

const wrongType = fc.tuple(reviewBody, fc.nat(), fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined })).map(([body, pick, value]) => {
  const all = slots(body);
  const [holder, key] = all[pick % all.length];
  if (value === undefined && !Array.isArray(holder)) delete (holder as Record<string, unknown>)[key];
  else (holder as Record<string | number, unknown>)[key] = value ?? null;
  return JSON.stringify(body);
});

const truncated = fc.tuple(reviewBody, fc.nat()).map(([body, cut]) => {
  const text = JSON.stringify(body);
  return text.slice(0, cut % text.length);
});

const large = fc.tuple(reviewBody, fc.integer({ min: 1, max: 200 }), fc.constantFrom('containers', 'annotation', 'deep')).map(([body, n, how]) => {
  const obj = body.request.object as any;
  if (obj?.spec?.template) {
    if (how === 'containers') obj.spec.template.spec.containers = Array.from({ length: n * 5 }, (_, i) => ({ name: `c${i}`, image: 'nginx:1', readinessProbe: {} }));
    if (how === 'annotation') obj.spec.template.metadata.annotations = { big: 'x'.repeat(n * 2000) };
  }
  const text = JSON.stringify(body);
  return how === 'deep' ? text.replace(/"spec":\{/, `"deep":${'['.repeat(n * 5)}${']'.repeat(n * 5)},"spec":{`) : text;
});

const anyJson = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v));
const envelopeWithJunk = fc.jsonValue({ maxDepth: 3 }).map((request) => JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request }));
const text = fc.string({ maxLength: 200 });

const body = fc.oneof(
  { weight: 4, arbitrary: reviewBody.map((b) => JSON.stringify(b)) },
  { weight: 4, arbitrary: wrongType },
  { weight: 2, arbitrary: truncated },
  { weight: 1, arbitrary: large },
  { weight: 1, arbitrary: anyJson },
  { weight: 1, arbitrary: envelopeWithJunk },
  { weight: 1, arbitrary: text },
);

function uidOf(text: string): unknown {
  try {
    return JSON.parse(text)?.request?.uid;
  } catch {
    return undefined;
  }
}

describe('admission fuzz', () => {
  it(`${RUNS} generated bodies: no 5xx, no crash, a well-formed AdmissionReview for every 200`, { timeout: 600_000 }, async () => {
    const statuses: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom('/mutate', '/validate'), async (text, path) => {
        const { status, json } = await post(app, path, text);
        const key = status === 200 ? `200 allowed=${json?.response?.allowed}` : String(status);
        statuses[key] = (statuses[key] ?? 0) + 1;
        expect(status).toBeLessThan(500);
        if (status === 200) {
          expect(json).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
          expect(json.response.uid).toBe(uidOf(text));
          expect(typeof json.response.allowed).toBe('boolean');
          if (!json.response.allowed) expect(typeof json.response.status.message).toBe('string');
          if (json.response.patch !== undefined) {
            expect(json.response.patchType).toBe('JSONPatch');
            expect(Array.isArray(JSON.parse(Buffer.from(json.response.patch, 'base64').toString()))).toBe(true);
          }
          for (const w of json.response.warnings ?? []) expect(w).not.toMatch(/\n/);
        } else {
          expect([400, 413]).toContain(status);
          expect(typeof json.error).toBe('string');
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    const total = Object.values(statuses).reduce((a, b) => a + b, 0);
    console.log(`admission fuzz: ${total} bodies, seed ${SEED}, statuses ${JSON.stringify(statuses)}`);
    expect(total).toBeGreaterThanOrEqual(RUNS);
  });
});
