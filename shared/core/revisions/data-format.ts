// Data formats (SPEC §4.7 [v0.3]): an in-place rollback keeps the pods' volumes, so running a
// template that writes an older data format on pods whose volumes a newer format already wrote is
// what the seeds' chapter 1 warns of — the old code cannot read what the new code wrote. A template
// declares the format it writes in an annotation; this module reads it, works out the highest format
// the pods ran, and whether a template is a downgrade from it. No I/O: admission and the plugin read
// the pods and revisions and ask the same questions here, so the two can never disagree.
import type { ControllerRevision } from '../objects.ts';
import type { PodTemplateLike } from './template-diff.ts';

/** On spec.template.metadata.annotations: the data format this template's version writes ("3"). */
export const ANNOTATION_DATA_FORMAT = 'neo.io/data-format';
/** On the NeoSet's metadata.annotations: "FROM->TO", the user's acknowledgement of exactly that downgrade. */
export const ANNOTATION_DATA_FORMAT_DOWNGRADE = 'neoset.neo.io/data-format-downgrade';

/** A non-negative integer without leading zeros, at most 9 digits (a safe integer, and a short message). */
const FORMAT = /^(0|[1-9][0-9]{0,8})$/;
const DOWNGRADE = /^(0|[1-9][0-9]{0,8})->(0|[1-9][0-9]{0,8})$/;

export const isDataFormat = (value: string) => FORMAT.test(value);

/**
 * The data format a template declares; null when it declares none — or declares something admission
 * would refuse (a revision stored before admission checked the annotation): unknown either way.
 */
export function dataFormatOf(template: PodTemplateLike | undefined): number | null {
  const annotations = (template?.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations;
  const value = annotations?.[ANNOTATION_DATA_FORMAT];
  return typeof value === 'string' && FORMAT.test(value) ? Number(value) : null;
}

export interface Downgrade {
  from: number;
  to: number;
}

/** The acknowledgement annotation's value for a downgrade: "3->2". */
export const downgradeValue = (d: Downgrade) => `${d.from}->${d.to}`;

/** "3->2" → {from: 3, to: 2}; null for anything else (admission refuses a malformed one). */
export function parseDowngrade(value: string | undefined): Downgrade | null {
  const m = value === undefined ? null : DOWNGRADE.exec(value);
  return m ? { from: Number(m[1]), to: Number(m[2]) } : null;
}

/** A pod as far as formats go: its name and the revision it runs (its controller-revision-hash label). */
export interface PodOnRevision {
  name: string;
  revision: string | undefined;
}

/** A stored revision as far as formats go. */
export interface RevisionFormat {
  name: string;
  revision: number;
  format: number | null;
}

export const revisionFormat = (r: ControllerRevision): RevisionFormat => ({
  name: r.metadata.name,
  revision: r.revision,
  format: dataFormatOf(r.data?.spec?.template as PodTemplateLike | undefined),
});

/** Why a revision counts as run: pods run it now, and/or the NeoSet's status names it. */
export interface FormatRan {
  format: number;
  /** The revision's name and number (number null: named by status but not found among the revisions). */
  revision: string;
  number: number | null;
  /** The pods that run it now, by name (ordinal order). */
  pods: string[];
  /** status.currentRevision (every pod ran it when it was reached) and/or status.updateRevision. */
  status: ('currentRevision' | 'updateRevision')[];
}

export interface FormatsRanInput {
  pods: PodOnRevision[];
  revisions: RevisionFormat[];
  currentRevision?: string;
  updateRevision?: string;
}

const ordinalOrder = (a: string, b: string) => {
  const n = (s: string) => Number(/-(\d+)$/.exec(s)?.[1] ?? NaN);
  return n(a) - n(b) || a.localeCompare(b);
};

/**
 * The declared formats that pods run now, and those of status.currentRevision and updateRevision
 * (the stable revision every pod ran, and the one the rollout may be writing right now), one entry
 * per revision, highest format first. A pod on a revision that declares no format (or that is gone)
 * contributes nothing: its format is unknown.
 */
export function formatsRan(input: FormatsRanInput): FormatRan[] {
  const byName = new Map(input.revisions.map((r) => [r.name, r]));
  const ran = new Map<string, FormatRan>();
  const entry = (name: string) => {
    const r = byName.get(name);
    if (r?.format == null) return undefined;
    let e = ran.get(name);
    if (!e) ran.set(name, (e = { format: r.format, revision: name, number: r.revision, pods: [], status: [] }));
    return e;
  };
  for (const pod of input.pods) if (pod.revision !== undefined) entry(pod.revision)?.pods.push(pod.name);
  if (input.currentRevision) entry(input.currentRevision)?.status.push('currentRevision');
  if (input.updateRevision) entry(input.updateRevision)?.status.push('updateRevision');
  for (const e of ran.values()) e.pods.sort(ordinalOrder);
  return [...ran.values()].sort((a, b) => b.format - a.format || (b.number ?? 0) - (a.number ?? 0));
}

/** The highest format ran and the revisions that hold it; null when no declared format was ran. */
export function highestRan(ran: FormatRan[]): { format: number; holders: FormatRan[] } | null {
  if (ran.length === 0) return null;
  const format = ran[0].format;
  return { format, holders: ran.filter((r) => r.format === format) };
}

/** The downgrade a template with `format` would be from what ran; null when it is none (or unknown). */
export function downgradeOf(format: number | null, ran: FormatRan[]): Downgrade | null {
  const highest = highestRan(ran);
  return format !== null && highest !== null && format < highest.format ? { from: highest.format, to: format } : null;
}

const MAX_PODS_NAMED = 10;

/** "pods db-0, db-1 ran (revision 4)" / "revision 4 declares (status.updateRevision; no pod runs it now)". */
export function describeHolders(holders: FormatRan[]): string {
  const pods = holders.flatMap((h) => h.pods).sort(ordinalOrder);
  const numbers = holders.map((h) => (h.number === null ? h.revision : String(h.number)));
  const revisions = `revision${numbers.length > 1 ? 's' : ''} ${numbers.join(', ')}`;
  if (pods.length > 0) {
    const named = pods.slice(0, MAX_PODS_NAMED).join(', ') + (pods.length > MAX_PODS_NAMED ? ` and ${pods.length - MAX_PODS_NAMED} more` : '');
    return `pod${pods.length > 1 ? 's' : ''} ${named} ran (${revisions})`;
  }
  const status = [...new Set(holders.flatMap((h) => h.status))].map((s) => `status.${s}`).join(', ');
  return `${revisions} declares (${status}; no pod runs it now)`;
}
