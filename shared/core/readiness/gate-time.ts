// The lastTransitionTime NeoSet writes on its readiness gate (InPlaceUpdateReady). A drain (False)
// that a grace period will be counted from is stamped rounded UP to the second — metav1.Time has whole
// seconds, and a grace counted from a time rounded down could be up to a second short. With no grace
// period the stamp is the second it happens in, so that the image patch that follows at once (in the
// same invocation) is not "before" it.
// The decision stamps it (its own clock, the one the image patch's startedAt comes from), so the two
// are consistent when one invocation writes both.
import { rfc3339, rfc3339Ceil } from '../time.ts';

export function gateTransitionTime(status: 'True' | 'False', graceSeconds: number, nowMs: number): string {
  return status === 'False' && graceSeconds > 0 ? rfc3339Ceil(nowMs) : rfc3339(nowMs);
}
