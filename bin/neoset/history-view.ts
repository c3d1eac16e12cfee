// `rollout history`: one row per revision, or one revision's pod template (--revision).
import { stringify } from 'yaml';
import type { NeoSet } from '../../shared/api/neoset.ts';
import type { ControllerRevision } from '../../shared/core/objects.ts';
import { ref } from './neosets.ts';
import { changeCauseOf, templateOf } from '../../shared/core/revisions/rollback.ts';
import { imagesOf } from './revisions.ts';
import { dataFormatOf } from '../../shared/core/revisions/data-format.ts';
import { formatTable } from './table.ts';

/** "current" (status.currentRevision, the stable one) and/or "update" (status.updateRevision, spec.template's). */
function roleOf(neoset: NeoSet, r: ControllerRevision): string {
  const roles = [];
  if (neoset.status?.currentRevision === r.metadata.name) roles.push('current');
  if (neoset.status?.updateRevision === r.metadata.name) roles.push('update');
  return roles.join(',');
}

/** The data format the revision's template declares (SPEC §4.7), or <none>. */
const dataFormat = (r: ControllerRevision) => String(dataFormatOf(templateOf(r)) ?? '<none>');

export function formatHistory(neoset: NeoSet, revisions: ControllerRevision[]): string {
  const rows = revisions.map((r) => [String(r.revision), r.metadata.name, roleOf(neoset, r), imagesOf(templateOf(r)), dataFormat(r), changeCauseOf(r) ?? '<none>']);
  return `${ref(neoset.metadata.name)}\n${formatTable([['REVISION', 'NAME', 'STATUS', 'IMAGES', 'DATA-FORMAT', 'CHANGE-CAUSE'], ...rows])}`;
}

export function formatRevision(neoset: NeoSet, r: ControllerRevision): string {
  const role = roleOf(neoset, r);
  const lines = [
    `${ref(neoset.metadata.name)} with revision #${r.revision}${role ? ` (${role.replace(',', ', ')})` : ''}`,
    `Name:         ${r.metadata.name}`,
    `Images:       ${imagesOf(templateOf(r))}`,
    `Data format:  ${dataFormat(r)}`,
    `Change-cause: ${changeCauseOf(r) ?? '<none>'}`,
    'Pod Template:',
    stringify(templateOf(r)).trimEnd().replace(/^/gm, '  '),
  ];
  return `${lines.join('\n')}\n`;
}
