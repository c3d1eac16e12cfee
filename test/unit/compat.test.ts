// Upgrades that write nothing (issue 22 §2, SPEC §4.2 "a new release decides the state an older one
// left with zero writes"), after the StatefulSet controller's stateful_set_compatibility_test.go:
// each fixture is a state the previous release's functions left on a real control plane
// (test/fixtures/compat/v0.2, captured by test/compat/capture.ts). Decided by this release's core:
//  * every revision v0.2 made is named as this release would name it (the pinned hash,
//    revision-hash.test.ts): two versions deciding one new template make one revision, not two;
//  * at the capture time, the plan makes no write — no action, no status (or a status differing from
//    the stored one only in NEW_STATUS_FIELDS, the fields this release adds, listed by name);
//  * the CRD's schema since v0.2 only adds (test/fixtures/compat/v0.2/crd.yaml is 028831f's);
//  * at the capture time and later (each time the previous release's own decision was recorded:
//    10 s, 1 h 1 min after), the actions are the ones the previous release decided: in-flight work —
//    a draining pod's patch, a timed pause's next step, a deadline — carried on as it would have.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderCrd } from '../../shared/api/gen-crd.ts';
import { NeoSet } from '../../shared/api/neoset.ts';
import { decide } from '../../shared/core/decide.ts';
import { canonicalJson } from '../../shared/core/json.ts';
import { revisionName } from '../../shared/core/revisions/revisions.ts';
import type { Snapshot } from '../../shared/core/snapshot.ts';
import { FIXTURE_STATES, type FixtureFile } from '../compat/fixture.ts';
import { PREVIOUS_RELEASE } from '../compat/previous-release.ts';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'compat', 'v0.2');

/**
 * What this release adds to a status v0.2 wrote, that a first decision may write: top-level fields
 * by name, conditions as `conditions[<type>]`. A new one goes here, by name, with the change that
 * adds it — each costs one status write per NeoSet on upgrade, and while v0.2 still decides beside
 * this release (it rewrites the status without it: its conditions are its own four types and
 * ReplicaFailure), a write every time one follows the other.
 * None: ClaimsResized (issue 23 §3) appears only once a claim is short of its request — never on a
 * state v0.2 left, whose claim templates cannot have changed (claims-condition.ts).
 */
const NEW_STATUS_FIELDS: string[] = [];

const fixtures = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as FixtureFile);

function snapshotOf(f: FixtureFile): Snapshot {
  return structuredClone({ neoset: NeoSet.parse(f.neoset), pods: f.pods, revisions: f.revisions, pvcs: f.pvcs });
}

type Status = Record<string, unknown> & { conditions?: { type: string }[] };

/**
 * Where `next` differs from `stored`: top-level fields by name, conditions by `conditions[<type>]`.
 * Not the bookkeeping decide() itself does not count as a change (decide.ts withoutBookkeeping):
 * observedResourceVersions, which the applier records with each status write, and updateClaims, from
 * which any status write drops the dead claims, as v0.2's did. Differences in NEW_STATUS_FIELDS are
 * left out.
 */
const BOOKKEEPING = ['observedResourceVersions', 'updateClaims'];
function statusDifferences(stored: Status, next: Status): string[] {
  const keys = [...new Set([...Object.keys(stored), ...Object.keys(next)])].filter((k) => !BOOKKEEPING.includes(k) && k !== 'conditions');
  const byType = (s: Status) => new Map((s.conditions ?? []).map((c) => [c.type, c]));
  const [a, b] = [byType(stored), byType(next)];
  const types = [...new Set([...a.keys(), ...b.keys()])];
  return [
    ...keys.filter((k) => canonicalJson(stored[k]) !== canonicalJson(next[k])),
    ...types.filter((t) => canonicalJson(a.get(t)) !== canonicalJson(b.get(t))).map((t) => `conditions[${t}]`),
  ]
    .filter((d) => !NEW_STATUS_FIELDS.includes(d))
    .sort();
}

describe('the compatibility fixtures', () => {
  it(`cover every state of issue 22 §2, all captured from ${PREVIOUS_RELEASE.slice(0, 7)}`, () => {
    expect(fixtures.map((f) => f.state).sort()).toEqual([...FIXTURE_STATES].sort());
    for (const f of fixtures) expect(f.commit).toBe(PREVIOUS_RELEASE);
  });
});

describe.each(fixtures.map((f) => [f.state, f] as const))('%s, left by v0.2', (_state, f) => {
  const at = (afterMs: number) => new Date(Date.parse(f.capturedAt) + afterMs);
  const storedStatus = ((f.neoset as { status?: Status }).status ?? {}) as Status;

  it('each revision is named as this release names its template: a new template is one revision, whichever version makes it', () => {
    const neoset = NeoSet.parse(f.neoset);
    for (const r of f.revisions) expect(revisionName(neoset.metadata.name, r.data.spec.template, neoset.status?.collisionCount ?? 0)).toBe(r.metadata.name);
  });

  it('decided by this release at the capture time: zero writes (a status only for NEW_STATUS_FIELDS)', () => {
    const plan = decide(snapshotOf(f), at(0));
    // An Event v0.2 posts again at every decision (the applier posts it once per key) is not a write
    // of this release's making: it must be the one v0.2 decided, nothing more.
    const previous = f.previousDecisions.find((d) => d.afterMs === 0)!;
    const writes = plan.actions.filter((a) => a.kind !== 'recordEvent');
    expect(writes).toEqual([]);
    expect(canonicalJson(plan.actions)).toBe(canonicalJson(previous.actions));
    if (plan.status !== null) expect(statusDifferences(storedStatus, plan.status as Status)).toEqual([]);
    expect(plan.claim).toBe(false);
  });

  it.each(f.previousDecisions.map((d) => [d.afterMs, d] as const))('%i ms later: the actions v0.2 decided, the same status', (afterMs, previous) => {
    const plan = decide(snapshotOf(f), at(afterMs));
    expect(canonicalJson(plan.actions)).toBe(canonicalJson(previous.actions));
    // No status from either (nothing to write), or the same one but for the fields this release adds.
    if (plan.status !== null || previous.status !== null) {
      expect(statusDifferences((previous.status ?? storedStatus) as Status, (plan.status ?? storedStatus) as Status)).toEqual([]);
    }
    expect(plan.requeueAfter).toBe(previous.requeueAfter);
  });
});

type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; required?: string[]; enum?: unknown[]; additionalProperties?: Schema | boolean; [k: string]: unknown };

/** Keywords that make a schema refuse more when tightened. */
const CONSTRAINTS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern', 'format', 'x-kubernetes-int-or-string', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-validations', 'nullable'];

/**
 * How `next` refuses what `old` accepted: a property gone or retyped, a new required one, an enum
 * value dropped, a constraint changed. What `next` adds (properties, enum values) is listed apart.
 */
function schemaChanges(old: Schema, next: Schema, path: string, out: { breaking: string[]; added: string[] }) {
  if (old.type !== next.type) out.breaking.push(`${path}: type ${old.type} -> ${next.type}`);
  for (const k of CONSTRAINTS) if (canonicalJson(old[k]) !== canonicalJson(next[k])) out.breaking.push(`${path}: ${k} ${JSON.stringify(old[k])} -> ${JSON.stringify(next[k])}`);
  for (const r of next.required ?? []) if (!(old.required ?? []).includes(r)) out.breaking.push(`${path}: ${r} newly required`);
  if (old.enum || next.enum) {
    for (const v of old.enum ?? []) if (!(next.enum ?? []).includes(v)) out.breaking.push(`${path}: enum value ${JSON.stringify(v)} dropped`);
    for (const v of next.enum ?? []) if (!(old.enum ?? []).includes(v)) out.added.push(`${path}: enum value ${JSON.stringify(v)}`);
  }
  for (const [k, child] of Object.entries(old.properties ?? {})) {
    const now = next.properties?.[k];
    if (!now) out.breaking.push(`${path}.${k}: removed`);
    else schemaChanges(child, now, `${path}.${k}`, out);
  }
  for (const k of Object.keys(next.properties ?? {})) if (!old.properties?.[k]) out.added.push(`${path}.${k}`);
  if (old.items && next.items) schemaChanges(old.items, next.items, `${path}[]`, out);
  else if (old.items || next.items) out.breaking.push(`${path}: items changed`);
  if (typeof old.additionalProperties === 'object' && typeof next.additionalProperties === 'object') schemaChanges(old.additionalProperties, next.additionalProperties, `${path}.*`, out);
  else if (canonicalJson(old.additionalProperties) !== canonicalJson(next.additionalProperties)) out.breaking.push(`${path}: additionalProperties changed`);
}

/**
 * Deliberate tightenings, each with why every object an earlier release stored stays usable: the API
 * server ratchets (CRD validation ratcheting, GA in 1.33: a field an update leaves unchanged is not
 * re-validated), and the functions read what the new rule refuses as the rule says.
 */
const TIGHTENED: Record<string, string> = {
  // Issue 34 point 1: the applier only ever wrote the API server's list versions, which match; a value
  // written by hand is read as no record (shared/api/neoset.ts .catch) and replaced by the next status write.
  '.status.observedResourceVersions.pods': 'a resourceVersion (RECORDED_VERSION_PATTERN)',
  '.status.observedResourceVersions.controllerrevisions': 'a resourceVersion (RECORDED_VERSION_PATTERN)',
  '.status.observedResourceVersions.persistentvolumeclaims': 'a resourceVersion (RECORDED_VERSION_PATTERN)',
  // Issue 34 point 2: admission has always refused any other budget, and still reads what the CRD
  // holds; the API server now says it too, for the writes the webhooks no longer see (the brake).
  '.spec.updateStrategy.maxUnavailable': 'an integer >= 1 or 1%..100% (CEL)',
  '.spec.scaleStrategy.maxUnavailable': 'an integer >= 1 or 1%..100% (CEL)',
};

describe('the CRD since v0.2 (test/fixtures/compat/v0.2/crd.yaml, 028831f:knative/crd.yaml)', () => {
  const old = parse(readFileSync(join(DIR, 'crd.yaml'), 'utf8'));
  const next = parse(renderCrd());

  it('keeps its names, scope, version, subresources and printer columns', () => {
    const { versions: oldVersions, ...oldRest } = old.spec;
    const { versions: nextVersions, ...nextRest } = next.spec;
    expect(nextRest).toEqual(oldRest);
    const outside = (v: { schema: unknown }) => ({ ...v, schema: undefined, additionalPrinterColumns: undefined });
    expect(nextVersions.map(outside)).toEqual(oldVersions.map(outside));
    // Columns only added, after v0.2's (Step, 0.4: kubectl get -o wide, and the state gauges' Table).
    type Versions = { additionalPrinterColumns: unknown[] }[];
    for (const [i, v] of (oldVersions as Versions).entries()) {
      expect((nextVersions as Versions)[i].additionalPrinterColumns.slice(0, v.additionalPrinterColumns.length)).toEqual(v.additionalPrinterColumns);
    }
  });

  it('only adds to the schema: every object v0.2 stored stays valid, and v0.2 (zod strips unknown keys) ignores what is new', () => {
    const out = { breaking: [] as string[], added: [] as string[] };
    schemaChanges(old.spec.versions[0].schema.openAPIV3Schema, next.spec.versions[0].schema.openAPIV3Schema, '', out);
    expect(out.breaking.filter((change) => !Object.keys(TIGHTENED).some((path) => change.startsWith(`${path}:`)))).toEqual([]);
    console.log(`[compat] CRD fields added since v0.2: ${out.added.join(', ') || '(none)'}`);
  });
});
