// What `rollout undo --dry-run` prints (SPEC §4.7): the revision's template and images, the data
// format change, what happens to each pod, and admission's answer to the same write sent with
// dryRun=All. The pods' fate follows §4.4: ordinals >= partition move to the revision, in place when
// the change from their revision allows it (template-diff.ts, the rule reconcile uses), else recreated.
import type { NeoSet } from '../../shared/api/neoset.ts';
import { ANNOTATION_DATA_FORMAT_DOWNGRADE as ACK, dataFormatOf, describeHolders, highestRan, type Downgrade, type FormatRan, type PodOnRevision } from '../../shared/core/revisions/data-format.ts';
import { templateOf } from '../../shared/core/revisions/rollback.ts';
import { templateChange } from '../../shared/core/revisions/template-diff.ts';
import { ordinalPositions, ordinalsInRange } from '../../shared/core/ordinals.ts';
import type { ControllerRevision } from '../../shared/core/objects.ts';
import { ref } from './neosets.ts';
import { imagesOf } from './revisions.ts';

export interface UndoDryRun {
  neoset: NeoSet;
  target: ControllerRevision;
  revisions: ControllerRevision[];
  pods: PodOnRevision[];
  ran: FormatRan[];
  downgrade: Downgrade | null;
  /** The acknowledgement the write sets ("3->2"), if any. */
  acknowledged?: string;
  /** Admission's (or the API server's) refusal of the dry-run write; null: it would be stored. */
  refusal: string | null;
}

const ordinalOf = (name: string) => Number(/-(\d+)$/.exec(name)?.[1] ?? -1);
const numberOf = (revisions: ControllerRevision[], name: string | undefined) => {
  const r = revisions.find((x) => x.metadata.name === name);
  return r ? `revision ${r.revision}` : `revision ${name ?? '<none>'} (not in the history)`;
};

function dataFormatLine(d: UndoDryRun): string {
  const to = dataFormatOf(templateOf(d.target));
  const highest = highestRan(d.ran);
  const target = to === null ? `revision ${d.target.revision} declares none` : `"${to}"`;
  if (highest === null) return `${target} (no declared format ran)`;
  const from = `"${highest.format}" (${describeHolders(highest.holders)})`;
  if (to === null) return `${from} -> ${target}: whether this lowers it is unknown`;
  if (d.downgrade === null) return `${from} -> ${target}`;
  const acked = d.acknowledged ? `, accepted (annotation ${ACK}: "${d.acknowledged}")` : `, not accepted (--accept-data-format-downgrade sets ${ACK}: "${d.downgrade.from}->${d.downgrade.to}")`;
  return `${from} -> ${target}: a DOWNGRADE; their volumes are kept${acked}`;
}

/** Each pod's fate, grouped: "mysql-4, mysql-3 patched in place from revision 2; mysql-0 already on revision 1". */
function podsLine(d: UndoDryRun): string {
  const { spec } = d.neoset;
  const strategy = spec.updateStrategy.type;
  const partition = spec.updateStrategy.partition;
  const groups = new Map<string, string[]>();
  const put = (what: string, pod: string) => groups.set(what, [...(groups.get(what) ?? []), pod]);
  const to = templateOf(d.target);
  // §4.12: the partition counts positions among the ordinals in range (start, reserveOrdinals).
  const positions = ordinalPositions(ordinalsInRange(spec));
  for (const pod of [...d.pods].sort((a, b) => ordinalOf(b.name) - ordinalOf(a.name))) {
    const from = d.revisions.find((r) => r.metadata.name === pod.revision);
    if (pod.revision === d.target.metadata.name) put(`already on revision ${d.target.revision}`, pod.name);
    else if ((positions.get(ordinalOf(pod.name)) ?? Infinity) < partition) put(`held back by partition ${partition}`, pod.name);
    else if (strategy === 'OnDelete') put('left as they are (OnDelete: updated when deleted)', pod.name);
    else if (strategy === 'ReCreate') put(`recreated from ${numberOf(d.revisions, pod.revision)}`, pod.name);
    else if (from && templateChange(templateOf(from), to).inPlace) put(`patched in place from ${numberOf(d.revisions, pod.revision)}`, pod.name);
    else if (strategy === 'InPlaceOnly') put(`not updatable in place from ${numberOf(d.revisions, pod.revision)} (InPlaceOnly)`, pod.name);
    else put(`recreated from ${numberOf(d.revisions, pod.revision)}`, pod.name);
  }
  if (groups.size === 0) return 'none';
  return [...groups].map(([what, pods]) => `${pods.join(', ')} ${what}`).join('; ');
}

export function formatUndoDryRun(d: UndoDryRun): string {
  const current = imagesOf(d.neoset.spec.template);
  const lines = [
    `${ref(d.neoset.metadata.name)} rollback to revision ${d.target.revision} (server dry run):`,
    `  Template:     revision ${d.target.revision} (${d.target.metadata.name})`,
    `  Images:       ${imagesOf(templateOf(d.target))} (now ${current})`,
    `  Data format:  ${dataFormatLine(d)}`,
    `  Pods:         ${podsLine(d)}`,
    `  Admission:    ${d.refusal === null ? 'would allow it' : `would refuse it: ${d.refusal}`}`,
  ];
  return lines.join('\n');
}
