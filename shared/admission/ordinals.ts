// spec.ordinals.start and spec.reserveOrdinals (§4.12), refused with the field path: an entry that is
// neither an ordinal nor a range "a-b" with a <= b (OpenKruise's ParseRange; Kruise's controller then
// ignores the whole list, here admission refuses it), and a spec whose pods would need an ordinal past
// MAX_ORDINAL (the pod name <neoset>-<ordinal> must stay a DNS label). The zod schema has already
// bounded start and the number of entries; a reserved ordinal below start or far above the range
// reserves nothing now and is allowed (it may be meant for a later scale-up).
import { MAX_ORDINAL, type NeoSet } from '../api/neoset.ts';
import { lastOrdinal, parseReservedOrdinal, startOrdinal } from '../core/ordinals.ts';
import { issue, type Issue } from './issue.ts';

const PATH = 'spec.reserveOrdinals';

export function ordinalIssues(neoset: NeoSet): Issue[] {
  const { spec } = neoset;
  const issues: Issue[] = [];
  (spec.reserveOrdinals ?? []).forEach((entry, i) => {
    if (parseReservedOrdinal(entry) !== null) return;
    issues.push(issue(`${PATH}[${i}]`, `${JSON.stringify(entry)} must be an ordinal from 0 to ${MAX_ORDINAL} or a range "a-b" of them with a <= b (e.g. 3 or "3-5")`));
  });
  if (issues.length > 0) return issues;
  const last = lastOrdinal(spec);
  if (last > MAX_ORDINAL) {
    const path = spec.ordinals?.start ? 'spec.ordinals.start' : 'spec.replicas';
    issues.push(issue(path, `${spec.replicas} pods from ordinal ${startOrdinal(spec)} (reserved ordinals skipped) would need ordinal ${last}, over the limit of ${MAX_ORDINAL} (the pod name <name>-<ordinal> must fit in 63 characters)`));
  }
  return issues;
}
