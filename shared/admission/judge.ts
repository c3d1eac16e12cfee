// The whole admission decision as data (STYLE §1–2): rules and warnings, and — when the pod
// template could newly fail — the Pod that the edge must dry-run-create. No I/O here.
import type { NeoSet } from '../api/neoset.ts';
import type { Pod } from '../core/objects.ts';
import type { Issue } from './issue.ts';
import { sameJson } from '../core/json.ts';
import type { AdmissionLimits } from './limits.ts';
import { ordinalPod } from './pod.ts';
import { neosetName, quotaIssues, reviewIssues } from './validate.ts';
import { neosetWarnings } from './warnings.ts';

export interface Verdict {
  issues: Issue[];
  warnings: string[];
  /** Ordinal 0's Pod, to be created with dryRun=All; null: nothing the API server must re-check. */
  dryRunPod: Pod | null;
}

export interface NeoSetReview {
  namespace: string;
  neoset: NeoSet;
  /** The stored object on UPDATE; null on CREATE. */
  old: NeoSet | null;
}

/** What the pods are built from: when unchanged, an UPDATE cannot make the Pod invalid. */
const podInputs = (n: NeoSet) => ({
  name: n.metadata.name,
  template: n.spec.template,
  serviceName: n.spec.serviceName,
  volumeClaimTemplates: n.spec.volumeClaimTemplates,
});

export function judgeNeoSet(review: NeoSetReview, limits: AdmissionLimits): Verdict {
  const { neoset, old, namespace } = review;
  const issues = reviewIssues(neoset, old, limits);
  const warnings = neosetWarnings(neoset, old, limits);
  // An UPDATE that leaves the template alone skips the dry-run: besides saving a call, ordinal 0's
  // pod then exists and a tight ResourceQuota could refuse even a dry-run — neither should block
  // a change of, say, partition.
  const dryRun = issues.length === 0 && (old === null || !sameJson(podInputs(old), podInputs(neoset)));
  return { issues, warnings, dryRunPod: dryRun ? ordinalPod(neoset, neosetName(neoset), namespace, 0) : null };
}

/** `kubectl scale` and HPA write the scale subresource: the replicas quota holds there too, and so does its scale-down. */
export function judgeScale(replicas: number, oldReplicas: number | null, limits: AdmissionLimits): Verdict {
  return { issues: quotaIssues(replicas, oldReplicas, limits), warnings: [], dryRunPod: null };
}
