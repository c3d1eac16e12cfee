// Admission's data-format rules (SPEC §4.7 [v0.3]). Two parts: the annotations' shape, checked on
// every write like any field (neosetIssues), and the downgrade rule, judged against what the pods ran
// — which only the API server knows, so the edge reads it (functions/admission/data-format.ts) and
// hands it here. The rule itself is the core's (shared/core/revisions/data-format.ts).
import type { NeoSet } from '../api/neoset.ts';
import {
  ANNOTATION_DATA_FORMAT as FORMAT,
  ANNOTATION_DATA_FORMAT_DOWNGRADE as ACK,
  dataFormatOf,
  describeHolders,
  downgradeOf,
  downgradeValue,
  highestRan,
  isDataFormat,
  parseDowngrade,
  type FormatRan,
} from '../core/revisions/data-format.ts';
import { issue, type Issue } from './issue.ts';

export const FORMAT_PATH = `spec.template.metadata.annotations[${FORMAT}]`;
export const ACK_PATH = `metadata.annotations[${ACK}]`;

/** The annotations' shape: a format is a non-negative integer, an acknowledgement "FROM->TO" (FROM above TO). */
export function dataFormatIssues(neoset: NeoSet): Issue[] {
  const issues: Issue[] = [];
  const format = neoset.spec.template.metadata?.annotations?.[FORMAT];
  if (format !== undefined && !isDataFormat(format)) {
    issues.push(issue(FORMAT_PATH, `${JSON.stringify(format)} must be a non-negative integer such as "3" (the data format this template's version writes)`));
  }
  const ack = neoset.metadata.annotations?.[ACK];
  if (ack !== undefined) {
    const d = parseDowngrade(ack);
    if (d === null || d.from <= d.to) issues.push(issue(ACK_PATH, `${JSON.stringify(ack)} must be FROM->TO with FROM above TO, e.g. "3->2" (the data format downgrade you accept)`));
  }
  return issues;
}

export interface DataFormatVerdict {
  issues: Issue[];
  warnings: string[];
}

/**
 * Would this NeoSet's template run a lower data format than one its pods ran? Refused, naming both
 * formats and the pods, unless the NeoSet carries the acknowledgement of exactly that downgrade (which
 * stays on the object: the record). A template that declares no format cannot be judged: a warning
 * when a pod ran a declared one.
 */
export function judgeDataFormat(neoset: NeoSet, ran: FormatRan[]): DataFormatVerdict {
  const format = dataFormatOf(neoset.spec.template);
  const highest = highestRan(ran);
  if (highest === null) return { issues: [], warnings: [] };
  const holders = describeHolders(highest.holders);
  if (format === null) {
    return { issues: [], warnings: [`${FORMAT_PATH} is not set; "${highest.format}" is the data format that ${holders}: whether this change lowers it is unknown`] };
  }
  const downgrade = downgradeOf(format, ran);
  if (downgrade === null) return { issues: [], warnings: [] };
  const wanted = downgradeValue(downgrade);
  const ack = neoset.metadata.annotations?.[ACK];
  if (ack === wanted) {
    return { issues: [], warnings: [`data format downgrade ${wanted} accepted (${ACK}): "${downgrade.from}" is the format that ${holders}; their volumes are kept`] };
  }
  const other = ack === undefined ? '' : ` (${ACK} is ${JSON.stringify(ack)}, not this downgrade)`;
  return {
    issues: [
      issue(
        FORMAT_PATH,
        `"${downgrade.to}" is lower than "${downgrade.from}" that ${holders}; an in-place rollback keeps their volumes, which format ${downgrade.from} wrote and an older version may not read${other}: set annotation ${ACK}: "${wanted}" on the NeoSet to proceed (kubectl neoset rollout undo --accept-data-format-downgrade)`,
      ),
    ],
    warnings: [],
  };
}
