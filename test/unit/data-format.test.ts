// Data formats (SPEC §4.7 [v0.3]): the pure rule, admission's verdict through the hono app (the pods'
// formats handed in as the API server would answer them), and the reads of pods and revisions.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { createApp } from '../../functions/admission/app.ts';
import { apiReadFormatsRan } from '../../functions/admission/data-format.ts';
import { limitsFromEnv } from '../../shared/admission/limits.ts';
import { dataFormatOf, downgradeOf, formatsRan, parseDowngrade, revisionFormat, type FormatsRanInput } from '../../shared/core/revisions/data-format.ts';
import { ApiError, type KubeClient } from '../../shared/k8s/client.ts';
import { CASE_ENV, validNeoSet } from './admission-cases.ts';
import { FROM_ANYONE, post, review, stubDryRun } from './admission-review.ts';
import { NeoSet } from '../../shared/api/neoset.ts';
import { formatUndoDryRun } from '../../bin/neoset/undo-view.ts';
import { neoset as fixtureNeoSet, revision } from './plugin-fixtures.ts';

const FORMAT = 'neo.io/data-format';
const ACK = 'neoset.neo.io/data-format-downgrade';
const withFormat = (format: string | undefined) => ({ metadata: { labels: { app: 'db' }, ...(format === undefined ? {} : { annotations: { [FORMAT]: format } }) }, spec: { containers: [] } });

/** db: revision 1 (format 2) is currentRevision, revision 2 (format 3) runs on db-1 and db-2. */
const input: FormatsRanInput = {
  pods: [
    { name: 'db-2', revision: 'db-r2' },
    { name: 'db-0', revision: 'db-r1' },
    { name: 'db-1', revision: 'db-r2' },
    { name: 'db-3', revision: 'db-gone' },
  ],
  revisions: [
    { name: 'db-r1', revision: 1, format: 2 },
    { name: 'db-r2', revision: 2, format: 3 },
    { name: 'db-r0', revision: 3, format: null },
  ],
  currentRevision: 'db-r1',
  updateRevision: 'db-r2',
};

describe('the rule (shared/core/revisions/data-format.ts)', () => {
  it('reads a declared format; anything but a non-negative integer without leading zeros is no format', () => {
    expect(dataFormatOf(withFormat('3'))).toBe(3);
    expect(dataFormatOf(withFormat('0'))).toBe(0);
    for (const bad of ['03', '-1', '1.5', ' 3', 'three', '1234567890', '']) expect(dataFormatOf(withFormat(bad)), bad).toBeNull();
    expect(dataFormatOf(withFormat(undefined))).toBeNull();
    expect(dataFormatOf(undefined)).toBeNull();
  });

  it('what ran: one entry per revision that declares a format, highest first, pods in ordinal order; undeclared and missing revisions count for nothing', () => {
    expect(formatsRan(input)).toEqual([
      { format: 3, revision: 'db-r2', number: 2, pods: ['db-1', 'db-2'], status: ['updateRevision'] },
      { format: 2, revision: 'db-r1', number: 1, pods: ['db-0'], status: ['currentRevision'] },
    ]);
  });

  it('a lower declared format is a downgrade from the highest that ran; equal, higher or undeclared is none', () => {
    const ran = formatsRan(input);
    expect(downgradeOf(2, ran)).toEqual({ from: 3, to: 2 });
    expect(downgradeOf(0, ran)).toEqual({ from: 3, to: 0 });
    expect(downgradeOf(3, ran)).toBeNull();
    expect(downgradeOf(4, ran)).toBeNull();
    expect(downgradeOf(null, ran)).toBeNull();
    expect(downgradeOf(1, [])).toBeNull();
  });

  it('a revision named by status counts even when no pod runs it (the rollout may be writing it now)', () => {
    const ran = formatsRan({ ...input, pods: [{ name: 'db-0', revision: 'db-r1' }] });
    expect(ran[0]).toEqual({ format: 3, revision: 'db-r2', number: 2, pods: [], status: ['updateRevision'] });
    expect(downgradeOf(2, ran)).toEqual({ from: 3, to: 2 });
  });

  it('parses the acknowledgement "FROM->TO" only', () => {
    expect(parseDowngrade('3->2')).toEqual({ from: 3, to: 2 });
    for (const bad of ['3 -> 2', '3->', '->2', '3-2', '03->2', 'yes', '']) expect(parseDowngrade(bad), bad).toBeNull();
    expect(parseDowngrade(undefined)).toBeNull();
  });
});

// --- admission -------------------------------------------------------------------------------------

const silent = pino({ level: 'silent' });

/** The stored NeoSet db (format 3 on its pods) and an UPDATE to `format`, optionally acknowledged. */
function update(format: string | undefined, ack?: string) {
  const old = validNeoSet('db');
  old.metadata.uid = 'uid-db';
  old.spec.template.metadata.annotations = { [FORMAT]: '3' };
  old.status = { currentRevision: 'db-r1', updateRevision: 'db-r2' };
  const next = structuredClone(old);
  next.spec.template.spec.containers[0].image = 'nginx:1.26';
  next.spec.template.metadata.annotations = format === undefined ? {} : { [FORMAT]: format };
  if (ack !== undefined) next.metadata.annotations = { [ACK]: ack };
  delete next.status;
  return review('UPDATE', next, old);
}

function appReading(read: (n: NeoSet) => Promise<ReturnType<typeof formatsRan>>, seen: NeoSet[] = []) {
  return createApp({
    dryRunPod: stubDryRun,
    limits: limitsFromEnv(CASE_ENV),
    logger: silent,
    readFormatsRan: async (n) => {
      seen.push(n);
      return read(n);
    },
  });
}

describe('admission (/validate)', () => {
  const app = appReading(async (n) => formatsRan({ ...input, currentRevision: n.status?.currentRevision, updateRevision: n.status?.updateRevision }));

  it('refuses a lower format than pods ran, naming both formats, the pods, the revision and the annotation that would let it through', async () => {
    const { json } = await post(app, '/validate', update('2'));
    expect(json.response.allowed).toBe(false);
    expect(json.response.status.code).toBe(422);
    expect(json.response.status.message).toBe(
      'spec.template.metadata.annotations[neo.io/data-format]: "2" is lower than "3" that pods db-1, db-2 ran (revision 2); an in-place rollback keeps their volumes, which format 3 wrote and an older version may not read: set annotation neoset.neo.io/data-format-downgrade: "3->2" on the NeoSet to proceed (kubectl neoset rollout undo --accept-data-format-downgrade)',
    );
  });

  it('allows it with the acknowledgement of exactly that downgrade, and says so in a warning', async () => {
    const { json } = await post(app, '/validate', update('2', '3->2'));
    expect(json.response.allowed).toBe(true);
    expect(json.response.warnings).toEqual(['data format downgrade 3->2 accepted (neoset.neo.io/data-format-downgrade): "3" is the format that pods db-1, db-2 ran (revision 2); their volumes are kept']);
  });

  it('refuses it when the acknowledgement names another downgrade', async () => {
    const { json } = await post(app, '/validate', update('1', '3->2'));
    expect(json.response.allowed).toBe(false);
    expect(json.response.status.message).toContain('(neoset.neo.io/data-format-downgrade is "3->2", not this downgrade): set annotation neoset.neo.io/data-format-downgrade: "3->1"');
  });

  it('allows the same or a higher format without a word, and an undeclared one with a warning', async () => {
    for (const format of ['3', '4']) expect((await post(app, '/validate', update(format))).json.response).toEqual({ uid: expect.any(String), allowed: true });
    const { json } = await post(app, '/validate', update(undefined));
    expect(json.response.allowed).toBe(true);
    expect(json.response.warnings).toEqual([
      'spec.template.metadata.annotations[neo.io/data-format] is not set; "3" is the data format that pods db-1, db-2 ran (revision 2): whether this change lowers it is unknown',
    ]);
  });

  it('judges with the stored status (the revisions reconcile last wrote), and reads nothing for an UPDATE that leaves the template alone', async () => {
    const seen: NeoSet[] = [];
    const counting = appReading(async () => [], seen);
    await post(counting, '/validate', update('2'));
    expect(seen.map((n) => n.status)).toEqual([expect.objectContaining({ currentRevision: 'db-r1', updateRevision: 'db-r2' })]);
    const body = update('3');
    body.request.object = structuredClone(body.request.oldObject);
    (body.request.object as any).spec.replicas = 4;
    await post(counting, '/validate', body);
    expect(seen).toHaveLength(1);
  });

  it('refuses a declared format with 503 when the pods cannot be read (fail closed, retry), and only warns an undeclared one', async () => {
    const failing = appReading(async () => {
      throw new ApiError('GET', '/api/v1/namespaces/default/pods', 403, 'Forbidden', 'pods is forbidden');
    });
    const declared = await post(failing, '/validate', update('2'));
    expect(declared.json.response.allowed).toBe(false);
    expect(declared.json.response.status).toEqual({
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'spec.template.metadata.annotations[neo.io/data-format]: cannot check which data formats the pods ran now (the API server answered 403 Forbidden: admission may not list pods or controllerrevisions); retry',
    });
    const undeclared = await post(failing, '/validate', update(undefined));
    expect(undeclared.json.response.allowed).toBe(true);
    expect(undeclared.json.response.warnings).toEqual([
      'spec.template.metadata.annotations[neo.io/data-format]: which data formats the pods ran was not checked (the API server answered 403 Forbidden: admission may not list pods or controllerrevisions)',
    ]);
    const thrown = appReading(async () => {
      throw new TypeError('boom');
    });
    expect((await post(thrown, '/validate', update('2'))).json.response.status.code).toBe(503);
  });
});

// SPEC §2.5: with no client CA, admission authenticates nobody and request.namespace may be any
// tenant's: what was read there (pods, revisions, formats) is not told, the field and the rule are.
describe('admission (/validate) to a caller it cannot authenticate', () => {
  const app = appReading(async (n) => formatsRan({ ...input, currentRevision: n.status?.currentRevision, updateRevision: n.status?.updateRevision }));
  /** Whatever the answer says, nothing of what was read: pod names, revision numbers, formats. */
  const readNothing = (text: string) => expect(text).not.toMatch(/db-[0-3]|revision [12]|"3"/);

  it('refuses a lower format naming the field and the rule, not the pods, revision or formats that ran', async () => {
    const { response } = (await post(app, '/validate', update('2'), FROM_ANYONE)).json;
    expect(response.allowed).toBe(false);
    expect(response.status.message).toBe(
      `spec.template.metadata.annotations[${FORMAT}]: lower than a data format this NeoSet's pods ran (an in-place rollback keeps their volumes): set metadata.annotations[${ACK}] to the downgrade "FROM->TO" to proceed (kubectl neoset rollout undo --accept-data-format-downgrade)`,
    );
    readNothing(response.status.message);
  });

  it('warns of an accepted downgrade and of an undeclared format by the rule alone', async () => {
    for (const [format, ack] of [['2', '3->2'], [undefined, undefined]] as const) {
      const { response } = (await post(app, '/validate', update(format, ack), FROM_ANYONE)).json;
      expect(response.allowed).toBe(true);
      expect(response.warnings).toHaveLength(1);
      readNothing(response.warnings[0]);
    }
  });
});

// --- the reads -------------------------------------------------------------------------------------

describe('apiReadFormatsRan', () => {
  it('pages through pods and revisions by the NeoSet label, keeps only what the NeoSet controls or adopts, and combines them with status', async () => {
    const owner = (uid: string) => [{ apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', name: 'db', uid, controller: true }];
    const pod = (name: string, revision: string, uid = 'uid-db') => ({ metadata: { name, labels: { app: 'db', 'controller-revision-hash': revision }, ownerReferences: owner(uid) } });
    const rev = (name: string, n: number, format: string, uid = 'uid-db') => ({ metadata: { name, ownerReferences: owner(uid) }, revision: n, data: { spec: { template: withFormat(format) } } });
    const calls: string[] = [];
    const client: KubeClient = {
      async request(verb, path, opts) {
        calls.push(`${verb} ${path} ${JSON.stringify(opts?.query)}`);
        if (path.endsWith('/pods')) {
          return opts?.query?.continue === undefined
            ? ({ items: [pod('db-0', 'db-r1'), pod('db-1', 'db-r2')], metadata: { continue: 'next' } } as never)
            : ({ items: [pod('db-2', 'db-r2', 'uid-namesake')], metadata: {} } as never);
        }
        return { items: [rev('db-r1', 1, '2'), rev('db-r2', 2, '3'), rev('db-rx', 3, '9', 'uid-namesake')] } as never;
      },
    };
    const neoset = NeoSet.parse({ ...validNeoSet('db'), metadata: { name: 'db', namespace: 'ns', uid: 'uid-db' }, status: { currentRevision: 'db-r1' } });
    const ran = await apiReadFormatsRan(client)(neoset, 'ns', new AbortController().signal);
    expect(ran).toEqual([
      { format: 3, revision: 'db-r2', number: 2, pods: ['db-1'], status: [] },
      { format: 2, revision: 'db-r1', number: 1, pods: ['db-0'], status: ['currentRevision'] },
    ]);
    expect(calls.sort()).toEqual([
      'GET /api/v1/namespaces/ns/pods {"labelSelector":"neoset.neo.io/name=db","limit":500,"continue":"next"}',
      'GET /api/v1/namespaces/ns/pods {"labelSelector":"neoset.neo.io/name=db","limit":500}',
      'GET /apis/apps/v1/namespaces/ns/controllerrevisions {"labelSelector":"neoset.neo.io/name=db","limit":500}',
    ]);
  });
});

// --- the plugin's `rollout undo --dry-run` report ------------------------------------------------------

describe('formatUndoDryRun', () => {
  const rev = (n: number, image: string, format?: string) => {
    const r = revision(n, image);
    if (format !== undefined) (r.data.spec.template as { metadata: Record<string, unknown> }).metadata.annotations = { [FORMAT]: format };
    return r;
  };
  const revs = [rev(1, 'mysql:8.0', '2'), rev(2, 'mysql:8.4', '3'), rev(3, 'mysql:8.4-debug', '3')];
  const pods = [
    { name: 'mysql-0', revision: 'mysql-rev1' },
    { name: 'mysql-1', revision: 'mysql-rev2' },
    { name: 'mysql-2', revision: 'mysql-rev2' },
  ];
  const n = fixtureNeoSet({ replicas: 3, image: 'mysql:8.4', status: { currentRevision: 'mysql-rev1', updateRevision: 'mysql-rev2' }, updateStrategy: { partition: 0 } });
  const ran = formatsRan({ pods, revisions: revs.map(revisionFormat), currentRevision: 'mysql-rev1', updateRevision: 'mysql-rev2' });

  it('names the revision, images, the downgrade, each pod\'s fate and admission\'s answer', () => {
    expect(formatUndoDryRun({ neoset: n, target: revs[0], revisions: revs, pods, ran, downgrade: { from: 3, to: 2 }, refusal: 'admission webhook "validate.neosets.neo.io" denied the request: …' })).toBe(
      [
        'neoset.neo.io/mysql rollback to revision 1 (server dry run):',
        '  Template:     revision 1 (mysql-rev1)',
        '  Images:       main=mysql:8.0 (now main=mysql:8.4)',
        '  Data format:  "3" (pods mysql-1, mysql-2 ran (revision 2)) -> "2": a DOWNGRADE; their volumes are kept, not accepted (--accept-data-format-downgrade sets neoset.neo.io/data-format-downgrade: "3->2")',
        '  Pods:         mysql-2, mysql-1 patched in place from revision 2; mysql-0 already on revision 1',
        '  Admission:    would refuse it: admission webhook "validate.neosets.neo.io" denied the request: …',
      ].join('\n'),
    );
  });

  it('says an accepted downgrade, no downgrade, and pods held back by the partition or recreated', () => {
    const accepted = formatUndoDryRun({ neoset: n, target: revs[0], revisions: revs, pods, ran, downgrade: { from: 3, to: 2 }, acknowledged: '3->2', refusal: null });
    expect(accepted).toContain('a DOWNGRADE; their volumes are kept, accepted (annotation neoset.neo.io/data-format-downgrade: "3->2")');
    expect(accepted).toContain('  Admission:    would allow it');
    const partitioned = fixtureNeoSet({ replicas: 3, image: 'mysql:8.0', updateStrategy: { partition: 2, type: 'ReCreate' } });
    const up = formatUndoDryRun({ neoset: partitioned, target: revs[2], revisions: revs, pods, ran, downgrade: null, refusal: null });
    expect(up).toContain('  Data format:  "3" (pods mysql-1, mysql-2 ran (revision 2)) -> "3"\n');
    expect(up).toContain('  Pods:         mysql-2 recreated from revision 2; mysql-1, mysql-0 held back by partition 2');
  });
});
