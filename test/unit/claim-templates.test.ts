// §4.12 "Claims that grow" at admission: on UPDATE a claim template's storage may be raised; a shrink
// and any other change are refused with the field path. The rule, and /validate through app.request.
import { describe, expect, it } from 'vitest';
import { NeoSet } from '../../shared/api/neoset.ts';
import { limitsFromEnv } from '../../shared/admission/limits.ts';
import { reviewIssues } from '../../shared/admission/validate.ts';
import { renderIssue } from '../../shared/admission/issue.ts';
import { CASE_ENV, validNeoSet } from './admission-cases.ts';
import { post, review, testApp } from './admission-review.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const limits = limitsFromEnv(CASE_ENV);

function withClaims(storage = '1Gi'): Json {
  const n = validNeoSet();
  n.spec.volumeClaimTemplates = [
    {
      metadata: { name: 'data', labels: { tier: 'db' } },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage } } },
    },
  ];
  return n;
}

const update = (change: (n: Json) => void, old = withClaims()) => {
  const n = structuredClone(old);
  change(n);
  return reviewIssues(NeoSet.parse(n), NeoSet.parse(old), limits).map(renderIssue);
};
const storage = (n: Json, i = 0) => n.spec.volumeClaimTemplates[i].spec.resources.requests;

describe('claim templates on UPDATE (§4.12)', () => {
  it.each(['2Gi', '1025Mi', '1.5Gi', '2147483648', '1Gi'])('allows storage 1Gi -> %s', (to) => {
    expect(update((n) => void (storage(n).storage = to))).toEqual([]);
  });

  it('allows a raise together with a template change', () => {
    expect(update((n) => ((storage(n).storage = '5Gi'), (n.spec.template.spec.containers[0].image = 'nginx:1.28')))).toEqual([]);
  });

  it('refuses a shrink with the field path and both sizes', () => {
    expect(update((n) => void (storage(n).storage = '1Gi'), withClaims('2Gi'))).toEqual([
      'spec.volumeClaimTemplates[0].spec.resources.requests.storage: 1Gi is less than 2Gi: a claim cannot shrink (a volume can only grow; the existing PVCs keep 2Gi)',
    ]);
    // Exact arithmetic: 1Gi is more than 1G, so 1Gi -> 1G is a shrink.
    expect(update((n) => void (storage(n).storage = '1G'))[0]).toMatch(/storage: 1G is less than 1Gi/);
  });

  it('refuses storage that is not a quantity, and its removal', () => {
    expect(update((n) => void (storage(n).storage = 'lots'))).toEqual(['spec.volumeClaimTemplates[0].spec.resources.requests.storage: "lots" is not a quantity (such as "2Gi")']);
    expect(update((n) => void delete storage(n).storage)[0]).toMatch(/^spec\.volumeClaimTemplates\[0\]\.spec\.resources\.requests\.storage: cannot be removed/);
  });

  it.each([
    ['accessModes', (n: Json) => (n.spec.volumeClaimTemplates[0].spec.accessModes = ['ReadWriteMany']), 'spec.volumeClaimTemplates[0].spec.accessModes'],
    ['storageClassName', (n: Json) => (n.spec.volumeClaimTemplates[0].spec.storageClassName = 'fast'), 'spec.volumeClaimTemplates[0].spec.storageClassName'],
    ['labels', (n: Json) => (n.spec.volumeClaimTemplates[0].metadata.labels = { tier: 'web' }), 'spec.volumeClaimTemplates[0].metadata.labels.tier'],
    ['the name', (n: Json) => (n.spec.volumeClaimTemplates[0].metadata.name = 'logs'), 'spec.volumeClaimTemplates[0].metadata.name'],
    ['a limit on storage', (n: Json) => (n.spec.volumeClaimTemplates[0].spec.resources.limits = { storage: '9Gi' }), 'spec.volumeClaimTemplates[0].spec.resources.limits'],
  ])('refuses a change of %s, naming the field and what may change', (_, change, path) => {
    const issues = update(change);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(new RegExp(`^${path.replace(/[[\].]/g, '\\$&')}: field is immutable \\(was .*, now .*\\); only spec\\.resources\\.requests\\.storage of an existing claim template may change \\(raised\\)$`));
  });

  it('refuses adding or removing a claim template', () => {
    const added = update((n) => n.spec.volumeClaimTemplates.push({ metadata: { name: 'logs' }, spec: { resources: { requests: { storage: '1Gi' } } } }));
    expect(added).toEqual([
      'spec.volumeClaimTemplates: field is immutable but for storage: a claim template cannot be added or removed (was 1, now 2); only spec.resources.requests.storage of an existing claim template may change (raised)',
    ]);
    expect(update((n) => (n.spec.volumeClaimTemplates = []))[0]).toMatch(/cannot be added or removed \(was 1, now 0\)/);
  });

  it('a raise and another change: the other change is refused, the raise is not', () => {
    expect(update((n) => ((storage(n).storage = '3Gi'), (n.spec.volumeClaimTemplates[0].spec.storageClassName = 'fast')))).toEqual([
      'spec.volumeClaimTemplates[0].spec.storageClassName: field is immutable (was "standard", now "fast"); only spec.resources.requests.storage of an existing claim template may change (raised)',
    ]);
  });

  it('/validate answers a shrink with allowed=false and the field path, a raise with allowed=true', async () => {
    const app = testApp();
    const old = withClaims('2Gi');
    const shrink = structuredClone(old);
    storage(shrink).storage = '1Gi';
    const refused = await post(app, '/validate', review('UPDATE', shrink, old));
    expect(refused.json.response.allowed).toBe(false);
    expect(refused.json.response.status.message).toContain('spec.volumeClaimTemplates[0].spec.resources.requests.storage: 1Gi is less than 2Gi');
    const raise = structuredClone(old);
    storage(raise).storage = '4Gi';
    expect((await post(app, '/validate', review('UPDATE', raise, old))).json.response.allowed).toBe(true);
  });
});
