// Can a pod move from one template to another in place (§4.4)? Only when nothing but container
// images and template metadata labels/annotations differ. One implementation serves admission
// (InPlaceOnly refuses the rest) and the core (InPlaceIfPossible patches or recreates), so the two
// can never disagree: shared/admission/in-place-change.ts.
import type { PodTemplateSpec } from '../api/neoset.ts';
import { inPlaceChangeBlockers } from '../admission/in-place-change.ts';

export interface TemplateChange {
  /** Nothing differs beyond container images and template labels/annotations. */
  inPlace: boolean;
  /** The fields that differ beyond those, as API field paths (`spec.containers[0].env`): what InPlaceOnly names. */
  differences: string[];
}

export function templateChange(from: PodTemplateSpec, to: PodTemplateSpec): TemplateChange {
  const differences = inPlaceChangeBlockers(from, to);
  return { inPlace: differences.length === 0, differences };
}
