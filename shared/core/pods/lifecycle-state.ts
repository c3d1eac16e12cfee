// The update-hook facts a pod and its NeoSet carry (SPEC §4.10): the pod's lifecycle state (label
// neoset.neo.io/lifecycle-state) and whether the NeoSet has hooks at all. Facts only, read by the
// budget, the status and pod creation; the handshake that moves the state is hooks/lifecycle.ts.
import { LABEL_LIFECYCLE_STATE } from '../../api/names.ts';
import type { NeoSet } from '../../api/neoset.ts';
import type { Pod } from '../objects.ts';
import type { LifecycleState } from '../plan.ts';

export function lifecycleState(pod: Pod): LifecycleState | null {
  const s = pod.metadata.labels?.[LABEL_LIFECYCLE_STATE];
  return s === 'Normal' || s === 'PreparingUpdate' || s === 'Updating' || s === 'Updated' ? s : null;
}

/** A pod between PreparingUpdate and Normal: it holds a budget slot (§4.10). */
export function inHooks(pod: Pod): boolean {
  const s = lifecycleState(pod);
  return s !== null && s !== 'Normal';
}

/** The NeoSet has update hooks: its pods are created Normal, and every update goes through PreparingUpdate. */
export function hasHooks(neoset: Pick<NeoSet, 'spec'>): boolean {
  return neoset.spec.lifecycle !== undefined && (neoset.spec.lifecycle.preUpdate !== undefined || neoset.spec.lifecycle.postUpdate !== undefined);
}
