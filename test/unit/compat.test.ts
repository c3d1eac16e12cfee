// Upgrades that write nothing (issue 22 §2, SPEC §4.2 "a new release decides the state an older one
// left with zero writes"), after the StatefulSet controller's stateful_set_compatibility_test.go:
// each fixture is a state the previous release's functions left on a real control plane
// (test/fixtures/compat/v0.2, captured by test/compat/capture.ts). Decided by this release's core:
//  * every revision v0.2 made is named as this release would name it (the pinned hash,
//    revision-hash.test.ts): two versions deciding one new template make one revision, not two;
//  * at the capture time, the plan makes no write — no action, no status (or a status differing from
//    the stored one only in NEW_STATUS_FIELDS, the fields this release adds, listed by name);
//  * at the capture time and later (each time the previous release's own decision was recorded:
//    10 s, 1 h 1 min after), the actions are the ones the previous release decided: in-flight work —
//    a draining pod's patch, a timed pause's next step, a deadline — carried on as it would have.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NeoSet } from '../../shared/api/neoset.ts';
import { decide } from '../../shared/core/decide.ts';
import { canonicalJson } from '../../shared/core/json.ts';
import { revisionName } from '../../shared/core/revisions/revisions.ts';
import type { Snapshot } from '../../shared/core/snapshot.ts';
import { FIXTURE_STATES, type FixtureFile } from '../compat/fixture.ts';
import { PREVIOUS_RELEASE } from '../compat/previous-release.ts';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'compat', 'v0.2');

/**
 * Status fields this release adds over v0.2 that a first decision may write into a status v0.2
 * wrote. None: v0.3 adds no status field (a new one goes here, by name, with the release that adds it).
 */
const NEW_STATUS_FIELDS: string[] = [];

const fixtures = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as FixtureFile);

function snapshotOf(f: FixtureFile): Snapshot {
  return structuredClone({ neoset: NeoSet.parse(f.neoset), pods: f.pods, revisions: f.revisions, pvcs: f.pvcs });
}

/**
 * The top-level status fields in which `next` differs from `stored`; not observedResourceVersions,
 * which the applier records with each status write (decide() leaves it out).
 */
function changedStatusFields(stored: Record<string, unknown>, next: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(stored), ...Object.keys(next)])].filter((k) => k !== 'observedResourceVersions').sort();
  return keys.filter((k) => canonicalJson(stored[k]) !== canonicalJson(next[k]));
}

describe('the compatibility fixtures', () => {
  it(`cover every state of issue 22 §2, all captured from ${PREVIOUS_RELEASE.slice(0, 7)}`, () => {
    expect(fixtures.map((f) => f.state).sort()).toEqual([...FIXTURE_STATES].sort());
    for (const f of fixtures) expect(f.commit).toBe(PREVIOUS_RELEASE);
  });
});

describe.each(fixtures.map((f) => [f.state, f] as const))('%s, left by v0.2', (_state, f) => {
  const at = (afterMs: number) => new Date(Date.parse(f.capturedAt) + afterMs);

  it('each revision is named as this release names its template: a new template is one revision, whichever version makes it', () => {
    const neoset = NeoSet.parse(f.neoset);
    for (const r of f.revisions) expect(revisionName(neoset.metadata.name, r.data.spec.template, neoset.status?.collisionCount ?? 0)).toBe(r.metadata.name);
  });

  it('decided by this release at the capture time: zero writes', () => {
    const plan = decide(snapshotOf(f), at(0));
    // An Event v0.2 posts again at every decision (the applier posts it once per key) is not a write
    // of this release's making: it must be the one v0.2 decided, nothing more.
    const previous = f.previousDecisions.find((d) => d.afterMs === 0)!;
    const writes = plan.actions.filter((a) => a.kind !== 'recordEvent');
    expect(writes).toEqual([]);
    expect(canonicalJson(plan.actions)).toBe(canonicalJson(previous.actions));
    const stored = (f.neoset as { status?: Record<string, unknown> }).status ?? {};
    if (plan.status !== null) expect(changedStatusFields(stored, plan.status as Record<string, unknown>)).toEqual(NEW_STATUS_FIELDS);
    expect(plan.claim).toBe(false);
  });

  it.each(f.previousDecisions.map((d) => [d.afterMs, d] as const))('%i ms later: the actions v0.2 decided, the same status', (afterMs, previous) => {
    const plan = decide(snapshotOf(f), at(afterMs));
    expect(canonicalJson(plan.actions)).toBe(canonicalJson(previous.actions));
    expect(canonicalJson(plan.status)).toBe(canonicalJson(previous.status));
    expect(plan.requeueAfter).toBe(previous.requeueAfter);
  });
});
