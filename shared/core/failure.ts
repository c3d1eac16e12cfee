// Why a rollout is Failed (§4.6): the reason the Progressing condition and phase Failed carry, and
// the message that says which pod and what. One shape for every rule that fails a rollout: the
// in-place deadline and a refused resize (§4.4, §4.9), a hook's timeout (§4.10), InPlaceOnly's block
// (§4.4), a canary's analysis or abort (§4.11), a volume claim's resize (§4.12).
export type FailureReason = 'ProgressDeadlineExceeded' | 'InPlaceOnlyBlocked' | 'ResizeInfeasible' | 'HookTimeout' | 'AnalysisFailed' | 'Aborted' | 'VolumeResizeFailed';

export interface Failure {
  reason: FailureReason;
  message: string;
}
