// Whose object a pod or a revision is (§4.1): the rule every reader of the snapshot and the applier's
// adoption on a taken name share.
import type { NeoSet } from '../api/neoset.ts';
import type { ObjectMeta } from './objects.ts';
import { selects } from './selector.ts';

/**
 * Whose pod this is (§4.1): ours (controller ownerReference with our uid — labels alone can be
 * forged), an orphan we adopt (no controller, selected by spec.selector: the StatefulSet
 * controller's rule, e.g. after `kubectl delete --cascade=orphan` and a re-apply), or another's.
 */
export function controlOf(neoset: NeoSet, obj: { metadata: ObjectMeta }): 'ours' | 'orphan' | 'other' {
  const controller = obj.metadata.ownerReferences?.find((r) => r.controller);
  if (controller) return controller.uid === neoset.metadata.uid ? 'ours' : 'other';
  if (obj.metadata.deletionTimestamp) return 'other';
  return selects(neoset.spec.selector, obj.metadata.labels) ? 'orphan' : 'other';
}
